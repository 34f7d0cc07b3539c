"""Noise never becomes a gain: the intervals and verdicts of a speedup, and identical code reading the same.

The attack on a plain comparison is a candidate that is the baseline with a comment changed: any
noise above 1.0 was a "gain". The defence: a 95 % interval from the paired per-round ratios, and a
verdict that says faster or slower only when the interval excludes 1.0.
"""

import copy
import math
import random
import statistics

import pytest

from harness.evaluate import Options, evaluate
from harness.timing.rounds import HARD_CAP_FACTOR
from harness.result import summarise
from harness.timing.stats import geomean, geomean_ci, median, ratio_ci, verdict
from harness.task.model import load_task

from .conftest import CPU_TASK


def _noisy(centre, spread, n, seed):
    rng = random.Random(seed)
    return [centre * math.exp(rng.gauss(0.0, spread)) for _ in range(n)]


def test_a_lucky_median_within_the_noise_is_not_faster():
    # The point figure says 1.03x; the rounds say nothing: the interval straddles 1.0.
    ratios = [0.93, 1.05, 0.97, 1.08, 1.03, 0.95, 1.04, 1.10, 0.99, 1.03, 1.06]
    assert median(ratios) > 1.0
    ci = ratio_ci(ratios)
    assert ci[0] < 1.0 < ci[1] and verdict(ci) == "same"


def test_a_real_difference_is_faster_or_slower():
    fast, slow = _noisy(1.3, 0.05, 12, 2), _noisy(0.7, 0.05, 12, 3)
    assert verdict(ratio_ci(fast)) == "faster"
    assert verdict(ratio_ci(slow)) == "slower"
    ci = geomean_ci([fast, _noisy(1.2, 0.05, 12, 5)], random.Random(6))
    assert 1.0 < ci[0] < geomean([median(fast), 1.2]) < ci[1]


def test_one_outlier_round_does_not_make_a_gain():
    # One round where the baseline's call was preempted (ratio 3.0) among rounds that read ~1.0.
    ratios = _noisy(1.0, 0.03, 11, 7) + [3.0]
    assert verdict(ratio_ci(ratios)) == "same"


def test_intervals_need_three_rounds():
    ratios = _noisy(1.1, 0.1, 15, 9)
    assert ratio_ci([1.2, 1.3]) is None and verdict(None) is None
    assert geomean_ci([ratios, [1.0, 1.1]], random.Random(0)) is None   # one scenario too short to say


def test_a_scenarios_interval_covers_its_median_at_least_95_percent_of_the_time():
    # Whatever the number of rounds a scenario stops at, its interval [x(k), x(n+1-k)] covers the
    # median with probability 1 - 2 P(Binomial(n, 1/2) < k): at least 95 % from 6 rounds on, exactly.
    from math import comb

    from harness.timing.stats import _order_rank
    for n in range(6, 400):
        k = _order_rank(n)
        assert 1 - 2 * sum(comb(n, i) for i in range(k)) / 2 ** n >= 0.95, n
    # And seen: identical code, rounds with 8 % noise, 2000 scenarios each at 8 and 10 rounds (the
    # percentile bootstrap it replaced covered 91 % and 93 %).
    rng = random.Random(5)
    for n in (8, 10):
        hits = sum(ci[0] <= 1.0 <= ci[1] for ci in (ratio_ci(_noisy(1.0, 0.08, n, rng.random())) for _ in range(2000)))
        assert hits >= 0.95 * 2000, (n, hits)


SLOWER = """
#include <cmath>
#include <cstdint>
// The baseline's softmax, computed three times: a real slowdown the verdict must see.
extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows < 0 || cols <= 0) return 1;
  for (int pass = 0; pass < 3; ++pass) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * cols;
      volatile float* yr = y + r * cols;
      float m = xr[0];
      for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
      double sum = 0.0;
      for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; sum += e; }
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t c = 0; c < cols; ++c) yr[c] = yr[c] * inv;
    }
  }
  return 0;
}
"""


def _evaluate_baseline(cache_dir):
    return evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), cache_dir=cache_dir))


@pytest.fixture(scope="module")
def baseline_as_candidate(cache_dir):
    # Every scenario: identical code must read the same on the small kernels (tens of microseconds,
    # where the request's own cost once dominated) as on the large.
    return _evaluate_baseline(cache_dir)


