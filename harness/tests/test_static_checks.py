"""ELF reading, denylist families, source and binary checks."""

import shutil
import subprocess
import textwrap

import pytest

from harness.build import denylist as dl
from harness.build.elf import ElfError, parse_elf, read_elf
from harness.build.static_checks import check_library, check_object, check_source, strip_comments
from harness.task.model import load_task

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
        b"%:include </etc/passwd>\n": "absolute or parent-relative",   # the digraph of #
        b"  %:  include <cblas.h>\n": "forbidden header",
        b"%:include_next <cmath>\n": "#include_next is not allowed",
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
    from .conftest import REPO
    assert check_object(obj, load_task(REPO / "kernels" / "rmsnorm")) == [], obj.undefined()   # allowlisted



# What cheaters reached for when the binary check was a list of forbidden names (issue 13, class 6),
# and what honest kernels need: the allowlist must refuse the first and pass the second.
REFUSED = {
    "wordexp": 'struct W { unsigned long c; char** v; unsigned long o; };\n'
               'extern "C" int wordexp(const char*, W*, int); static W w;\n'
               'extern "C" int softmax_rows() { return wordexp("$(true)", &w, 0); }\n',
    "__open_2": 'extern "C" int __open_2(const char*, int);\n'
                'extern "C" int softmax_rows() { return __open_2("/proc/self/maps", 0); }\n',
    "_Fork": 'extern "C" int _Fork(void); extern "C" int setsid(void);\n'
             'extern "C" int softmax_rows() { return _Fork() == 0 ? setsid() : 0; }\n',
    "rename": 'extern "C" int rename(const char*, const char*);\n'
              'extern "C" int softmax_rows() { return rename("a", "b"); }\n',
    "__clone": 'extern "C" int __clone(int (*)(void*), void*, int, void*);\n'
               'static int f(void*) { return 0; } static char st[4096];\n'
               'extern "C" int softmax_rows() { return __clone(f, st + 4096, 0, 0); }\n',
    "dlsym": 'extern "C" void* dlsym(void*, const char*);\n'
             'extern "C" int softmax_rows() { return dlsym(0, "PyRun_SimpleString") != 0; }\n',
    "syscall": 'extern "C" long syscall(long, ...);\n'
               'extern "C" int softmax_rows() { return (int)syscall(39); }\n',
    "posix_spawnp": 'extern "C" int posix_spawnp(int*, const char*, void*, void*, char**, char**);\n'
                    'extern "C" int softmax_rows() { return posix_spawnp(0, "sh", 0, 0, 0, 0); }\n',
    "popen": 'struct F; extern "C" F* popen(const char*, const char*);\n'
             'extern "C" int softmax_rows() { return popen("true", "r") != 0; }\n',
    "getenv": 'extern "C" char* getenv(const char*);\n'
              'extern "C" int softmax_rows() { return getenv("HOME") != 0; }\n',
    "timer_create": 'extern "C" int timer_create(int, void*, void*);\n'
                    'extern "C" int softmax_rows() { return timer_create(1, 0, 0); }\n',
    "_ZNSt10filesystem6remove": '#include <filesystem>\n'
        'extern "C" int softmax_rows() { return std::filesystem::remove("x"); }\n',
    "_ZN5boost6detail4stubEv": 'namespace boost { namespace detail { void stub(); } }\n'
        'extern "C" int softmax_rows() { boost::detail::stub(); return 0; }\n',
}


@pytest.mark.parametrize("symbol", sorted(REFUSED), ids=sorted(REFUSED))
def test_allowlist_refuses_what_no_denylist_named(tmp_path, task, symbol):
    obj, _, _, _ = _compile(tmp_path, REFUSED[symbol])
    found = [s for s in obj.undefined() if s == symbol or s.startswith(symbol) and symbol.startswith("_Z")]
    assert found, obj.undefined()
    reasons = check_object(obj, task)
    assert any(r.startswith(f"references {found[0]} ") for r in reasons), reasons


