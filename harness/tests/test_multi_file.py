"""A candidate that is a folder of sources and headers (multi-file C++), with the task's own include
folder: it builds (every source to an object, one library), evaluates on the CPU, and every check
applies to every file and object of it."""

import json
import shutil
import textwrap

import pytest

from harness.build import static_checks
from harness.build.compile import build, cache_key
from harness.build.sources import read_folder
from harness.task.model import load_task

from .conftest import CPU_TASK


def _task(tmp_path, extra=""):
    """cpu_softmax with `file: kernel/`, an include folder (include/softmax_math.h) and `extra` yaml."""
    dest = tmp_path / "tasks" / "cpu_softmax"
    shutil.copytree(CPU_TASK, dest)
    (dest / "include").mkdir()
    (dest / "include" / "softmax_math.h").write_text(textwrap.dedent("""\
        #pragma once
        #include <cmath>
        namespace ks { static inline float fast_exp(float x) { return std::exp(x); } }
        """))
    text = (dest / "task.yaml").read_text().replace("file: kernel.cpp", "file: kernel/\n  include_dirs: [include]")
    (dest / "task.yaml").write_text(text + extra)
    return dest


def _folder(tmp_path, files):
    root = tmp_path / "cand" / "kernel"
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(body))
    return root


HONEST = {
    "kernel.cpp": """\
        #include <cstdint>
        #include "detail/rows.h"
        extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
          for (int64_t r = 0; r < rows; ++r) ks::softmax_row(x + r * cols, y + r * cols, cols);
          return 0;
        }
        """,
    "detail/rows.h": """\
        #pragma once
        #include <cstdint>
        namespace ks { void softmax_row(const float* x, float* y, int64_t n); }
        """,
    "rows.cpp": """\
        #include <softmax_math.h>
        #include "detail/rows.h"
        #include "detail/../detail/max.h"
        namespace ks {
        void softmax_row(const float* x, float* y, int64_t n) {
          float m = row_max(x, n), s = 0.f;
          for (int64_t i = 0; i < n; ++i) { y[i] = fast_exp(x[i] - m); s += y[i]; }
          for (int64_t i = 0; i < n; ++i) y[i] /= s;
        }
        }
        """,
    "detail/max.h": """\
        #pragma once
        #include <cstdint>
        namespace ks { static inline float row_max(const float* x, int64_t n) {
          float m = x[0]; for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m; return m; } }
        """,
    "NOTES.md": "not a source: left out\n",
}


def test_a_folder_candidate_with_headers_builds_and_evaluates(tmp_path, run_cli):
    task_dir = _task(tmp_path)
    folder = _folder(tmp_path, HONEST)
    out = tmp_path / "r.json"
    r = run_cli("eval", "--task-dir", str(task_dir), "--candidate", str(folder), "--scenarios", "r7-c33,r64-c128",
                "--no-peers", "--json", str(out))
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    assert res["status"] == "ok", res["messages"]
    assert [s["status"] for s in res["scenarios"]] == ["ok", "ok"]
    assert res["candidate"]["files"] == ["detail/max.h", "detail/rows.h", "kernel.cpp", "rows.cpp"]
    assert any("NOTES.md left out" in m for m in res["messages"])
    assert res["summary"]["speedup_vs_baseline_geomean"] is not None
    # Two sources, two compiles, one link (the build's commands are in its log)
    assert res["compile"]["log"].count("-c src/") == 2


def test_every_file_of_the_folder_is_in_the_cache_key(tmp_path):
    task = load_task(_task(tmp_path))
    files, _ = read_folder(_folder(tmp_path, HONEST), "cpp")
    key = cache_key(task, files)
    changed = dict(files, **{"detail/max.h": files["detail/max.h"] + b"\n// a comment\n"})
    assert cache_key(task, changed) != key
    renamed = {("detail/other.h" if k == "detail/max.h" else k): v for k, v in files.items()}
    assert cache_key(task, renamed) != key


def test_the_tasks_include_folder_is_in_the_cache_key(tmp_path):
    from harness.build.headers import tree_digest
    task_dir = _task(tmp_path)
    task = load_task(task_dir)
    files, _ = read_folder(_folder(tmp_path, HONEST), "cpp")
    key = cache_key(task, files)
    (task_dir / "include" / "softmax_math.h").write_text("#pragma once\n// changed\n")
    tree_digest.cache_clear()
    assert cache_key(task, files) != key


@pytest.mark.parametrize("name,body,expect", [
    ("evil.h", '#include "../../reference.py"\n', "not a file of the candidate's folder"),
    ("evil.h", '#include "/etc/passwd"\n', "not a file of the candidate's folder"),
    ("evil.h", "#include <cblas.h>\n", "forbidden header"),
    ("evil.h", "#include_next <cmath>\n", "#include_next is not allowed"),
    ("evil.h", 'asm(".incbin \\"/etc/passwd\\"");\n', ".incbin"),
])
def test_the_source_checks_read_every_file_of_the_folder(tmp_path, name, body, expect):
    # a header no source includes is still checked: the candidate is every file of the folder
    task = load_task(_task(tmp_path))
    files, _ = read_folder(_folder(tmp_path, dict(HONEST, **{name: body})), "cpp")
    reasons = static_checks.check_sources(files, task)
    assert any(r.startswith(f"{name}: ") and expect in r for r in reasons), reasons
    assert static_checks.check_sources(read_folder(_folder(tmp_path / "ok", HONEST), "cpp")[0], task) == []


def test_a_header_of_the_folder_that_pulls_in_a_forbidden_header_is_refused_by_the_compile(tmp_path):
    # Spelled with a macro, the source check cannot read it; the compiler's own list of what it read can.
    task = load_task(_task(tmp_path))
    files, _ = read_folder(_folder(tmp_path, dict(HONEST, **{
        "detail/max.h": '#pragma once\n#define HDR <omp.h>\n#include HDR\n' + HONEST["detail/max.h"]})), "cpp")
    assert not any("omp" in r and "forbidden" in r for r in static_checks.check_sources(files, task))
    b = build(task, files, str(tmp_path / "cache"))
    assert not b.ok and any("omp.h" in r and "forbidden header" in r for r in b.refused), (b.refused, b.log[-500:])


def test_every_object_is_checked_and_helpers_across_sources_are_the_builds_own(tmp_path):
    task = load_task(_task(tmp_path))
    files, _ = read_folder(_folder(tmp_path, HONEST), "cpp")
    b = build(task, files, str(tmp_path / "cache"))
    assert b.ok, b.log
    assert len(b.objs) == 2
    # ks::softmax_row is undefined in kernel.cpp's object and defined in rows.cpp's: not a reference out
    assert static_checks.check_objects(b.objs, task) == []
    bad = dict(files, **{"extra.cpp": b'#include <cstdlib>\nnamespace ks { int shell() { return system("id"); } }\n'})
    b = build(task, bad, str(tmp_path / "cache"))
    assert b.ok, b.log
    assert any("references system" in r for r in static_checks.check_objects(b.objs, task))