def test_the_baseline_as_candidate_reads_the_same(baseline_as_candidate, cache_dir):
    result = baseline_as_candidate
    s = result["summary"]
    assert result["status"] == "ok" and s["timed"] == s["scenarios"] == 11, result["messages"]
    lo, hi = s["speedup_vs_baseline_ci"]
    per_scenario = [(sc["id"], sc.get("speedup_vs_baseline"), sc.get("time_ms"), sc.get("baseline_ms"),
                     sc["timing"].get("batch"), sc["timing"].get("overhead_ms")) for sc in result["scenarios"]]
    assert s["verdict_vs_baseline"] == "same", (s["speedup_vs_baseline_geomean"], lo, hi, result["time_spent"],
                                                per_scenario)
    if not lo <= 1.0 <= hi:
        # A 95 % interval misses the truth in one evaluation of twenty by design (about one CI run in
        # forty here, by 0.2-0.4 %, the verdict still `same`): a second, independent evaluation must
        # then contain 1.0. An offset between the executors, which would shift every evaluation, fails
        # both (test_a_slower_candidate_is_slower shows what a real difference reads).
        again = _evaluate_baseline(cache_dir)
        lo2, hi2 = again["summary"]["speedup_vs_baseline_ci"]
        assert lo2 <= 1.0 <= hi2 and again["summary"]["verdict_vs_baseline"] == "same", (
            "both evaluations' intervals exclude 1.0", (lo, hi), (lo2, hi2), per_scenario)
    assert lo <= s["speedup_vs_baseline_geomean"] <= hi
    # The peer is genuinely different (torch's softmax on one core is several times faster here).
    assert s["verdict_vs_peer"]["torch"] in ("faster", "slower")
    for sc in result["scenarios"]:
        assert sc["verdict_vs_baseline"] in ("faster", "slower", "same")
        ci = sc["speedup_vs_baseline_ci"]
        assert ci[0] <= sc["speedup_vs_baseline"] <= ci[1]
        # min_reps rounds, unless the scenario reached the hard cap first (a loaded CI machine gave
        # one scenario 7 rounds in its 1 s): then it says so by its seconds.
        policy = load_task(CPU_TASK).timing
        assert (sc["timing"]["reps"] >= policy["min_reps"] or
                sc["timing"]["seconds"] >= HARD_CAP_FACTOR * policy["max_seconds"]), sc["timing"]
        assert len(sc["timing"]["ratios"]["baseline"]) == sc["timing"]["reps"]


def test_the_summary_interval_is_deterministic(baseline_as_candidate):
    again = copy.deepcopy(baseline_as_candidate)
    summarise(again, load_task(CPU_TASK), again["summary"]["seconds"])
    assert again["summary"]["speedup_vs_baseline_ci"] == baseline_as_candidate["summary"]["speedup_vs_baseline_ci"]
    assert again["summary"]["speedup_vs_peer_ci"] == baseline_as_candidate["summary"]["speedup_vs_peer_ci"]


def test_small_kernels_are_timed_many_calls_a_request(baseline_as_candidate):
    # The request costs about 0.1-0.3 ms of the executor's CPU; a 5 us kernel needs many calls per
    # request for that to be a small part of what is subtracted.
    small = next(sc for sc in baseline_as_candidate["scenarios"] if sc["id"] == "r7-c33")
    assert small["timing"]["batch"] >= 10
    # the re-check draws among every call of every batch (at least four of them)
    assert len(small["rechecked_calls"]) >= 4 and max(small["rechecked_calls"]) > small["timing"]["batch"]


def test_a_slower_candidate_is_slower(cache_dir, tmp_path):
    path = tmp_path / "slow.cpp"
    path.write_text(SLOWER)
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(path), scenarios="r256-c1024,r512-c512,r1-c4096",
                              cache_dir=cache_dir, with_peers=False))
    s = result["summary"]
    assert result["status"] == "ok", result["messages"]
    assert s["verdict_vs_baseline"] == "slower" and s["speedup_vs_baseline_ci"][1] < 1.0, s


# The run's best so far ("incumbent") is timed beside the candidate in the same rounds, in an
# executor of its own: a new best is decided on that comparison, not on two separate evaluations.
INC_SCENARIOS = "r256-c1024,r512-c512,r1-c4096"


def test_an_incumbent_is_timed_beside_the_candidate(cache_dir, tmp_path):
    slow = tmp_path / "slow.cpp"
    slow.write_text(SLOWER)
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), incumbent=str(slow),
                              scenarios=INC_SCENARIOS, cache_dir=cache_dir, with_peers=False))
    s = result["summary"]
    assert result["status"] == "ok" and result["incumbent"]["timed"], result["messages"]
    assert s["incumbent_scenarios"] == 3 and s["verdict_vs_incumbent"] == "faster", s
    # Three times the work: ~3x. The interval widens on a loaded CI machine (1.38x its lower end seen
    # there), so what is asserted is that it excludes "no faster" by a margin, and the estimate is ~3x.
    assert s["speedup_vs_incumbent_ci"][0] > 1.2 and s["speedup_vs_incumbent_geomean"] > 1.8, s
    # Each scenario's estimate is ~3x; its own interval, from 9-12 rounds, may still reach 1 on this
    # two-core machine (r256-c1024: 2.76 [0.95, 4.66] from 11 rounds, one round preempted), so one
    # scenario may read `same`, never `slower`, and the others `faster`.
    verdicts = [sc["verdict_vs_incumbent"] for sc in result["scenarios"]]
    assert verdicts.count("faster") >= 2 and set(verdicts) <= {"faster", "same"}, verdicts
    for sc in result["scenarios"]:
        assert sc["incumbent_ms"] > 1.8 * sc["time_ms"], sc["id"]
        assert len(sc["timing"]["ratios"]["incumbent"]) == sc["timing"]["reps"]
        assert "incumbent" in sc["timing"]["overhead_ms"]     # its own executor, its own request overhead
    # The baseline is still the baseline: the slower incumbent changed nothing there.
    assert s["verdict_vs_baseline"] in ("same", "faster", "slower")


