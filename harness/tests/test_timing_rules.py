"""The timing rules that need no device: the noise estimate, paired ratios, the stopping rule, the deck.

(The CUDA loop's bounds by the wall clock, the tail and the GPU's busy time: test_cuda_bounds.py.)"""

import math

from harness.timing.stats import geomean, median, rse_of_median


def test_rse_of_median_ignores_one_outlier():
    steady = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0]
    base = rse_of_median(steady)
    assert 0.003 < base < 0.01                          # ~1% spread over 10 samples
    assert rse_of_median(steady + [50.0]) <= base       # a preempted repetition does not inflate it
    assert rse_of_median([1.0, 2.0]) == math.inf        # too few samples to say


def test_geomean_and_median():
    assert math.isclose(geomean([1.0, 4.0]), 2.0) and geomean([None, 0.0]) is None
    assert median([3, 1, 2]) == 2 and median([1, 2, 3, 4]) == 2.5


def _round_samples(cand, other):
    return {"candidate": {"ms": list(cand)}, "baseline": {"ms": list(other)}}


def _with_peer(cand, peer):
    return {"candidate": {"ms": list(cand)}, "peer:torch": {"ms": list(peer)}}


def test_rounds_stop_once_a_far_ratio_has_settled_its_verdict():
    from harness.timing.rounds import done
    policy = {"min_reps": 8, "max_reps": 200, "max_seconds": 10.0, "target_rse": 0.02}
    noisy = [1.0, 1.25, 0.8, 1.2, 0.85, 1.1, 0.9, 1.3, 0.75, 1.15, 0.95, 1.05] * 2   # ~15 % a round
    cand = [1.0] * len(noisy)
    # A peer with that spread about 6x: every round says the candidate is faster; more rounds change nothing.
    assert done(_with_peer(cand, [6 * x for x in noisy]), policy, 0.1)
    # About 1.0 it decides nothing yet: the rounds go on until the spread is the target's.
    assert not done(_with_peer(cand, noisy), policy, 0.1)
    assert not done(_round_samples(cand, noisy), policy, 0.1)
    # Under 2 x min_reps rounds the spread itself is too uncertain to stop early on, however far.
    assert not done(_with_peer(cand[:12], [6 * x for x in noisy[:12]]), policy, 0.1)
    # Past max_seconds everything stops.
    assert done(_round_samples(cand, noisy), policy, 10.0)


def test_the_candidates_and_the_baselines_own_times_must_be_known_before_an_early_stop():
    from harness.timing.rounds import OWN_FACTOR, done
    from harness.timing.stats import TRIMMED_MEAN, rse_of_median
    policy = {"min_reps": 8, "max_reps": 500, "max_seconds": 1.0, "target_rse": 0.005, "own_times": True,
              "figure": TRIMMED_MEAN}
    # Times in CUPTI's 32 ns steps about 3.4 us (r1-c4096): most rounds read the same step for both,
    # so the paired ratio's MAD is nothing and the ratio reads settled at 32 rounds, while each
    # time spreads over several steps.
    steps = [round(3.200 + 0.032 * k, 3) for k in range(17)]      # 3.2-3.712 us
    cand = [steps[(i * 5) % 17] for i in range(32)]
    base = list(cand)
    for i in range(0, 32, 8):
        base[i] = steps[(i * 5 + 1) % 17]
    ratios = [b / c for b, c in zip(base, cand)]
    assert rse_of_median(ratios) <= policy["target_rse"]
    assert TRIMMED_MEAN.rse(base) > OWN_FACTOR * policy["target_rse"]
    assert not done(_round_samples(cand, base), policy, 0.2)
    assert done(_round_samples(cand, base), policy, 1.0)        # the cap still holds
    # A CPU task's rounds stop on the ratio as before (its CUDA loop asks for own_times).
    assert done(_round_samples(cand, base), dict(policy, own_times=False), 0.2)
    # Steady times and a settled ratio stop the rounds as before.
    flat = [3.456] * 30 + [3.424, 3.488]
    assert done(_round_samples(flat, list(flat)), policy, 0.2)


