"""What a process is running: its threads and the shared libraries mapped into it (Linux /proc)."""

import os


def thread_ids():
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:  # not Linux: no thread accounting (documented in docs/harness.md)
        return set()


def thread_names(tids):
    names = []
    for tid in sorted(tids):
        try:
            with open(f"/proc/self/task/{tid}/comm") as fh:
                names.append(fh.read().strip())
        except OSError:
            names.append(f"tid {tid} (exited)")
    return names


def mapped_libraries():
    """Paths of shared objects mapped into this process."""
    libs = set()
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if ".so" in path.rsplit("/", 1)[-1]:
                        libs.add(path)
    except OSError:
        pass
    return libs
