"""The reference's outputs kept on the host (harness/task/refcache.py): an evaluation whose
correctness seeds were seen before takes them from the cache, with the same result; a changed task
misses it; a damaged or tampered entry is found, discarded and computed again; the cache stays in
its budget, least recently used first; the host's seed pool gives later evaluations seeds seen before."""

import json
import os
import shutil
import time

import pytest
import torch

from harness.task.model import load_reference, load_task
from harness.task import refcache
from harness.task.oracle import Oracle
from harness.task.refcache import (DEFAULT_GBPS, PROTECT_S, ReferenceCache, _record_digest, fingerprint, identity,
                                   task_digest)
from harness.task.scenarios import select_scenarios

from .conftest import CPU_TASK

TASK = load_task(CPU_TASK)
CPU = {"name": "test cpu"}
SCENARIOS = "r7-c33,r64-c128"


def _fast_loads(root):
    """As if outputs loaded at 1 PB/s here: every output is worth keeping (the rule is tested apart)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "rate.json").write_text(json.dumps({"gbps": 1e6}))


def _oracle(root, budget=1 << 30, task=TASK):
    if not (root / "rate.json").exists():
        _fast_loads(root)
    oracle = Oracle(task, load_reference(task), torch.device("cpu"))
    oracle.cache = ReferenceCache(root, budget, identity(CPU, "cpu"), task_digest(task))
    return oracle


@pytest.fixture(autouse=True)
def every_reference_worth_keeping(monkeypatch):
    """The cpu task's references cost well under a millisecond: kept anyway here (the rule that
    leaves them out is tested on its own, test_a_reference_that_costs_next_to_nothing_is_not_kept)."""
    monkeypatch.setattr(refcache, "MIN_SAVING_S", 0.0)


@pytest.fixture
def counted(monkeypatch):
    """The cpu task's reference() and lowp(), counted (this process's module: its attributes restored after)."""
    module = load_reference(TASK)
    calls = {"reference": 0, "lowp": 0}
    for name in calls:
        real = getattr(module, name)

        def wrapped(inputs, scenario, real=real, name=name):
            calls[name] += 1
            return real(inputs, scenario)
        monkeypatch.setattr(module, name, wrapped)
    return calls


def _scenario(sid="r64-c128"):
    return next(s for s in select_scenarios(TASK, "all") if s.id == sid)


def _same(a, b):
    """Bit for bit (the reference is float64 here)."""
    return a.dtype == b.dtype == torch.float64 and torch.equal(a.view(torch.int64), b.view(torch.int64))


def test_a_second_expected_computes_nothing_and_gives_the_same_bits(tmp_path, counted):
    sc = _scenario()
    first = _oracle(tmp_path)
    inputs, ref, tols = first.expected(sc.params, 11, cached=True)
    assert counted == {"reference": 1, "lowp": 1}
    assert first.cache.stats["stored"] == 1
    again = _oracle(tmp_path)                    # another evaluation: another process's cache object
    inputs2, ref2, tols2 = again.expected(sc.params, 11, cached=True)
    assert counted == {"reference": 1, "lowp": 1}, "a kept entry must not compute the reference or lowp"
    assert again.cache.stats["hits"] == 1
    assert _same(ref["y"], ref2["y"]) and tols == tols2 and torch.equal(inputs["x"], inputs2["x"])
    # another seed, and the same seed without the cache (the timing's re-checks), compute it
    again.expected(sc.params, 12, cached=True)
    again.expected(sc.params, 11)
    assert counted == {"reference": 3, "lowp": 3}


def _copy(tmp_path, where, edit=None):
    dest = tmp_path / where / "cpu_softmax"
    shutil.copytree(CPU_TASK, dest)
    if edit:
        name, text = edit
        (dest / name).write_text((dest / name).read_text() + text)
    return load_task(dest)


def test_another_task_file_or_device_misses(tmp_path):
    sc = _scenario()
    assert task_digest(_copy(tmp_path, "same")) == task_digest(TASK)      # the same files elsewhere
    changed = _copy(tmp_path, "changed", ("reference.py", "\n# a comment\n"))
    assert task_digest(changed) != task_digest(TASK)
    assert task_digest(_copy(tmp_path, "yaml", ("task.yaml", "\n# a comment\n"))) != task_digest(TASK)
    base = ReferenceCache(tmp_path, 1 << 30, identity(CPU, "cpu"), task_digest(TASK))
    other = ReferenceCache(tmp_path, 1 << 30, identity({"name": "another cpu"}, "cpu"), task_digest(TASK))
    assert base.key(sc.params, 11) != other.key(sc.params, 11)
    assert base.key(sc.params, 11) != ReferenceCache(tmp_path, 1 << 30, identity(CPU, "cpu"),
                                                     task_digest(changed)).key(sc.params, 11)
    assert base.key(sc.params, 11) != base.key(sc.params, 12)
    assert base.key(sc.params, 11) != base.key(_scenario("r7-c33").params, 11)


def _stored(tmp_path, seed=11):
    sc = _scenario()
    oracle = _oracle(tmp_path)
    _, ref, tols = oracle.expected(sc.params, seed, cached=True)
    key = oracle.cache.key(sc.params, seed)
    return sc, key, ref, tols


def _tamper_data(tmp_path, key):
    path = tmp_path / "data" / f"{key}.y"
    raw = bytearray(path.read_bytes())
    raw[1000] ^= 0x40                  # one bit of one element: a different but finite float64
    path.write_bytes(bytes(raw))


def _tamper_lowp(tmp_path, key):
    # A larger lowp error is a looser tolerance: the edit a cheat would make
    path = tmp_path / "index" / f"{key}.json"
    wrapped = json.loads(path.read_text())
    wrapped["record"]["outputs"]["y"]["lowp_err"] *= 1000
    path.write_text(json.dumps(wrapped))


def _truncate(tmp_path, key):
    path = tmp_path / "data" / f"{key}.y"
    path.write_bytes(path.read_bytes()[:-8])


def _garbage_index(tmp_path, key):
    (tmp_path / "index" / f"{key}.json").write_text("{\"record\": ")


def _data_swapped_for_another_entry(tmp_path, key):
    # a whole, valid file of the same size, but another seed's
    _, other, _, _ = _stored(tmp_path, seed=99)
    os.replace(tmp_path / "data" / f"{other}.y", tmp_path / "data" / f"{key}.y")


def _symlinked(tmp_path, key):
    path = tmp_path / "data" / f"{key}.y"
    real = tmp_path / "elsewhere.y"
    os.replace(path, real)
    path.symlink_to(real)


@pytest.mark.parametrize("damage, why", [
    (_tamper_data, "does not match the SHA-256"),
    (_tamper_lowp, "does not match its own SHA-256"),
    (_truncate, "not a plain file of"),
    (_garbage_index, "does not parse"),
    (_data_swapped_for_another_entry, "does not match the SHA-256"),
    (_symlinked, "not a plain file"),
])
def test_a_damaged_or_tampered_entry_is_found_and_computed_again(tmp_path, counted, damage, why):
    sc, key, ref, tols = _stored(tmp_path)
    damage(tmp_path, key)
    before = counted["reference"]
    again = _oracle(tmp_path)
    _, ref2, tols2 = again.expected(sc.params, 11, cached=True)
    assert counted["reference"] == before + 1, "a damaged entry must be computed again"
    assert again.cache.stats["discarded"] == 1 and why in again.cache.notes[0], again.cache.notes
    assert _same(ref["y"], ref2["y"]) and tols == tols2
    # and stored again, whole: the next evaluation takes it from the cache
    third = _oracle(tmp_path)
    third.expected(sc.params, 11, cached=True)
    assert counted["reference"] == before + 1 and third.cache.stats["hits"] == 1


def test_inputs_that_differ_for_one_seed_never_meet_its_kept_reference(tmp_path, counted, monkeypatch):
    sc, key, _, _ = _stored(tmp_path)
    module = load_reference(TASK)
    real = module.make_inputs
    monkeypatch.setattr(module, "make_inputs", lambda s, seed, dev: {"x": real(s, seed, dev)["x"] + 1.0})
    again = _oracle(tmp_path)
    _, ref, _ = again.expected(sc.params, 11, cached=True)
    assert counted["reference"] == 2 and "make_inputs differs" in again.cache.notes[0]
    inputs = again.inputs(sc.params, 11)
    assert torch.allclose(ref["y"], torch.softmax(inputs["x"].double(), dim=-1))


def test_an_entry_that_does_not_fit_the_task_is_not_used(tmp_path, counted):
    sc, key, _, _ = _stored(tmp_path)
    cache = _oracle(tmp_path).cache
    x = _oracle(tmp_path).inputs(sc.params, 11)
    assert cache.get(key, {"y": ((torch.float64,), (64, 128))}, torch.device("cpu"), fingerprint(x)) is not None
    assert cache.get(key, {"y": ((torch.float64,), (128, 64))}, torch.device("cpu"), fingerprint(x)) is None
    assert "expected (128, 64)" in cache.notes[0]


def test_a_reference_cheaper_than_its_load_keeps_only_lowps_error(tmp_path, counted):
    sc = _scenario()
    (tmp_path / "rate.json").write_text(json.dumps({"gbps": 1e-6}))   # 1 kB/s: nothing is worth loading
    first = _oracle(tmp_path)
    first.expected(sc.params, 11, cached=True)
    assert first.cache.stats["stored_light"] == 1 and not list((tmp_path / "data").iterdir())
    again = _oracle(tmp_path)
    _, _, tols = again.expected(sc.params, 11, cached=True)
    assert counted == {"reference": 2, "lowp": 1} and again.cache.stats["light_hits"] == 1
    assert tols == first.expected(sc.params, 11)[2]


def test_a_reference_that_costs_next_to_nothing_is_not_kept(tmp_path, counted, monkeypatch):
    monkeypatch.setattr(refcache, "MIN_SAVING_S", 3600.0)
    sc = _scenario()
    first = _oracle(tmp_path)
    first.expected(sc.params, 11, cached=True)
    assert first.cache.stats["cheap"] == 1 and not list((tmp_path / "index").iterdir())
    _oracle(tmp_path).expected(sc.params, 11, cached=True)
    assert counted == {"reference": 2, "lowp": 2}


def test_an_output_that_loaded_slower_than_it_computed_is_dropped(tmp_path, counted):
    sc, key, _, _ = _stored(tmp_path)
    path = tmp_path / "index" / f"{key}.json"
    wrapped = json.loads(path.read_text())
    wrapped["record"]["ref_s"] = 1e-9                  # as if the reference cost nothing
    wrapped["digest"] = _record_digest(wrapped["record"])
    path.write_text(json.dumps(wrapped))
    again = _oracle(tmp_path)
    again.expected(sc.params, 11, cached=True)
    assert again.cache.stats == {**again.cache.stats, "hits": 1, "dropped": 1}
    assert not (tmp_path / "data" / f"{key}.y").exists()
    third = _oracle(tmp_path)
    third.expected(sc.params, 11, cached=True)
    assert third.cache.stats["light_hits"] == 1 and counted == {"reference": 2, "lowp": 1}


def test_a_hit_measures_the_load_rate_that_admits_outputs(tmp_path, counted):
    sc = _scenario("r512-c512")                          # a 2 MiB output: large enough to time a rate
    _oracle(tmp_path).expected(sc.params, 11, cached=True)
    (tmp_path / "rate.json").unlink()
    again = Oracle(TASK, load_reference(TASK), torch.device("cpu"))
    again.cache = ReferenceCache(tmp_path, 1 << 30, identity(CPU, "cpu"), task_digest(TASK))
    assert again.cache.rate() == DEFAULT_GBPS
    again.expected(sc.params, 11, cached=True)
    assert again.cache.stats["hits"] == 1
    seen = json.loads((tmp_path / "rate.json").read_text())["gbps"]
    assert seen == pytest.approx(again.cache.stats["load_bytes"] / again.cache.stats["load_s"] / 1e9, rel=0.01)
    assert again.cache.rate() == seen


def test_the_budget_evicts_the_least_recently_used_but_never_a_recent_entry(tmp_path, counted):
    sc = _scenario()
    one = 64 * 128 * 8                                   # one float64 output of r64-c128
    first = _oracle(tmp_path, budget=3 * one + 4096)
    for seed in (1, 2, 3):
        first.expected(sc.params, seed, cached=True)
    keys = [first.cache.key(sc.params, s) for s in (1, 2, 3)]
    assert first.cache.stats["stored"] == 3
    # A fourth output does not fit; every entry was used just now: it is not kept (no churn).
    later = _oracle(tmp_path, budget=3 * one + 4096)
    later.expected(sc.params, 4, cached=True)
    assert later.cache.stats == {**later.cache.stats, "stored": 0, "stored_light": 1, "evicted": 0}
    assert "full" in later.cache.notes[0]
    # Once they are old, the least recently used goes first: seed 1 used long ago, seed 2 before seed 3.
    old = time.time() - 2 * PROTECT_S
    for key, age in zip(keys, (300, 200, 100)):
        os.utime(tmp_path / "index" / f"{key}.json", (old - age, old - age))
    last = _oracle(tmp_path, budget=3 * one + 4096)
    last.expected(sc.params, 5, cached=True)
    assert last.cache.stats["stored"] == 1 and last.cache.stats["evicted"] == 1
    assert not (tmp_path / "index" / f"{keys[0]}.json").exists()
    assert (tmp_path / "index" / f"{keys[1]}.json").exists() and (tmp_path / "index" / f"{keys[2]}.json").exists()
    total = sum(p.stat().st_size for sub in ("index", "data") for p in (tmp_path / sub).iterdir())
    assert total <= 3 * one + 4096


# ---- through whole evaluations (the command line, in this process: the reference's calls counted) ----

# What moves from one evaluation to the next whatever the references: the timing and the clock.
TIMED = {"timing", "time_ms", "baseline_ms", "peer_ms", "incumbent_ms", "wall_ms", "stage_seconds", "correctness_ms",
         "rechecked_calls", "rechecks_screened", "gbps", "tflops", "pct_of_peak", "speedup_vs_baseline",
         "speedup_vs_baseline_ci", "verdict_vs_baseline", "speedup_vs_peer", "speedup_vs_peer_ci", "verdict_vs_peer",
         "flags", "implausible"}


def _untimed(result):
    out = {k: v for k, v in result.items() if k not in ("summary", "time_spent", "reference_cache", "compile")}
    # a call that once read CPU after its return says so (correctness_stage.confirmed_call): the machine's noise
    out["messages"] = [m for m in result["messages"] if not m.startswith(("correctness:", "reference cache:"))]
    out["scenarios"] = [{k: v for k, v in s.items() if k not in TIMED} for s in result["scenarios"]]
    return out


def _eval(run_cli, task_dir, cache, *extra):
    if not (cache / "reference-cache" / "rate.json").exists():
        _fast_loads(cache / "reference-cache")
    proc = run_cli("eval", "--task-dir", str(task_dir), "--candidate", str(CPU_TASK / "baseline.cpp"),
                   "--scenarios", SCENARIOS, "--no-peers", "--json", "-", "--cache-dir", str(cache), *extra,
                   cache=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "ok", result["messages"]
    return result


def test_a_second_evaluation_computes_no_reference_and_reads_the_same(run_cli, tmp_path, counted):
    first = _eval(run_cli, CPU_TASK, tmp_path, "--seed", "21")
    computed = counted["reference"]
    # 2 scenarios x 2 seeds computed; kept: the second seed of each (the first never goes through the cache)
    assert computed == 4 and first["reference_cache"]["stored"] == 2, first["reference_cache"]
    second = _eval(run_cli, CPU_TASK, tmp_path, "--seed", "21")
    assert counted["reference"] == computed + 2, ("the second evaluation computed more than the first seeds'",
                                                  second["reference_cache"])
    assert second["reference_cache"]["hits"] == 2
    a, b = _untimed(first), _untimed(second)
    assert a == b, {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
    assert [s["max_abs_err"] for s in second["scenarios"]] == [s["max_abs_err"] for s in first["scenarios"]]


def test_a_changed_reference_py_misses_the_cache(run_cli, tmp_path, monkeypatch):
    same = _copy(tmp_path, "same")
    changed = _copy(tmp_path, "changed", ("reference.py", "\n# a comment\n"))
    calls = {}
    for task in (same, changed):
        module = load_reference(task)    # the module the evaluation will use (loaded once per path)
        real = module.reference

        def wrapped(inputs, scenario, real=real, where=str(task.dir)):
            calls[where] = calls.get(where, 0) + 1
            return real(inputs, scenario)
        monkeypatch.setattr(module, "reference", wrapped)
    _eval(run_cli, CPU_TASK, tmp_path / "cache", "--seed", "22")
    _eval(run_cli, same.dir, tmp_path / "cache", "--seed", "22")
    assert calls.get(str(same.dir), 0) == 2        # the same files in another folder: kept (the first seeds never are)
    _eval(run_cli, changed.dir, tmp_path / "cache", "--seed", "22")
    assert calls[str(changed.dir)] == 4            # reference.py changed: every seed computed again


def test_the_hosts_seed_pool_gives_seeds_seen_before(run_cli, tmp_path, counted):
    first = _eval(run_cli, CPU_TASK, tmp_path, "--seed-pool", "1")
    computed = counted["reference"]
    second = _eval(run_cli, CPU_TASK, tmp_path, "--seed-pool", "1")
    assert second["seeds"]["correctness_pool"] == 1 and second["seeds"]["base"] != first["seeds"]["base"]
    assert second["seeds"]["correctness_base"] == first["seeds"]["correctness_base"]
    assert second["seeds"]["correctness_fresh"] == [0] and second["seeds"]["correctness_pooled"] == [1]
    # the seeds after the first are the pool's: the same in both evaluations, their references kept
    assert [s["seeds"][1:] for s in second["scenarios"]] == [s["seeds"][1:] for s in first["scenarios"]]
    assert [s["pooled_seeds"] for s in second["scenarios"]] == [s["seeds"][1:] for s in second["scenarios"]]
    assert counted["reference"] == computed + 2          # only the first seeds computed again
    assert second["reference_cache"]["hits"] == 2
    # without the pool, an evaluation's own random base gives its correctness seeds, as before
    fresh = _eval(run_cli, CPU_TASK, tmp_path, "--seed-pool", "0")
    assert fresh["seeds"]["correctness_base"] == fresh["seeds"]["base"] and fresh["seeds"]["correctness_pool"] == 0
    assert fresh["seeds"]["correctness_pooled"] == [] and all(s["pooled_seeds"] == [] for s in fresh["scenarios"])
    assert counted["reference"] == computed + 2 + 4


def test_the_first_seed_of_every_scenario_is_fresh_never_from_the_pool(run_cli, tmp_path, counted):
    """Issue 45's decision: a pool lets an agent learn correctness inputs over many evaluations, so
    every scenario's first correctness seed is the evaluation's own random one, never the pool's and
    never met in the reference cache."""
    from harness.evaluate import derive_seed
    pool_seed = 424242
    (tmp_path / "reference-cache").mkdir()
    (tmp_path / "reference-cache" / "pool.json").write_text(json.dumps({"seeds": [pool_seed]}))
    results = [_eval(run_cli, CPU_TASK, tmp_path, "--seed-pool", "1") for _ in range(2)]
    for result in results:
        assert result["seeds"]["correctness_base"] == pool_seed and result["seeds"]["base"] != pool_seed
        for s in result["scenarios"]:
            pooled = [derive_seed(pool_seed, s["id"], "correct", j) for j in range(2)]
            assert s["seeds"][0] == s["fresh_seed"] == derive_seed(result["seeds"]["base"], s["id"], "correct", 0)
            assert s["fresh_seed"] not in pooled
            assert s["seeds"][1:] == s["pooled_seeds"] == pooled[1:]
    # the first seeds differ from one evaluation to the next; the pooled ones do not
    assert all(a["fresh_seed"] != b["fresh_seed"] for a, b in zip(*(r["scenarios"] for r in results)))
    # nothing of a first seed is kept: one entry per scenario (its pooled seed), met by the second evaluation
    assert results[0]["reference_cache"]["stored"] == 2 and results[1]["reference_cache"]["hits"] == 2
    assert results[1]["reference_cache"]["stored"] == 0 and counted["reference"] == 4 + 2


def test_a_candidate_right_only_on_the_pools_inputs_fails_on_the_fresh_seed(run_cli, tmp_path, candidate):
    """The attack the pool opens: an agent reads the pool's correctness seeds from earlier results,
    and its kernel is right on exactly those inputs (recognised by their first value, as made and as
    every transform of task/variants.py makes them) and wrong on any other. With every correctness
    seed known (--seed at the pool's seed) it passes the correctness stage and only the timed calls'
    re-checks catch it: the attack is real. With the pool, each scenario's first seed is fresh, and
    the correctness stage refuses it on that seed."""
    from harness.evaluate import derive_seed
    from harness.task import variants
    pool_seed = 123456
    (tmp_path / "reference-cache").mkdir()
    (tmp_path / "reference-cache" / "pool.json").write_text(json.dumps({"seeds": [pool_seed]}))
    module = load_reference(TASK)
    known = set()
    for sc in select_scenarios(TASK, SCENARIOS):
        for j in range(2):
            seed = derive_seed(pool_seed, sc.id, "correct", j)
            inputs = module.make_inputs(dict(sc.params), seed, "cpu")
            made = [inputs] + [variants.derive(inputs, kind, seed)[0] for kind in variants.KINDS]
            known.update(int(m["x"].reshape(-1)[:1].view(torch.int32)) for m in made)
    source = candidate("""
        #include <cmath>
        #include <cstdint>
        #include <cstring>
        static const int32_t kKnown[] = {%s};
        extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
          int32_t first; std::memcpy(&first, x, sizeof first);
          bool seen = false;
          for (int32_t k : kKnown) seen = seen || k == first;
          for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x + r * cols; float* yr = y + r * cols;
            float m = xr[0];
            for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
            double s = 0;
            for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
            for (int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(yr[c] / s * (seen ? 1.0 : 1.05));
          }
          return 0;
        }
    """ % ", ".join(str(k) for k in sorted(known)))

    def evaluate(*extra):
        proc = run_cli("eval", "--task-dir", str(CPU_TASK), "--candidate", str(source), "--scenarios", SCENARIOS,
                       "--no-peers", "--json", "-", "--cache-dir", str(tmp_path), *extra, cache=False)
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout)
        assert result["status"] == "incorrect", result["messages"]
        return result, next(s for s in result["scenarios"] if s["status"] == "incorrect")

    result, first = evaluate("--seed", str(pool_seed))
    assert first.get("checks"), "the memorised inputs did not pass the correctness stage (the attack is not real)"
    # the timed calls' checks: a bound request's positions (during timing) or the re-checks after it
    assert first["reason"].startswith("during timing:") or "re-checked after timing" in first["reason"], \
        first["reason"]
    result, first = evaluate("--seed-pool", "1")
    assert result["seeds"]["correctness_base"] == pool_seed
    assert first["pooled_seeds"] == [derive_seed(pool_seed, first["id"], "correct", 1)]
    assert first["reason"].startswith(f"seed {first['fresh_seed']}, run 1:"), first["reason"]
    assert not first.get("checks")      # refused on its first (fresh) seed, before the pool's


def test_entries_written_in_the_background_are_whole_once_closed(tmp_path, counted):
    sc = _scenario()
    first = _oracle(tmp_path)
    first.cache.background = True
    for seed in range(1, 8):            # more than MAX_PENDING at once
        first.expected(sc.params, seed, cached=True)
    first.cache.close()
    assert first.cache.stats["stored"] == 7 and not first.cache.notes
    again = _oracle(tmp_path)
    for seed in range(1, 8):
        again.expected(sc.params, seed, cached=True)
    assert again.cache.stats["hits"] == 7 and counted["reference"] == 7