def test_allowlist_passes_what_honest_kernels_use(tmp_path, task):
    obj, _, _, _ = _compile(tmp_path, """
        #include <algorithm>
        #include <cmath>
        #include <cstdio>
        #include <cstring>
        #include <memory>
        #include <mutex>
        #include <stdexcept>
        #include <string>
        #include <vector>
        static std::mutex m;
        extern "C" int softmax_rows(const float* x, float* y, long r, long c) {
          std::lock_guard<std::mutex> g(m);
          std::vector<float> t(x, x + c);
          std::sort(t.begin(), t.end());
          std::unique_ptr<double[]> acc(new double[c]);
          std::memcpy(y, x, sizeof(float) * c);
          for (long i = 0; i < c; ++i) y[i] = std::exp(y[i]) + std::tanh(y[i]) + std::fmax(y[i], 0.f);
          if (r < 0) throw std::runtime_error("rows " + std::to_string(r));
          if (r == 12345) std::fprintf(stderr, "debug %f\\n", acc[0]);
          static thread_local int calls = 0;
          return ++calls < 0;
        }
    """)
    assert len(obj.undefined()) > 10
    assert check_object(obj, task) == [], obj.undefined()


def test_cuda_allowlist_covers_the_runtime_api_without_library_fallbacks():
    from harness.build.allowlist import allowed
    # What nvcc's generated host code references (CUDA 12 and 13) and what the baselines call.
    for sym in ["__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary",
                "__cudaRegisterFunction", "__cudaRegisterVar", "__cudaPushCallConfiguration",
                "__cudaPopCallConfiguration", "__cudaGetKernel", "__cudaLaunchKernel", "cudaLaunchKernel",
                "cudaLaunchKernelExC", "cudaFuncSetAttribute", "cudaGetLastError", "cudaMemsetAsync",
                "cudaMemcpyAsync", "cudaStreamSynchronize", "atexit", "__cxa_guard_acquire"]:
        assert allowed(sym, "cuda"), sym
        assert not sym.startswith("cuda") or not allowed(sym, "cpp"), sym
    for sym in ["cudnnCreate", "cublasSgemm_v2", "cudaLaunchHostFunc", "cudaStreamAddCallback",
                "cudaStreamSetAttribute", "cudaDeviceSetLimit", "cudaCtxResetPersistingL2Cache",
                "cudaDeviceReset", "cudaGetDriverEntryPoint", "cudaLibraryLoadData", "cuModuleLoadData",
                "cuLaunchKernel", "cudaGraphLaunch", "cudaIpcOpenMemHandle", "cudaSetDevice"]:
        assert not allowed(sym, "cuda"), sym


def test_cuda_objects_recorded_from_nvcc_pass_or_fail_as_their_manifest_says():
    """nvcc is not on every machine: the undefined symbols of the CUDA baselines' and adversarial
    candidates' objects, recorded with nvcc (nvcc_symbols.json), against the binary check. The
    baselines and every candidate whose defence acts at run time must pass it (or they would never
    reach the defence they test); the binary-stage ones must fail it naming their symbol."""
    import json
    import yaml
    from pathlib import Path

    from harness.build.elf import ElfInfo, Symbol
    from .conftest import REPO
    recorded = json.loads((Path(__file__).parent / "nvcc_symbols.json").read_text())["objects"]
    manifest = yaml.safe_load((REPO / "harness/adversarial/cuda/manifest.yaml").read_text())
    # Entries run with the allowlist off test what is behind it; the allowlist judges the others.
    stage = {f"harness/adversarial/cuda/{c['file']}": (c["stage"], c["expect"]) for c in manifest["candidates"]
             if "allowlist" not in (c.get("without") or ())}
    tasks = {"flash": load_task(REPO / "kernels/flash_attn_fwd"), "rmsnorm": load_task(REPO / "kernels/rmsnorm")}
    for path, undefined in recorded.items():
        if not path.startswith("kernels/") and path not in stage:
            continue      # run only with the allowlist off (trust9): nothing to say about the allowlist
        task = tasks["flash"] if "flash_attn_fwd" in path else tasks["rmsnorm"]
        obj = ElfInfo(kind="relocatable", needed=[], rpath=[],
                      symbols=[Symbol(name, "global", "notype", False, 0) for name in undefined])
        reasons = check_object(obj, task)
        if path.startswith("kernels/") or stage[path][0] == "runtime":
            assert reasons == [], (path, reasons)
        elif stage[path][0] == "binary" and "references" in str(stage[path][1]["reason"]):
            assert any(stage[path][1]["reason"] in r for r in reasons), (path, reasons)
