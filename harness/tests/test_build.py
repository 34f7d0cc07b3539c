"""Compiling: the content-addressed cache, nvcc's flags and its ptxas report."""

import json
import shutil
import textwrap

import pytest

from harness.build import compile as build_mod
from harness.sandbox import bwrap
from harness.build.compile import arch_flags, build
from harness.build.cache import CompileCache
from harness.build.ptxas import parse_ptxas
from harness.build.static_checks import check_object
from harness.task.model import load_task

from .conftest import CPU_TASK

HAS_SANDBOX, NO_SANDBOX = bwrap.available()
needs_sandbox = pytest.mark.skipif(not HAS_SANDBOX, reason=f"no usable bubblewrap: {NO_SANDBOX}")
ENTRY = 'extern "C" int softmax_rows(const float* x, float* y, long long r, long long c) { return 0; }\n'

PTXAS_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kILi256EEvPf' for 'sm_90a'
ptxas info    : Function properties for _Z1kILi256EEvPf
    256 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compiling entry function '_Z2k2Pf' for 'sm_90a'
ptxas info    : Function properties for _Z2k2Pf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 0 barriers
"""


@pytest.fixture
def task():
    return load_task(CPU_TASK)


@pytest.fixture
def no_sandbox(monkeypatch):
    """The fallback when bwrap is unusable: the compiler runs as the harness, the include check remains."""
    monkeypatch.setattr(bwrap, "available", lambda: (False, "disabled by the test"))


def _entry(cache_dir, key, ns="candidate"):
    return CompileCache(cache_dir).entry(ns, key)


def test_cache_hit_and_a_damaged_entry_rebuilt(tmp_path, task):
    source = (CPU_TASK / "baseline.cpp").read_bytes()
    first = build(task, source, tmp_path)
    assert first.ok and not first.cached and first.library[:4] == b"\x7fELF"
    assert build(task, source, tmp_path).cached
    assert build(task, source + b"\n// changed\n", tmp_path).key != first.key
    (_entry(tmp_path, first.key) / "meta.json").write_text("{not json")
    again = build(task, source, tmp_path)
    assert again.ok and not again.cached and again.library == first.library
    assert "failed verification" in again.notes[0] and "meta.json" in again.notes[0]
    assert build(task, source, tmp_path).cached and not build(task, source, tmp_path).notes
    assert not [p for p in _entry(tmp_path, first.key).parent.iterdir() if p.name.startswith(".")]


def test_a_swapped_library_is_detected_and_rebuilt(tmp_path, task):
    """Class 10: a candidate's process that can write the cache swaps the baseline's kernel.so for a
    slow one (inflating every later speedup). The entry no longer matches its index: rebuilt."""
    source = (CPU_TASK / "baseline.cpp").read_bytes()
    honest = build(task, source, tmp_path, namespace="baseline")
    slow = build(task, source.replace(b"return 0;\n}", b"for (volatile int i = 0; i < 1 << 20; ++i) {}\n"
                                      b"  return 0;\n}"), tmp_path)
    assert slow.ok and slow.library != honest.library
    (_entry(tmp_path, honest.key, "baseline") / "kernel.so").write_bytes(slow.library)
    again = build(task, source, tmp_path, namespace="baseline")
    assert not again.cached and again.library == honest.library
    assert "kernel.so does not match the SHA-256" in again.notes[0]


def test_symbols_come_from_the_verified_object_not_meta_json(tmp_path, task):
    """Class 10: the old cache kept the object's symbols in meta.json; a poisoned entry listed none.
    Swapping in an honest kernel.o (the library still calls dlopen) is detected too."""
    bad_src = ('extern "C" void* dlopen(const char*, int);\n' + ENTRY.replace("return 0;", "return !dlopen(0, 2);")).encode()
    bad = build(task, bad_src, tmp_path)
    assert any("references dlopen" in r for r in check_object(bad.obj, task))
    honest = build(task, ENTRY.encode(), tmp_path)
    entry = _entry(tmp_path, bad.key)
    meta = json.loads((entry / "meta.json").read_text())
    assert "obj" not in meta and "lib" not in meta            # nothing there to trust
    (entry / "kernel.o").write_bytes((_entry(tmp_path, honest.key) / "kernel.o").read_bytes())
    again = build(task, bad_src, tmp_path)
    assert not again.cached and any("references dlopen" in r for r in check_object(again.obj, task))
    # An entry with no index record (planted whole) is not used either.
    CompileCache(tmp_path)._index("candidate", bad.key).unlink()
    planted = build(task, bad_src, tmp_path)
    assert not planted.cached and "no index record" in planted.notes[0]


def test_the_baseline_never_shares_a_candidates_entry(tmp_path, task):
    source = (CPU_TASK / "baseline.cpp").read_bytes()
    as_candidate = build(task, source, tmp_path)                 # a candidate submits the baseline's source
    (_entry(tmp_path, as_candidate.key) / "kernel.so").write_bytes(b"\x7fELF poisoned")
    baseline = build(task, source, tmp_path, namespace="baseline")
    assert not baseline.cached and baseline.library == as_candidate.library and not baseline.notes


def test_a_failed_compile_is_cached_with_its_log(tmp_path, task):
    bad = build(task, b"this is not C++\n", tmp_path)
    assert not bad.ok and "error" in bad.log and not bad.refused
    again = build(task, b"this is not C++\n", tmp_path)
    assert again.cached and not again.ok and again.log == bad.log


SECRET = "int SECRET_LINE_7f3a = the_reference_answer;\n"


def _secret(tmp_path):
    path = tmp_path / "outside" / "secret.h"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


def test_an_include_outside_the_system_headers_is_refused_and_its_lines_withheld(tmp_path, task, no_sandbox):
    """%:include (a digraph the old line check did not see), here with the source check bypassed: the
    compiler's own list of files read refuses it, and the log does not show the file's lines."""
    secret = _secret(tmp_path)
    for spelling in (f"%:include <{secret}>\n", f'#define P "{secret}"\n#include P\n'):
        b = build(task, (spelling + ENTRY).encode(), tmp_path / "cache")
        assert not b.ok and b.refused, b.log
        assert str(secret) in b.refused[0] and "outside the system headers" in b.refused[0]
        assert "SECRET_LINE" not in b.log and "the_reference_answer" not in b.log
        assert any("compiled without a sandbox" in n for n in b.notes)


@needs_sandbox
def test_the_sandboxed_compiler_cannot_read_the_file_at_all(tmp_path, task):
    secret = _secret(tmp_path)
    b = build(task, (f"%:include <{secret}>\n" + ENTRY).encode(), tmp_path / "cache")
    assert not b.ok and "SECRET_LINE" not in b.log and "No such file" in b.log
    assert not b.notes


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
def test_incbin_of_any_spelling_reads_nothing(tmp_path, task, monkeypatch, sandboxed):
    """`.inc` "bin" (string pasting defeats a text search for .incbin). In the sandbox the file is not
    there; without it the generated assembly (kernel.s) shows the directive and the build is refused."""
    if sandboxed and not HAS_SANDBOX:
        pytest.skip(f"no usable bubblewrap: {NO_SANDBOX}")
    if not sandboxed:
        monkeypatch.setattr(bwrap, "available", lambda: (False, "disabled by the test"))
    secret = _secret(tmp_path)
    src = (f'asm(".section .rodata\\n.globl blob\\nblob: .inc" "bin \\"{secret}\\"\\n.text");\n' + ENTRY).encode()
    b = build(task, src, tmp_path / "cache")
    assert not b.ok and "SECRET_LINE" not in b.log and b.library is None
    if not sandboxed:
        assert b.refused and ".incbin" in b.refused[0] and str(secret) in b.refused[0]


def test_a_denylisted_header_found_under_another_path_is_refused(tmp_path, task):
    """`<python3.11/Python.h>`: the first path component is not Python's, the resolved header is."""
    import glob
    found = sorted(glob.glob("/usr/include/python3*/Python.h"))
    if not found:
        pytest.skip("no Python development headers under /usr/include")
    rel = found[0][len("/usr/include/"):]
    b = build(task, (f"#include <{rel}>\n" + ENTRY).encode(), tmp_path)
    assert b.refused and "Python.h" in b.refused[0] and "Python C API" in b.refused[0]


