"""Parse the resource report of `nvcc -Xptxas -v` (registers, shared memory, spills per kernel)."""

import re

_COMPILING = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas(log):
    """Return {"kernels": [...], "registers", "smem_bytes", "spills"} from a ptxas -v log.

    The summary is the worst kernel (most registers, most static shared memory, largest spill
    stores + loads) because one heavy kernel limits occupancy whatever the others do. Shared memory
    here is static only: dynamic shared memory is chosen at launch time and never appears in ptxas.
    """
    kernels, current = [], None
    for line in log.splitlines():
        m = _COMPILING.search(line)
        if m:
            current = {"name": m.group(1), "arch": m.group(2), "registers": 0, "smem_bytes": 0,
                       "stack_bytes": 0, "spill_stores": 0, "spill_loads": 0}
            kernels.append(current)
            continue
        if current is None:
            continue
        m = _PROPS.search(line)
        if m:
            current["stack_bytes"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
        m = _USED.search(line)
        if m:
            current["registers"] = int(m.group(1))
            s = _SMEM.search(line)
            current["smem_bytes"] = int(s.group(1)) if s else 0
    if not kernels:
        return {"kernels": [], "registers": None, "smem_bytes": None, "spills": None}
    return {
        "kernels": kernels,
        "registers": max(k["registers"] for k in kernels),
        "smem_bytes": max(k["smem_bytes"] for k in kernels),
        "spills": max(k["spill_stores"] + k["spill_loads"] for k in kernels),
    }
