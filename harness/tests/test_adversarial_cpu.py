"""Every CPU adversarial candidate is rejected or marked incorrect (or flagged) for the stated reason."""

from pathlib import Path

import pytest

from harness.adversarial.run import load_manifest, run_entry

from .conftest import REPO

MANIFEST = REPO / "harness" / "adversarial" / "cpu" / "manifest.yaml"
TASK_DIR, ENTRIES = load_manifest(MANIFEST)


def test_manifest_covers_every_hack_cpp_can_express():
    # Hack 3 (a non-default CUDA stream) has no CPU form; every other hack has a candidate.
    assert sorted({e["hack"] for e in ENTRIES if "hack" in e}) == [1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    # Issue 13's classes of cheats that got through (8 and 9 are CUDA-only, 10 is the compile cache's),
    # and 11: the copies of the library timing draws among (issue 14).
    assert sorted({str(e["trust"]) for e in ENTRIES if "trust" in e}) == sorted(
        ["1", "2", "3", "4", "5", "6", "7", "11", "39a", "39c", "39e", "39f", "39-honest"])
    # Every candidate in the folder is in this manifest or in static-manifest.yaml (the compile-time
    # classes, test_adversarial_static.py), and in one of them only.
    listed = [e["file"] for e in ENTRIES]
    static = [e["file"] for e in load_manifest(MANIFEST.with_name("static-manifest.yaml"))[1]]
    # (a file may have several entries in one: a control with its defence off beside it)
    assert not set(listed) & set(static)
    assert sorted(set(listed) | set(static)) == sorted(p.name for p in MANIFEST.parent.glob("*.cpp"))


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
def test_adversarial_candidate_is_caught(entry, tmp_path, cache_dir):
    out = run_entry(TASK_DIR, entry, Path(tmp_path), cache_dir)
    assert out["ok"], f"{entry['file']}: {out['why']}; first reason: {out['reason']}"
    # A refusal is never also correct; an entry may allow `ok` (then it gained nothing: run.check).
    if out["status"] != "ok":
        assert not out["result"]["correct"]
    # An honest counter-example (issue 39) is correct, and ok on every scenario.
    if entry.get("trust") == "39-honest":
        assert out["result"]["correct"] and all(s["status"] == "ok" for s in out["result"]["scenarios"])


LAYERED = [e for e in ENTRIES if e.get("without") and not e.get("control")]


@pytest.mark.parametrize("entry", LAYERED, ids=[e["file"] for e in LAYERED])
def test_with_every_layer_on_it_is_refused_too(entry, tmp_path, cache_dir):
    # The entries above run with a layer off to test the defence behind it; with all of them on, the
    # candidate must not get through either (it is refused, most often by the allowlist).
    out = run_entry(TASK_DIR, dict(entry, without=[]), Path(tmp_path), cache_dir)
    assert out["status"] in ("rejected", "incorrect"), f"{entry['file']}: {out['status']}; {out['reason']}"
