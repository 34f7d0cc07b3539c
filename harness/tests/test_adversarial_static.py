"""The compile-time adversarial candidates (static-manifest.yaml): issue 13's class 6 (around the name
checks) and class 10 (a poisoned compile cache) are refused or detected for the stated reason.

A `poison` entry is prepared the way an earlier candidate's process could have done it (it can write
the data dir unless the executor's sandbox keeps it out): its compile-cache entry, or the baseline's,
gets one file replaced by another build's before the evaluation."""

import pytest

from harness.adversarial.run import load_manifest, run_entry
from harness.build.compile import build
from harness.build.cache import CompileCache
from harness.task.model import load_task

from .conftest import REPO

MANIFEST = REPO / "harness" / "adversarial" / "cpu" / "static-manifest.yaml"
TASK_DIR, ENTRIES = load_manifest(MANIFEST)
# A baseline that burns time before returning: what a poisoner would put in the baseline's entry.
SLOW = b"  for (volatile int spin = 0; spin < 2000000; ++spin) {}\n  return 0;\n}\n"


def test_manifest_lists_every_trust_candidate():
    # (test_adversarial_cpu.py checks that the two manifests together list every candidate once)
    assert {e["file"] for e in ENTRIES} <= {p.name for p in MANIFEST.parent.glob("trust*.cpp")}
    assert {e["hack"] for e in ENTRIES} == {6, 10}
    assert all(e.get("before") for e in ENTRIES)      # what each got from the harness before


def _donor_source(task, kind):
    source = task.baseline.read_bytes()
    if kind == "slow-baseline":
        head, sep, _ = source.rpartition(b"  return 0;\n}")
        assert sep, "the baseline no longer ends with `return 0; }`: update SLOW"
        return head + SLOW
    return source


def poison(entry, cache_dir):
    spec = entry["poison"]
    task = load_task(TASK_DIR)
    ns = spec["namespace"]
    victim_source = entry["path"].read_bytes() if ns == "candidate" else task.baseline.read_bytes()
    victim = build(task, victim_source, cache_dir, namespace=ns)
    donor = build(task, _donor_source(task, spec["from"]), cache_dir)
    assert victim.ok and donor.ok
    cache = CompileCache(cache_dir)
    good = (cache.entry(ns, victim.key) / spec["file"]).read_bytes()
    bad = (cache.entry("candidate", donor.key) / spec["file"]).read_bytes()
    assert good != bad, "the poison must change the entry"
    (cache.entry(ns, victim.key) / spec["file"]).write_bytes(bad)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
def test_static_adversarial_candidate_is_caught(entry, tmp_path):
    cache_dir = tmp_path / "cache"     # its own cache: a poisoned entry must not reach other tests
    if entry.get("poison"):
        poison(entry, cache_dir)
    out = run_entry(TASK_DIR, entry, tmp_path, str(cache_dir))
    assert out["ok"], f"{entry['file']} (hack {entry['hack']}): {out['why']}; first reason: {out['reason']}"
    # A refusal is never also correct; an entry may allow `ok` (then it gained nothing: run.check).
    if out["status"] != "ok":
        assert not out["result"]["correct"]
    if entry.get("poison"):
        assert any("failed verification" in m and "discarded and built again" in m
                   for m in out["result"]["messages"]), out["result"]["messages"]
    log = (out["result"].get("compile") or {}).get("log") or ""
    assert "root:x:" not in log        # no line of a file outside the system headers reaches the log
