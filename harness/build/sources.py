"""A candidate's files: one source file, or a folder of sources and headers (multi-file C++/CUDA).

The harness reads the files once, into memory, and everything after that (the checks, the compile,
the cache key, the result's sha256) works on those bytes: a file changed afterwards is not used.
A folder is read without following a symbolic link, with a cap on files and bytes; files that are
neither sources nor headers are left out with a note (they could not be included anyway: the
compiler sees only what is written into its build directory).
"""

import hashlib
import os
from pathlib import Path

from ..errors import UsageError

SOURCE_SUFFIXES = {"cpp": (".cpp", ".cc", ".cxx"), "cuda": (".cu",)}
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".ipp", ".inc")
MAX_FILES = 64
MAX_TOTAL_BYTES = 4 << 20
# The name a single-file candidate is compiled under (what every earlier cache entry was built from).
SINGLE_NAME = {"cuda": "kernel.cu", "cpp": "kernel.cpp"}


def as_files(source, language):
    """{relative path: bytes}: a folder's files as read, or a single file's bytes under SINGLE_NAME."""
    if isinstance(source, dict):
        return dict(source)
    return {SINGLE_NAME[language]: source}


def is_folder(source):
    return isinstance(source, dict)


def sources_of(files, language):
    """The files that are compiled (each to an object), in a stable order."""
    return sorted(name for name in files if name.endswith(SOURCE_SUFFIXES[language]))


def digest(source):
    """sha256 of a candidate: a single file's bytes, or every file of a folder with its path."""
    if not isinstance(source, dict):
        return hashlib.sha256(source).hexdigest()
    h = hashlib.sha256(b"kernelseek-folder\0")
    for name in sorted(source):
        data = source[name]
        h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def read_folder(path, language):
    """({relative path: bytes}, notes) for a folder candidate. Raises UsageError when it cannot be one."""
    root = Path(path)
    if language not in SOURCE_SUFFIXES:
        raise UsageError(f"{root}: a {language} candidate is one file, not a folder")
    files, notes, total = {}, [], 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in sorted(filenames):
            full = Path(dirpath) / fname
            rel = full.relative_to(root).as_posix()
            if fname.startswith(".") or not fname.endswith(SOURCE_SUFFIXES[language] + HEADER_SUFFIXES):
                notes.append(f"candidate: {rel} left out (neither a source {'/'.join(SOURCE_SUFFIXES[language])} "
                             f"nor a header)")
                continue
            if full.is_symlink() or not full.is_file():
                raise UsageError(f"candidate: {rel} is a symbolic link or not a plain file")
            if " " in rel or "\\" in rel or not rel.isascii():
                raise UsageError(f"candidate: {rel!r}: file names are plain ASCII without spaces")
            data = full.read_bytes()
            total += len(data)
            files[rel] = data
            if len(files) > MAX_FILES or total > MAX_TOTAL_BYTES:
                raise UsageError(f"candidate folder {root}: more than {MAX_FILES} files or {MAX_TOTAL_BYTES >> 20} MiB")
    if not sources_of(files, language):
        raise UsageError(f"candidate folder {root} has no source file ({', '.join(SOURCE_SUFFIXES[language])})")
    return files, notes


def read_candidate(path, language):
    """(bytes or {relative path: bytes}, notes) for a candidate file or folder."""
    p = Path(path)
    if p.is_dir():
        return read_folder(p, language)
    if not p.is_file():
        raise UsageError(f"candidate file not found: {p}")
    return p.read_bytes(), []
