"""Record the undefined symbols of the CUDA baselines' and adversarial candidates' objects, as nvcc
compiles them, into harness/tests/nvcc_symbols.json (which test_static_checks.py checks against the
binary check where nvcc is not installed). Run where nvcc is:

    /usr/bin/python3 -m tools.lab.record_nvcc_symbols
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.build.elf import read_elf

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "harness/tests/nvcc_symbols.json"
FLAGS = ["-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-Xcompiler", "-fPIC", "-c"]


def _version(cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()


def main():
    files = [REPO / "kernels/rmsnorm/baseline.cu"] + sorted((REPO / "harness/adversarial/cuda").glob("*.cu")) + \
        [REPO / "kernels/flash_attn_fwd/baseline.cu"]
    objects = {}
    with tempfile.TemporaryDirectory() as tmp:
        for src in files:
            obj = Path(tmp) / "kernel.o"
            done = subprocess.run(["nvcc", *FLAGS, str(src), "-o", str(obj)], capture_output=True, text=True)
            if done.returncode != 0:
                continue     # a candidate the source check refuses may not compile at all
            objects[str(src.relative_to(REPO))] = sorted(set(read_elf(obj).undefined()))
    lines = _version(["nvcc", "--version"])
    nvcc = lines[-2].strip() if len(lines) >= 2 else "nvcc"
    gxx = _version(["g++", "--version"])[0]
    data = {"recorded_with": f"{nvcc}; {gxx}",
            "how": "undefined symbols of kernel.o as harness/build/compile.py compiles each file (nvcc -O3 -std=c++17 "
                   "-gencode=arch=compute_90a,code=sm_90a -c); files that do not compile are left out",
            "objects": objects}
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(objects)} objects recorded in {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