def test_an_offset_on_a_run_of_equal_steps_does_not_stop_the_rounds_as_far_from_one():
    # The seventh session's r1-c1024 (H200): identical code, the candidate's executor two 32 ns steps
    # over the baseline's for most of 28 rounds (2.240 against 2.176 us), a quarter of the rounds on
    # the slow placements (2.5-2.8 us). Every ratio but those reads 1.029: its MAD is nothing, so the
    # ratio looks 1.029 +- 0 and "far from 1.0" stopped the rounds; the medians' MAD is nothing too,
    # so the own-median rule let it (x baseline [0.930, 0.986] there; 185-215 rounds elsewhere read
    # within 1.5 %). The trimmed mean's error sees the slow quarter: the rounds go on.
    from harness.timing.rounds import done
    from harness.timing.stats import MEDIAN, TRIMMED_MEAN
    policy = {"min_reps": 10, "max_reps": 1000, "max_seconds": 0.8, "target_rse": 0.005, "own_times": True}
    slow = [2.496, 2.560, 2.624, 2.688, 2.752, 2.816, 2.528]
    cand = [2.240] * 21 + slow
    base = [2.176] * 21 + slow
    samples = _round_samples(cand, base)
    assert done(samples, dict(policy, figure=MEDIAN), 0.1)            # what stopped it at 28 rounds
    assert not done(samples, dict(policy, figure=TRIMMED_MEAN), 0.1)
    assert done(samples, dict(policy, figure=TRIMMED_MEAN), 0.8)      # the cap still holds


def test_a_figure_kept_for_later_evaluations_is_measured_to_the_target_on_its_own():
    import random

    from harness.timing.rounds import done
    from harness.timing.stats import TRIMMED_MEAN, rse_of_median
    policy = {"min_reps": 8, "max_reps": 500, "max_seconds": 1.0, "target_rse": 0.005, "figure": TRIMMED_MEAN}
    rng = random.Random(1)
    # The peer in two modes 12 % apart, nearly half its calls in the upper one (the cuDNN peer's
    # memset-to-kernel gap, docs/harness-lab.md): the candidate is 6x faster every round, so the ratio
    # settled its verdict, but the peer's figure is still loose.
    peer = [(6.72 if i % 2 else 6.0) * (1 + rng.gauss(0, 0.005)) for i in range(20)]
    samples = {"candidate": {"ms": [1.0] * 20}, "peer:cudnn": {"ms": peer}}
    assert done(samples, policy, 0.1)                                   # not kept: the verdict is all
    keep = dict(policy, kept=["peer:cudnn"], kept_seconds=3.0)
    assert not done(samples, keep, 0.1)
    assert not done(samples, keep, 1.5)                                 # past max_seconds, within kept_seconds
    assert done(samples, keep, 3.0)                                     # the kept figure's own cap
    # Sixty rounds with 45 % in the upper mode: the MAD's standard error of the median reads under the
    # target; the trimmed mean's own error does not.
    mixed = [(6.72 if rng.random() < 0.45 else 6.0) * (1 + rng.gauss(0, 0.005)) for _ in range(60)]
    assert rse_of_median(mixed) < 0.005
    assert not done({"candidate": {"ms": [1.0] * 60}, "peer:cudnn": {"ms": mixed}}, keep, 0.5)
    # Steady, the kept figure stops the rounds as before.
    steady = {"candidate": {"ms": [1.0] * 20}, "peer:cudnn": {"ms": [6.0 * (1 + rng.gauss(0, 0.005)) for _ in range(20)]}}
    assert done(steady, keep, 0.1)


def test_a_deck_gives_every_slot_once_a_pass_in_a_new_order_each_pass():
    import random
    from harness.timing.rounds import Deck
    deck = Deck(random.Random(3), 7)
    passes = [[deck.draw() for _ in range(7)] for _ in range(3)]
    assert all(sorted(p) == list(range(7)) for p in passes)
    assert len({tuple(p) for p in passes}) == 3


