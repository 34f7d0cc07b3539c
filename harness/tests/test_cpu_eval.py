"""The cpu task's baseline evaluated for real, through the command line, as CI and the demo do."""

import json
import statistics
import subprocess
import sys

import pytest

from harness.schema import validate_result

from .conftest import CPU_TASK, REPO


@pytest.fixture(scope="module")
def full_eval(tmp_path_factory, cache_dir):
    """One full evaluation as a real `python -m harness` subprocess, shared by the tests below."""
    out = tmp_path_factory.mktemp("eval") / "result.json"
    proc = subprocess.run([sys.executable, "-m", "harness", "eval", "--task-dir", str(CPU_TASK),
                           "--candidate", str(CPU_TASK / "baseline.cpp"), "--json", str(out), "--table",
                           "--progress", "jsonl", "--cache-dir", cache_dir],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    return proc, json.loads(out.read_text()) if out.exists() else None


def test_exit_code_and_schema(full_eval):
    proc, result = full_eval
    assert proc.returncode == 0, proc.stderr
    assert validate_result(result) == []
    assert result["schema"] == "kernelseek.eval/1" and result["task"] == "cpu_softmax"


def test_every_scenario_is_correct_and_timed(full_eval):
    _, result = full_eval
    assert result["status"] == "ok" and result["correct"] is True
    assert result["summary"]["scenarios"] == result["summary"]["correct"] == 11
    for s in result["scenarios"]:
        assert s["status"] == "ok" and s["correct"], s
        assert s["max_abs_err"] <= s["tolerance"]
        assert len(set(s["seeds"])) >= 2
        assert s["time_ms"] > 0 and s["baseline_ms"] > 0 and s["peer_ms"]["torch"] > 0
        assert s["timing"]["reps"] >= 3 and s["rechecked_calls"]
        # the baseline's error on the correctness seeds gives the re-checks' screen: no timed call of an
        # honest candidate needed the reference computed again
        assert s["rechecks_screened"] == len(s["rechecked_calls"]), s
        assert s["tflops"] > 0 and s["gbps"] > 0 and 0 < s["pct_of_peak"] < 100
        # where the time went: both stages, the timing stage at least as long as its own loop
        assert s["stage_seconds"]["correctness"] > 0 and s["stage_seconds"]["timing"] >= s["timing"]["seconds"]
    assert sum(sum(s["stage_seconds"].values()) for s in result["scenarios"]) <= result["summary"]["seconds"]


def test_summary_compares_side_by_side(full_eval):
    _, result = full_eval
    summary = result["summary"]
    # The candidate is the baseline's own source: the two are the same code timed side by side.
    # A wide band only: this is a sanity check of the pairing, not a benchmark.
    assert 0.67 < summary["speedup_vs_baseline_geomean"] < 1.5
    assert summary["best_peer"] == "torch" and summary["speedup_vs_peer_geomean"]["torch"] > 0
    assert summary["pct_of_peak_median"] > 0
    assert summary["goal"]["vs"] == "best_peer" and isinstance(summary["goal"]["met"], bool)
    assert result["seeds"]["base"] >= 0 and result["device_info"]["cores"] >= 1


def test_table_and_progress(full_eval):
    proc, result = full_eval
    for s in result["scenarios"]:
        assert s["id"] in proc.stdout
    assert "status ok" in proc.stdout
    events = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "compile" and kinds[-1] == "done"
    scenario_events = [e for e in events if e["event"] == "scenario"]
    assert [e["i"] for e in scenario_events] == list(range(11)) and scenario_events[0]["n"] == 11


def test_compile_cache_hit_and_json_to_stdout(run_cli):
    proc = run_cli("eval", "--task-dir", str(CPU_TASK), "--candidate", str(CPU_TASK / "baseline.cpp"),
                   "--scenarios", "r7-c33", "--json", "-", "--no-peers")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["compile"]["cached"] is True     # built by the full evaluation above
    assert result["status"] == "ok" and [s["id"] for s in result["scenarios"]] == ["r7-c33"]
    assert "peer_ms" not in result["scenarios"][0] or result["scenarios"][0]["peer_ms"] == {}


def test_fresh_build_is_not_cached(tmp_path, run_cli):
    proc = run_cli("eval", "--task-dir", str(CPU_TASK), "--candidate", str(CPU_TASK / "baseline.cpp"),
                   "--scenarios", "r7-c33", "--json", "-", "--no-peers", "--no-baseline",
                   "--cache-dir", str(tmp_path / "fresh"), cache=False)
    result = json.loads(proc.stdout)
    assert result["compile"]["cached"] is False and result["compile"]["seconds"] > 0
    assert result["scenarios"][0]["baseline_ms"] is None
    assert list((tmp_path / "fresh").iterdir())     # the entry was moved into the cache


def test_samples_keeps_every_rounds_figure_of_every_implementation(run_cli):
    proc = run_cli("eval", "--task-dir", str(CPU_TASK), "--candidate", str(CPU_TASK / "baseline.cpp"),
                   "--scenarios", "r7-c33", "--json", "-", "--no-peers", "--samples")
    assert proc.returncode == 0, proc.stderr
    timing = json.loads(proc.stdout)["scenarios"][0]["timing"]
    got = timing["samples_ms"]
    assert set(got) == {"candidate", "baseline"}
    assert len(got["candidate"]) == len(got["baseline"]) == timing["reps"] and min(got["candidate"]) > 0
    scenario = json.loads(proc.stdout)["scenarios"][0]
    for name, key in (("candidate", "time_ms"), ("baseline", "baseline_ms")):    # the figures are their medians
        assert abs(statistics.median(got[name]) - scenario[key]) <= 1e-6 * scenario[key]
    plain = run_cli("eval", "--task-dir", str(CPU_TASK), "--candidate", str(CPU_TASK / "baseline.cpp"),
                    "--scenarios", "r7-c33", "--json", "-", "--no-peers")
    assert "samples_ms" not in json.loads(plain.stdout)["scenarios"][0]["timing"]