def test_honest_system_headers_pass(tmp_path, task):
    src = b"#include <vector>\n#include <algorithm>\n#include <cmath>\n#include <mutex>\n" + ENTRY.encode()
    b = build(task, src, tmp_path)
    assert b.ok and not b.refused, (b.refused, b.log)
    assert "/usr/include" not in b.log                          # -H's header list is not in the log


def test_the_compile_log_keeps_errors_in_the_candidate_and_system_headers(tmp_path, task):
    b = build(task, b"#include <vector>\nint f() { std::vector<int> v; return v.no_such_member; }\n", tmp_path)
    assert not b.ok and not b.refused and "no_such_member" in b.log and "kernel.cpp:2" in b.log


def test_ptxas_report_takes_the_worst_kernel():
    report = parse_ptxas(PTXAS_LOG)
    assert report["registers"] == 168 and report["smem_bytes"] == 1024 and report["spills"] == 12
    assert [k["name"] for k in report["kernels"]] == ["_Z1kILi256EEvPf", "_Z2k2Pf"]
    assert parse_ptxas("")["registers"] is None


def test_arch_flags():
    assert arch_flags(["sm_90"]) == ["-gencode=arch=compute_90a,code=sm_90a"]
    assert arch_flags(["sm_80", "sm_100"]) == ["-gencode=arch=compute_80,code=sm_80",
                                               "-gencode=arch=compute_100a,code=sm_100a"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_build_reports_registers(tmp_path):
    folder = tmp_path / "tiny_cuda"
    folder.mkdir()
    (folder / "baseline.cu").write_text('extern "C" int fill(float* y, cudaStream_t s) { return 0; }\n')
    (folder / "task.yaml").write_text(textwrap.dedent("""\
        schema: kernelseek.task/1
        name: tiny_cuda
        summary: a build test
        device: cuda
        architectures: [sm_90]
        kernel:
          language: cuda
          file: kernel.cu
          baseline: baseline.cu
          entry: fill
          args:
            - {name: y, kind: tensor, dtype: float32, role: output}
            - {name: s, kind: stream}
        scenarios: {params: [n], list: [{n: 1}], id: "n{n}"}
        tolerance: {rule: lowp_relative, factor: 2, atol: 0}
        """))
    task = load_task(folder)
    src = (b"__global__ void k(float* y) { y[threadIdx.x] = threadIdx.x * 2.0f; }\n"
           b'extern "C" int fill(float* y, cudaStream_t s) { k<<<1, 32, 0, s>>>(y); return 0; }\n')
    b = build(task, src, tmp_path / "cache")
    assert b.ok, b.log
    assert b.ptxas["registers"] > 0 and b.ptxas["kernels"][0]["arch"] == "sm_90a"
    assert "-gencode=arch=compute_90a,code=sm_90a" in b.commands[0]
    assert b.lib.exported() == ["fill"] and not b.refused


def test_filter_log_withholds_diagnostics_about_other_files():
    from harness.build.includes import filter_log
    log = ("$ g++ -c kernel.cpp\n"
           "In file included from kernel.cpp:1:\n"
           "/srv/other/run/kernel.cpp:3:5: error: 'SECRET_LINE' does not name a type\n"
           "    3 | SECRET_LINE the_answer = 42;\n"
           "      |     ^~~~\n"
           "other.cu(7): error: identifier \"SECRET_TOKEN\" is undefined\n"
           "  SECRET_TOKEN x;\n"
           "kernel.cpp:9:1: error: expected ';'\n"
           "    9 | int f() { return 1 }\n")
    shown = filter_log(log, lambda name: name == "kernel.cpp")
    assert "SECRET" not in shown and "the_answer" not in shown
    assert "kernel.cpp:9:1: error: expected ';'" in shown and "int f() { return 1 }" in shown
    assert "withheld" in shown


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_include_outside_the_toolkit_is_refused_and_withheld(tmp_path, no_sandbox):
    secret = _secret(tmp_path)
    task = load_task(CPU_TASK.parent / "rmsnorm")
    src = f'%:include "{secret}"\n__global__ void k(float* y) {{ y[0] = 1; }}\n'.encode()
    b = build(task, src + b'extern "C" int rmsnorm_fwd() { return 0; }\n', tmp_path / "cache")
    assert b.refused and str(secret) in b.refused[0] and "SECRET_LINE" not in b.log


def test_a_held_lock_fails_the_build_instead_of_hanging(tmp_path, task):
    """Anything that can write the data dir could hold an entry's lock for ever: the wait is bounded."""
    import fcntl
    from harness.errors import HarnessError
    cache = CompileCache(tmp_path)
    with open(tmp_path / "locks" / "candidate-k.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)            # a separate open file: excludes like another process
        with pytest.raises(HarnessError, match="locked for more than 0.3 s"):
            with cache.locked("candidate", "k", timeout=0.3):
                pass
    with cache.locked("candidate", "k", timeout=0.3):
        pass


def test_concurrent_builds_of_one_source_compile_once(tmp_path, task):
    from concurrent.futures import ThreadPoolExecutor
    source = (CPU_TASK / "baseline.cpp").read_bytes() + b"// concurrent\n"
    with ThreadPoolExecutor(max_workers=3) as pool:
        builds = list(pool.map(lambda _: build(task, source, tmp_path), range(3)))
    assert all(b.ok for b in builds) and len({b.library for b in builds}) == 1
    assert sorted(b.cached for b in builds) == [False, True, True]


def _evaluate(tmp_path, source):
    from harness.evaluate import Options, evaluate
    path = tmp_path / "kernel.cpp"
    path.write_bytes(source)
    return evaluate(Options(task_dir=str(CPU_TASK), candidate=str(path), scenarios="r7-c33",
                            cache_dir=str(tmp_path / "cache"), with_peers=False, with_baseline=False))


def test_an_evaluation_reports_the_compilers_refusal_as_rejected(tmp_path):
    """End to end: a header that passes the text check (its first component is not Python's) but that
    the compiler resolved to the Python C API: rejected at the source stage, the log withheld."""
    import glob
    found = sorted(glob.glob("/usr/include/python3*/Python.h"))
    if not found:
        pytest.skip("no Python development headers under /usr/include")
    result = _evaluate(tmp_path, (f"#include <{found[0][len('/usr/include/'):]}>\n" + ENTRY).encode())
    assert result["status"] == "rejected" and not result["correct"]
    assert result["messages"][-1].startswith("source check: #include <") and "Python C API" in result["messages"][-1]
    assert "withheld" in result["compile"]["log"] and "PyObject" not in result["compile"]["log"]


def test_an_evaluation_says_when_it_compiled_without_a_sandbox(tmp_path, no_sandbox):
    result = _evaluate(tmp_path, (CPU_TASK / "baseline.cpp").read_bytes())
    assert result["status"] == "ok"
    assert any(m.startswith("compiled without a sandbox: disabled by the test") for m in result["messages"])