def test_the_same_kernel_as_incumbent_reads_the_same(cache_dir, tmp_path):
    copy_of_baseline = tmp_path / "best.cpp"
    copy_of_baseline.write_text((CPU_TASK / "baseline.cpp").read_text() + "\n// the run's best: a comment apart\n")
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"),
                              incumbent=str(copy_of_baseline), scenarios=INC_SCENARIOS, cache_dir=cache_dir,
                              with_peers=False))
    s = result["summary"]
    lo, hi = s["speedup_vs_incumbent_ci"]
    # Within 1 % of reading the same: identical code in two executors can keep an offset of its own for
    # a whole evaluation, which no interval over rounds sees (0.993 here in CI once; the test above
    # bounds it); the engine's new-best margin (1 %) is set above it.
    assert lo <= 1.01 and hi >= 0.99, s
    assert not (s["verdict_vs_incumbent"] == "faster" and lo > 1.01), s


@pytest.mark.quiet
def test_identical_code_in_three_executors_reads_alike_from_one_evaluation_to_the_next(cache_dir):
    # The attack on an interval over rounds is an offset that holds for a whole evaluation, which it
    # cannot show: the same baseline, in the candidate's executor, its twin and the incumbent's, read
    # 0.88-1.21x on r256-c1024 over 15 evaluations (sd of the log 0.06) while the rounds of each said
    # +-2 %. Its causes on the development VM: where each implementation's buffers were allocated
    # (memory.new_sets) and where each process's stack and code lie (native/batch.c). With
    # both defences the sd is about 0.02; without the first 0.06-0.07, without the second 0.04.
    # The spread: the sd of 24 evaluations less the highest and the lowest (12 read 0.035 once on the
    # idle machine). Idle, the 24 read 0.019-0.027, 0.016-0.023 without the two ends; beside the vitest
    # suite 0.046-0.057 (CI): it is marked quiet, and `npm test` runs it after the other suites.
    EVALS = 24
    logs = {"baseline": [], "incumbent": []}
    baseline = str(CPU_TASK / "baseline.cpp")
    for _ in range(EVALS):
        r = evaluate(Options(task_dir=str(CPU_TASK), candidate=baseline, incumbent=baseline, scenarios="r256-c1024",
                             cache_dir=cache_dir, with_peers=False))
        assert r["status"] == "ok", r["messages"]
        for key, xs in logs.items():
            xs.append(math.log(r["scenarios"][0][f"speedup_vs_{key}"]))
    for key, xs in logs.items():
        spread = statistics.stdev(sorted(xs)[1:-1])
        assert spread < 0.045, (key, round(spread, 4), round(statistics.stdev(xs), 4), [round(math.exp(x), 3) for x in xs])


def test_an_incumbent_that_does_not_build_is_left_out_with_the_reason(cache_dir, tmp_path):
    broken = tmp_path / "broken.cpp"
    broken.write_text('extern "C" int softmax_rows(const float* x, float* y, long rows, long cols) { return }\n')
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), incumbent=str(broken),
                              scenarios="r1-c4096", cache_dir=cache_dir, with_peers=False))
    assert result["status"] == "ok" and result["incumbent"] == {"file": str(broken), "timed": False}
    assert any(m.startswith("incumbent: not timed: it does not build") for m in result["messages"]), result["messages"]
    assert "verdict_vs_incumbent" not in result["summary"]
    assert "speedup_vs_incumbent" not in result["scenarios"][0]


def test_per_scenario_offsets_of_identical_code_are_not_a_gain():
    # What the cpu task showed: identical code, each scenario with an offset of its own that holds
    # for all its rounds (its buffers' placement; sd 3 % here), round noise 1 %. Resampling rounds
    # alone calls most such evaluations faster or slower; drawing the scenarios too calls them the same
    # about as often as a 95 % interval should.
    rng = random.Random(11)
    same = 0
    trials = 60
    for t in range(trials):
        offsets = [math.exp(rng.gauss(0.0, 0.03)) for _ in range(11)]
        lists = [_noisy(o, 0.01, 15, 1000 * t + i) for i, o in enumerate(offsets)]
        same += verdict(geomean_ci(lists, random.Random(t), b=300)) == "same"
    assert same >= 0.85 * trials, same
    # A real gain on every scenario still reads faster.
    gain = [_noisy(1.2 * math.exp(rng.gauss(0.0, 0.03)), 0.01, 15, 200 + i) for i in range(11)]
    assert verdict(geomean_ci(gain, random.Random(6))) == "faster"