def test_drawing_slots_from_a_deck_narrows_the_medians_spread():
    # A slot's placement costs a tiny kernel more or less than another's, the same all evaluation
    # (here a third of 256 slots at 2.4 us, the rest 2.2 us, calls +-5 %). Drawn with replacement the
    # slots come up unevenly, and the median of 190 rounds wanders with the share of slow ones; from
    # a deck (every slot once a pass) only the 66 slots the pass did not reach vary. 300 evaluations.
    import random
    from harness.timing.rounds import Deck

    def spread(with_deck):
        rng, meds = random.Random(11), []
        for _ in range(300):
            costs = [2.2 if j % 3 else 2.4 for j in range(256)]
            deck = Deck(rng, 256)
            picks = [deck.draw() if with_deck else rng.randrange(256) for _ in range(190)]
            meds.append(median([costs[j] * (1 + rng.uniform(-0.05, 0.05)) for j in picks]))
        meds.sort()
        return meds[-8] / meds[7] - 1       # the middle 95 % of the medians
    assert spread(True) < 0.85 * spread(False)      # 1.55 % against 2.08 %


def test_a_trimmed_mean_leaves_out_its_ends_and_knows_its_own_error():
    from harness.timing.stats import rse_of_trimmed_mean, trimmed_mean
    assert trimmed_mean([]) is None and trimmed_mean([2.0]) == 2.0
    xs = [1.0] * 18 + [0.0, 100.0]                 # 20 values: one left out at each end
    assert trimmed_mean(xs) == 1.0
    assert trimmed_mean(xs, 0.0) == 118.0 / 20
    assert rse_of_trimmed_mean([1.0, 2.0]) == math.inf
    assert rse_of_trimmed_mean([1.0] * 30) == 0.0
    # Its interval (figure +- 1.96 x error) covers the trimmed mean of the calls' population about
    # 95 % of the time at the sizes the rounds stop at, on calls like a one-block kernel's: most on
    # one 32 ns step, a quarter on slow placements.
    import random
    rng = random.Random(5)

    def call():
        return 2.176 + 0.032 * rng.randrange(2) if rng.random() < 0.75 else 2.5 + 0.3 * rng.random()
    truth = trimmed_mean([call() for _ in range(400_000)])
    for n in (30, 100, 230):
        hits = 0
        for _ in range(1000):
            xs = [call() for _ in range(n)]
            m, e = trimmed_mean(xs), rse_of_trimmed_mean(xs) * trimmed_mean(xs)
            hits += abs(m - truth) <= 1.96 * e
        assert 0.92 <= hits / 1000 <= 0.98, (n, hits)


def test_a_call_in_two_modes_reads_between_them_not_in_either():
    # The cuDNN peer (H200): its calls come in two modes 10 % apart, the upper one's share differing
    # from process to process (4-18 % in the harness's rounds, about half in cupti_fidelity's, on the
    # same scenario). A median sits in either mode, so a share of 45 % in one process and 55 % in
    # another reads 10 % apart; a mean reads the calls in proportion, 1 % apart.
    from harness.timing.stats import median, trimmed_mean

    def calls(upper):          # 200 calls, `upper` of them in the upper mode, a 0.1 % ripple
        return [(8.8 if i < upper else 8.0) * (1 + 0.001 * ((i * 7) % 5 - 2)) for i in range(200)]
    assert median(calls(110)) / median(calls(90)) > 1.09
    assert 1.005 < trimmed_mean(calls(110)) / trimmed_mean(calls(90)) < 1.015
    # Against the share the process read, the figure is the calls' mean, less what the ends cut.
    for upper in (8, 24, 100, 150):
        assert abs(trimmed_mean(calls(upper)) / (8.0 * (1 + 0.1 * upper / 200)) - 1) < 0.006


