"""The CUDA driver layer the executors use (harness/executor/cuda_driver.py) against the toolkit's own
header and compiler, where they are installed: the structures ctypes passes must have cuda.h's
layout, and the pad kernel's PTX must be what nvcc makes of pad.cu. (Running them needs a GPU:
test_cuda.py and scripts/gpu/verify.sh on the GPU host.)"""

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.executor import cuda_driver

NVCC = shutil.which("nvcc")


def _cuda_include():
    for root in ("/usr/local/cuda/include", "/usr/include"):
        if (Path(root) / "cuda.h").is_file():
            return root
    return None


INCLUDE = _cuda_include()


@pytest.mark.skipif(INCLUDE is None or shutil.which("gcc") is None, reason="cuda.h or gcc not installed")
def test_structures_have_the_layout_of_cuda_h(tmp_path):
    src = tmp_path / "layout.c"
    src.write_text("""
#include <cuda.h>
#include <stddef.h>
#include <stdio.h>
int main(void) {
  printf("%zu %zu %zu %zu %zu %zu\\n", sizeof(CUmemAllocationProp), offsetof(CUmemAllocationProp, location),
         offsetof(CUmemAllocationProp, win32HandleMetaData), offsetof(CUmemAllocationProp, allocFlags),
         sizeof(CUmemAccessDesc), offsetof(CUmemAccessDesc, flags));
  printf("%d %d %d %d %d\\n", (int)CU_MEM_ALLOCATION_TYPE_PINNED, (int)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
         (int)CU_MEM_LOCATION_TYPE_DEVICE, (int)CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
         (int)CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
  printf("%d %d %d %lu\\n", (int)CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
         (int)CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, (int)CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
         (unsigned long)(size_t)CU_STREAM_LEGACY);
  return 0;
}
""")
    exe = tmp_path / "layout"
    subprocess.run(["gcc", f"-I{INCLUDE}", str(src), "-o", str(exe)], check=True, capture_output=True)
    sizes, enums, attrs = (list(map(int, line.split())) for line in
                           subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines())
    P, A = cuda_driver.AllocationProp, cuda_driver.AccessDesc
    assert sizes == [ctypes.sizeof(P), P.location.offset, P.win32HandleMetaData.offset, P.allocFlags.offset,
                     ctypes.sizeof(A), A.flags.offset]
    assert enums == [cuda_driver.CU_MEM_ALLOCATION_TYPE_PINNED, cuda_driver.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                     cuda_driver.CU_MEM_LOCATION_TYPE_DEVICE, cuda_driver.CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                     cuda_driver.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED]
    assert attrs == [cuda_driver.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                     cuda_driver.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                     cuda_driver.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cuda_driver.CU_STREAM_LEGACY]


def _body(ptx):
    """The PTX without nvcc's header comments (build id, version lines)."""
    return "\n".join(line for line in ptx.splitlines() if not line.startswith("//"))


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_pad_ptx_is_what_nvcc_makes_of_pad_cu(tmp_path):
    out = tmp_path / "pad.ptx"
    here = cuda_driver.PAD_PTX.parent
    subprocess.run([NVCC, "-ptx", "-arch=compute_75", str(here / "pad.cu"), "-o", str(out)], check=True,
                   capture_output=True)
    assert _body(out.read_text()) == _body(cuda_driver.PAD_PTX.read_text())
    assert re.search(r"\.entry kernelseek_pad\(", cuda_driver.PAD_PTX.read_text())
