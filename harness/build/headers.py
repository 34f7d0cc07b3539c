"""Header packs a task may ask for by name (`kernel.headers`), at the pinned version the set-up installs.

CUTLASS and CuTe (one repository, one include folder): scripts/setup.sh puts the pinned tag's
`include/` under `third_party/cutlass` (git-ignored) when it is missing; `KERNELSEEK_CUTLASS_DIR`
names another place (a GPU worker's carried copy). Nothing is fetched at evaluation time. The
compiler sees the folder read-only; the files it reads there count as system headers (their lines
may show in a log, the denylist still applies to what a candidate includes).
"""

import functools
import hashlib
import os
import re
from pathlib import Path

from ..errors import EnvironmentProblem

CUTLASS_VERSION = "4.7.0"
CUTLASS_TAG = "v" + CUTLASS_VERSION
REPO = Path(__file__).resolve().parents[2]
DEFAULT_CUTLASS = REPO / "third_party" / "cutlass"


def cutlass_root():
    """The CUTLASS folder in use (one with include/cutlass and include/cute), or EnvironmentProblem."""
    given = os.environ.get("KERNELSEEK_CUTLASS_DIR")
    root = Path(given) if given else DEFAULT_CUTLASS
    include = root / "include"
    if not (include / "cutlass" / "cutlass.h").is_file() or not (include / "cute" / "tensor.hpp").is_file():
        where = f"KERNELSEEK_CUTLASS_DIR={given}" if given else f"{DEFAULT_CUTLASS}"
        raise EnvironmentProblem(f"the task uses CUTLASS/CuTe headers (kernel.headers: [cutlass]) and {where} has "
                                 f"no include/cutlass/cutlass.h and include/cute/tensor.hpp: run scripts/setup.sh "
                                 f"(it installs CUTLASS {CUTLASS_TAG}) or point KERNELSEEK_CUTLASS_DIR at a CUTLASS "
                                 f"{CUTLASS_TAG} checkout")
    version = cutlass_version(include)
    if version != CUTLASS_VERSION:
        raise EnvironmentProblem(f"{include}: CUTLASS {version}, the harness is pinned to {CUTLASS_VERSION} "
                                 f"(scripts/setup.sh installs it; or set KERNELSEEK_CUTLASS_DIR)")
    return root.resolve()


def cutlass_version(include):
    try:
        text = (Path(include) / "cutlass" / "version.h").read_text(errors="replace")
    except OSError:
        return None
    parts = [re.search(rf"#define\s+CUTLASS_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts) if all(parts) else None


def include_dirs(packs):
    """The host folders of the named packs' headers, in order."""
    out = []
    for pack in packs:
        if pack == "cutlass":
            out.append(str(cutlass_root() / "include"))
        else:
            raise EnvironmentProblem(f"unknown header pack {pack!r}")
    return out


@functools.lru_cache(maxsize=None)
def tree_digest(folder):
    """sha256 over every file under `folder` (path, size, bytes): what the compile cache key takes of a
    task's include folder or a header pack, once per process."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            try:
                data = path.read_bytes()
            except OSError:
                continue
            h.update(str(path.relative_to(folder)).encode() + b"\0" + data + b"\0")
    return h.hexdigest()
