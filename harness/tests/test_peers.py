"""Peers that cannot run a scenario, or fail part-way, are left out with a reason, never blamed on
the candidate."""

from harness.evaluate import Options, evaluate

from .conftest import CPU_TASK

PEERS = '''

_calls = {"n": 0}


def peer_unsupported_wide(inputs, scenario):
    if int(scenario["cols"]) > 100:
        raise Unsupported("only narrow rows")
    return {"y": torch.softmax(inputs["x"], dim=-1)}


def peer_flaky(inputs, scenario):
    _calls["n"] += 1
    if _calls["n"] > 3:
        raise RuntimeError("backend fell over")
    return {"y": torch.softmax(inputs["x"], dim=-1)}
'''


def test_unsupported_and_failing_peers(task_copy, cache_dir):
    folder = task_copy(edit=lambda t: t.replace(
        "  - {name: torch, fn: peer_torch}",
        "  - {name: torch, fn: peer_torch}\n  - {name: narrow, fn: peer_unsupported_wide}\n"
        "  - {name: flaky, fn: peer_flaky}"))
    (folder / "reference.py").write_text((folder / "reference.py").read_text() + PEERS)
    result = evaluate(Options(task_dir=str(folder), candidate=str(CPU_TASK / "baseline.cpp"),
                              scenarios="r7-c33,r64-c128", cache_dir=cache_dir))
    assert result["status"] == "ok" and result["correct"]
    narrow, wide = result["scenarios"][1], result["scenarios"][0]   # r7-c33 is listed after r64-c128
    assert wide["id"] == "r64-c128" and wide["peer_unsupported"]["narrow"] == "only narrow rows"
    assert "narrow" in narrow["peer_ms"]
    assert "failed during timing: RuntimeError: backend fell over" in wide["peer_unsupported"]["flaky"]
    # each peer's geomean covers only the scenarios it ran
    assert result["summary"]["peer_scenarios"]["narrow"] == 1
    assert "flaky" not in result["summary"]["peer_scenarios"]
    assert result["summary"]["peer_scenarios"]["torch"] == 2