def test_a_trimmed_mean_over_placements_repeats_better_than_the_median():
    # A one-block kernel's calls cluster by placement (H200, fifth session: up to 8 % apart, the same
    # all evaluation) and in 32 ns steps; the median of 230 rounds sits in whichever gap between
    # clusters the evaluation's draw of placements left it (resampling the H200's rounds: two
    # evaluations over 2 % apart on some scenario in 44-56 % of trials by the median, 18-21 % by a
    # mean). 300 evaluations of identical code, each with placements of its own, in three clusters.
    import random
    from harness.timing.rounds import Deck
    from harness.timing.stats import median, trimmed_mean
    rng = random.Random(13)

    def evaluation(fig):
        costs = [rng.choices((2.048, 2.304, 2.592), (0.45, 0.35, 0.2))[0] for _ in range(256)]
        deck = Deck(rng, 256)
        return fig([round(costs[deck.draw()] + 0.032 * rng.choice((-1, 0, 0, 0, 1)), 3) for _ in range(230)])

    def spread(fig):
        figs = sorted(evaluation(fig) for _ in range(300))
        return figs[-8] / figs[7] - 1          # the middle 95 % of the evaluations' figures
    assert spread(trimmed_mean) < 0.5 * spread(median)      # 2.6 % against 10 %


def _aa(rng, n, ms, sd, ratio=1.0):
    """n rounds of a candidate of `ms` and a baseline `ratio` x slower, each with relative noise `sd`."""
    cand = [ms * (1 + rng.gauss(0, sd)) for _ in range(n)]
    return _round_samples(cand, [ratio * ms * (1 + rng.gauss(0, sd)) for _ in range(n)])


def test_a_verdict_settled_by_its_interval_stops_the_rounds_before_min_reps():
    import random

    from harness.timing.rounds import EARLY_REPS, done
    from harness.timing.stats import TRIMMED_MEAN
    rng = random.Random(3)
    policy = {"min_reps": 10, "max_reps": 1000, "max_seconds": 0.25, "target_rse": 0.005, "own_times": True,
              "figure": TRIMMED_MEAN}
    # A 2 ms kernel read within 0.1 % a round (flash's large scenarios on the H100): by six rounds the
    # ratio's interval [min, max] lies well inside the `same` band, and more rounds cannot change that.
    steady = _aa(rng, EARLY_REPS, 2.0, 0.001)
    assert done(steady, policy, 0.01)
    assert not done(_aa(rng, EARLY_REPS - 1, 2.0, 0.001), policy, 0.01)      # [min, max] of 5: under 95 %
    assert not done(steady, dict(policy, early=False), 0.01)                # --full-rounds
    assert not done(steady, dict(policy, kept=["baseline"]), 0.01)          # a figure kept for later: to the target
    # Far from 1.0 on both sides (a peer 1.3x, 0.7x): settled; a few percent off 1.0 is not, nor is noise.
    assert done(_aa(rng, EARLY_REPS, 2.0, 0.002, ratio=1.3), policy, 0.01)
    assert done(_aa(rng, EARLY_REPS, 2.0, 0.002, ratio=0.7), policy, 0.01)
    assert not done(_aa(rng, EARLY_REPS, 2.0, 0.001, ratio=1.03), policy, 0.01)
    assert not done(_aa(rng, EARLY_REPS, 2.0, 0.02), policy, 0.01)
    # A small kernel on a run of equal steps reads an error of nothing: never early (the seventh session's case).
    assert not done(_round_samples([0.00224] * 6, [0.00224] * 6), policy, 0.01)
    # Own times looser than half the target (CUDA) go on, even with the ratio settled.
    cand = [2.0 * (1 + 0.012 * (-1) ** i) for i in range(EARLY_REPS)]
    assert not done(_round_samples(cand, [c * 1.001 for c in cand]), policy, 0.01)
    assert done(_round_samples(cand, [c * 1.001 for c in cand]), dict(policy, own_times=False), 0.01)


