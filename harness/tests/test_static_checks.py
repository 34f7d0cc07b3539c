"""ELF reading, denylist families, source and binary checks."""

import shutil
import subprocess
import textwrap

import pytest

from harness import denylist as dl
from harness.elf import ElfError, parse_elf, read_elf
from harness.static_checks import check_library, check_object, check_source, strip_comments
from harness.task import load_task

from .conftest import CPU_TASK, has_tool


@pytest.fixture(scope="module")
def task():
    return load_task(CPU_TASK)


def _compile(tmp_path, body, name="k.cpp", compiler="g++"):
    src = tmp_path / name
    src.write_text(textwrap.dedent(body))
    obj, lib = tmp_path / "k.o", tmp_path / "k.so"
    subprocess.run([compiler, "-O2", "-fPIC", "-c", str(src), "-o", str(obj)], check=True)
    subprocess.run([compiler, "-shared", str(obj), "-o", str(lib)], check=True)
    return read_elf(obj), read_elf(lib), obj, lib


def test_elf_reads_undefined_exports_and_needed(tmp_path):
    obj, lib, obj_path, lib_path = _compile(tmp_path, """
        #include <cmath>
        #include <vector>
        static float helper(float v) { return std::exp(v); }
        extern "C" int entry(float* y) { std::vector<float> t(4, y[1]); y[0] = helper(t[0]); return 0; }
    """)
    assert obj.kind == "relocatable" and lib.kind == "shared"
    assert "expf" in obj.undefined() and "_Znwm" in obj.undefined()
    assert lib.exported() == ["entry"]                 # the static helper stays local
    assert "libm.so.6" in lib.needed and "libstdc++.so.6" in lib.needed
    if has_tool("nm"):  # agree with binutils where it is installed
        nm = subprocess.run(["nm", "-u", str(obj_path)], capture_output=True, text=True).stdout.split()
        assert set(obj.undefined()) == {w for w in nm if w != "U"}
        nm_d = subprocess.run(["nm", "-D", "--defined-only", str(lib_path)], capture_output=True,
                              text=True).stdout.split()
        assert set(lib.exported()) == set(nm_d[2::3])


def test_elf_rejects_non_elf_data():
    with pytest.raises(ElfError):
        parse_elf(b"#!/bin/sh\n")


def test_symbol_families():
    fams = dl.families(["torch", "cudnn", "pthread", "cute"]) + dl.ALWAYS
    def hit(sym):
        m = dl.match_symbol(sym, fams)
        return m and m[0].name
    assert hit("_ZNK2at6Tensor4sizeEl") == "torch"           # at:: is PyTorch
    assert hit("_ZNSt6vectorIfSaIfEE2atEm") is None           # std::vector::at is not
    assert hit("cudnnCreate") == "cudnn"
    assert hit("pthread_create") == "pthread" and hit("pthread_mutex_lock") is None
    assert hit("_ZN4cute4copyEv") == "cute"
    assert hit("PyRun_SimpleString") == "python" and hit("dlsym") == "dynamic loading"
    assert hit("mprotect") == "code patching" and hit("fopen") == "file access"
    assert hit("expf") is None and hit("memcpy") is None


def test_library_and_header_families():
    fams = dl.families(["torch", "cudnn", "cublas"]) + dl.ALWAYS
    assert dl.match_library("libcudnn.so.9", fams).name == "cudnn"
    assert dl.match_library("libtorch_cpu.so", fams).name == "torch"
    assert dl.match_library("libcublasLt.so.13", fams).name == "cublas"
    assert dl.match_library("libc.so.6", fams) is None
    assert dl.match_header("torch/extension.h", fams).name == "torch"
    assert dl.match_header("cublas_v2.h", fams).name == "cublas"
    assert dl.match_header("cuda_runtime.h", fams) is None and dl.match_header("vector", fams) is None


def test_comments_and_strings_do_not_count():
    code = strip_comments('// #include <cblas.h>\n/* #include "x.h" */\nconst char* s = "// not a comment";\n')
    assert "#include" not in code and '"// not a comment"' in code


def test_source_checks(task):
    ok = b"#include <cmath>\n#include <cstdint>\nextern \"C\" int softmax_rows() { return 0; }\n"
    assert check_source(ok, task) == []
    cases = {
        b'#include "other.cpp"\n': "quoted includes are not allowed",
        b"#include <torch/extension.h>\n": "forbidden header",
        b"#include </etc/passwd>\n": "absolute or parent-relative",
        b"#define H <cmath>\n#include H\n": "computed includes",
        b"#embed <data.bin>\n": "#embed is not allowed",
        b'asm(".incbin \\"/etc/passwd\\"");\n': ".incbin",
        b'void f() { asm volatile("syscall"); }\n': "raw system calls",
        b"#  \\\n include <omp.h>\n": "forbidden header",     # a continued line is still an include
        b"\xff\xfe": "not UTF-8",
    }
    for src, expected in cases.items():
        reasons = check_source(src, task)
        assert reasons and expected in reasons[0], (src, reasons)


def test_binary_checks_on_real_objects(tmp_path, task):
    obj, lib, _, _ = _compile(tmp_path, """
        #include <cstdint>
        extern "C" void* dlopen(const char*, int);
        extern "C" int softmax_rows(const float* x, float* y, int64_t r, int64_t c) {
          return dlopen("x", 2) != nullptr;
        }
        extern "C" long time(long* t) { return 0; }
    """)
    assert any("references dlopen" in r for r in check_object(obj, task))
    assert any("exports the C symbol time" in r for r in check_library(lib, task))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_object_references_only_the_runtime_registration(tmp_path):
    """nvcc's generated host code must not trip the always-forbidden families (no false positive)."""
    src = tmp_path / "k.cu"
    src.write_text('__global__ void k(float* y) { y[threadIdx.x] = 1.f; }\n'
                   'extern "C" int entry(float* y, cudaStream_t s) { k<<<1, 32, 0, s>>>(y); return 0; }\n')
    subprocess.run(["nvcc", "-O3", "-Xcompiler", "-fPIC", "-c", str(src), "-o", str(tmp_path / "k.o")],
                   check=True)
    obj = read_elf(tmp_path / "k.o")
    assert "__cudaRegisterFatBinary" in obj.undefined()
    assert [s for s in obj.undefined() if dl.match_symbol(s, dl.ALWAYS)] == []