def test_a_slow_parent_does_not_shrink_the_batch_below_its_floor(cache_dir, monkeypatch):
    # The batch is capped by the parent's own work per call, but never so far that a request's
    # calls take little more than the request's own cost: that cost's noise then reads as speed
    # (identical code read 1.45x in a loaded CI run, when a preempted parent looked slow).
    import time

    from harness.timing import loop
    real = loop.Timer.fresh_round

    def slow(self, chosen):
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.02:   # 20 ms of the parent's CPU for every round's inputs
            pass
        return real(self, chosen)

    monkeypatch.setattr(loop.Timer, "fresh_round", slow)
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="r7-c33",
                              cache_dir=cache_dir, with_peers=False))
    sc = result["scenarios"][0]
    assert result["status"] == "ok", result["messages"]
    # A few-microsecond call: the request's calls still take most of MIN_BATCH_MS (0.5 ms) of CPU.
    assert sc["timing"]["batch"] * sc["time_ms"] >= 0.3, sc["timing"]


def test_the_parent_writes_each_rounds_inputs_on_that_rounds_core(cache_dir, monkeypatch):
    # A flush evicts only its own core's caches: inputs and poison written on another core stay in
    # that core's L2, and whichever implementation the parent wrote last is fetched from there
    # (identical code read 1.63x on r4096-c64). So every round's writes happen on the round's core.
    import os

    from harness.timing import loop, rounds
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: every round runs on it")
    seen, real_round, real_fresh = [], rounds.Pinning.round, loop.Timer.fresh_round

    def pinned(self, rng):
        real_round(self, rng)
        seen.append(["round", os.sched_getaffinity(0)])

    def fresh(self, chosen):
        seen.append(["fresh", os.sched_getaffinity(0)])
        return real_fresh(self, chosen)

    real_fresh_one = loop.Timer.fresh

    def fresh_one(self, *slots, **kw):     # the CPU bound's pairs write one seed's values (timing/bound.py)
        seen.append(["fresh", os.sched_getaffinity(0)])
        return real_fresh_one(self, *slots, **kw)

    real_fresh_slots = loop.Timer.fresh_slots

    def fresh_slots(self, chosen):     # the same, one copy per input over the slots' stacked copies
        seen.append(["fresh", os.sched_getaffinity(0)])
        return real_fresh_slots(self, chosen)

    monkeypatch.setattr(rounds.Pinning, "round", pinned)
    monkeypatch.setattr(loop.Timer, "fresh_round", fresh)
    monkeypatch.setattr(loop.Timer, "fresh", fresh_one)
    monkeypatch.setattr(loop.Timer, "fresh_slots", fresh_slots)
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="r4096-c64",
                              cache_dir=cache_dir, with_peers=False))
    assert result["status"] == "ok", result["messages"]
    rounds = [i for i, (what, _) in enumerate(seen) if what == "round"]
    assert len(rounds) >= 8
    for i in rounds:   # the round's inputs are written next, on the core it was just pinned to
        assert seen[i + 1][0] == "fresh" and seen[i + 1][1] == seen[i][1] and len(seen[i][1]) == 1


def test_an_interval_that_clears_one_by_less_than_the_margin_is_the_same():
    # What the cpu task's quick set gave for the baseline against itself, 1 evaluation in 30
    assert verdict([1.0024, 1.1381]) == "same" and verdict([0.88, 0.995]) == "same"
    assert verdict([1.0101, 1.05]) == "faster" and verdict([0.95, 0.9899]) == "slower"


def test_where_the_correctness_stage_spends_its_time(baseline_as_candidate):
    # Each scenario's correctness stage by phase (ms), and the evaluation's sums in time_spent.
    spent = baseline_as_candidate["time_spent"]
    total = 0.0
    for sc in baseline_as_candidate["scenarios"]:
        parts = sc["correctness_ms"]
        assert {"reference", "calls", "compare", "baseline"} <= set(parts), parts
        assert all(v >= 0 for v in parts.values())
        # the phases are laps of the stage's own clock: together no more than the stage took
        assert sum(parts.values()) <= sc["stage_seconds"]["correctness"] * 1e3 + 1.0, (parts, sc["stage_seconds"])
        total += parts["calls"]
    assert spent["correctness_calls"] == pytest.approx(total / 1e3, abs=0.01)
    assert spent["correctness_reference"] > 0