def test_stopping_early_gives_the_verdicts_all_the_rounds_give():
    """Simulated scenarios (true ratio, noise a round) timed to the end with and without the early stop:
    the early verdicts are those of the full rounds, never a difference for identical code, and the
    early stop saves rounds where the noise is small."""
    import random

    from harness.timing.rounds import done
    from harness.timing.stats import TRIMMED_MEAN, ratio_ci, verdict
    rng = random.Random(7)
    policy = {"min_reps": 10, "max_reps": 60, "max_seconds": 1e9, "target_rse": 0.005, "own_times": True,
              "figure": TRIMMED_MEAN}

    def rounds_until_done(cand, base, pol):
        for n in range(3, len(cand) + 1):
            s = _round_samples(cand[:n], base[:n])
            if done(s, pol, 0.0):
                return n
        return len(cand)

    saved, differ, trials = 0, 0, 0
    for ratio in (1.0, 1.0, 1.005, 1.02, 1.3, 0.75):
        for sd in (0.0005, 0.002, 0.01):
            for _ in range(60):
                cand = [1.0 * (1 + rng.gauss(0, sd)) for _ in range(60)]
                base = [ratio * (1 + rng.gauss(0, sd)) for _ in range(60)]
                early = rounds_until_done(cand, base, policy)
                full = rounds_until_done(cand, base, dict(policy, early=False))
                v_early = verdict(ratio_ci([b / c for c, b in zip(cand[:early], base[:early])]))
                v_full = verdict(ratio_ci([b / c for c, b in zip(cand[:full], base[:full])]))
                trials += 1
                saved += full - early
                differ += v_early != v_full
                if ratio == 1.0:
                    assert v_early == "same"
    assert differ <= 0.01 * trials, (differ, trials)
    assert saved > 0


def test_a_call_past_a_bound_keeps_the_rounds_going_to_min_reps():
    # CUDA: the bounds (tail, busy, excess, gap) speak on an interval over the rounds, which six rounds
    # make wider: a scenario where any call came past a bound's limit is not stopped early.
    import random

    from harness.timing.cuda_loop import bound_limits, bounds_clear
    from harness.timing.rounds import EARLY_REPS, done
    from harness.timing.stats import TRIMMED_MEAN
    rng = random.Random(5)
    policy = {"min_reps": 10, "max_reps": 1000, "max_seconds": 0.25, "target_rse": 0.005, "own_times": True,
              "figure": TRIMMED_MEAN, "early_guard": bounds_clear}
    samples = _aa(rng, EARLY_REPS, 2.0, 0.001)
    for s in samples.values():
        s.update(tail_ms=[0.005] * EARLY_REPS, busy_ms=[0.19] * EARLY_REPS, excess_ms=[0.7] * EARLY_REPS)
    assert done(samples, policy, 0.01)
    samples["candidate"]["tail_ms"][3] += 2 * bound_limits(2.0)["tail_ms"]      # one call's work past the end event
    assert not done(samples, policy, 0.01)
    del samples["candidate"]["tail_ms"]                                           # not there to look at
    assert not done(samples, policy, 0.01)


def test_a_kept_peers_figure_must_settle_its_verdict_too():
    # CUDA with the peers' figures kept: they are paired with every round of the candidate after the
    # loop, so their verdicts are settled before an early stop like the baseline's.
    import random

    from harness.timing.rounds import EARLY_REPS, done
    from harness.timing.stats import TRIMMED_MEAN
    rng = random.Random(9)
    policy = {"min_reps": 10, "max_reps": 1000, "max_seconds": 0.25, "target_rse": 0.005, "own_times": True,
              "figure": TRIMMED_MEAN}
    samples = _aa(rng, EARLY_REPS, 2.0, 0.002)
    assert done(samples, dict(policy, early_fixed={"peer:cudnn": 1.0}), 0.01)          # 0.5x: far
    assert done(samples, dict(policy, early_fixed={"peer:cudnn": 2.0}), 0.01)          # 1.0x: inside the band
    assert not done(samples, dict(policy, early_fixed={"peer:cudnn": 2.02}), 0.01)     # 1.01x: on its edge
