"""Summary statistics for timing samples and speedups."""

import math


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def rse_of_median(xs):
    """Relative standard error of the median, from a robust spread estimate.

    sigma = 1.4826 * MAD (the standard deviation for normal data, but insensitive to the occasional
    preempted repetition), and the standard error of a median is about 1.2533 * sigma / sqrt(n).
    """
    n = len(xs)
    if n < 3:
        return math.inf
    m = median(xs)
    if not m or m <= 0:
        return math.inf
    mad = median([abs(x - m) for x in xs])
    return 1.2533 * 1.4826 * mad / math.sqrt(n) / m


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0 and math.isfinite(x)]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def percentile(xs, q):
    s = sorted(xs)
    if not s:
        return None
    pos = (len(s) - 1) * q
    lo, hi = int(math.floor(pos)), int(math.ceil(pos))
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


# Bootstrap replicates for the speedup intervals: enough that the 2.5/97.5 percentiles move by well
# under the interval's own width between seeds, few enough that 200 scenarios cost well under a second.
BOOTSTRAP_REPLICATES = 1000
CI_LEVEL = 0.95


def _replicate_medians(ratios, rng, b):
    n = len(ratios)
    return [median(rng.choices(ratios, k=n)) for _ in range(b)]


def _interval(values):
    alpha = (1.0 - CI_LEVEL) / 2
    return [percentile(values, alpha), percentile(values, 1.0 - alpha)]


def ratio_ci(ratios, rng, b=BOOTSTRAP_REPLICATES):
    """95 % percentile-bootstrap interval [lo, hi] of the median of one scenario's paired per-round
    ratios (resampling rounds: a round is the unit the pairing makes comparable); None under 3."""
    ratios = [r for r in ratios if r is not None and r > 0 and math.isfinite(r)]
    if len(ratios) < 3:
        return None
    return _interval(_replicate_medians(ratios, rng, b))


def median_ci(values, rng, b=BOOTSTRAP_REPLICATES):
    """95 % percentile-bootstrap interval [lo, hi] of the median of paired differences (either sign);
    None under 3 values."""
    values = [v for v in values if v is not None and math.isfinite(v)]
    if len(values) < 3:
        return None
    return _interval(_replicate_medians(values, rng, b))


def geomean_ci(per_scenario, rng, b=BOOTSTRAP_REPLICATES):
    """95 % interval of the geomean over scenarios of each scenario's median ratio, by a two-level
    bootstrap: every replicate draws the scenarios with replacement, then the rounds within each
    drawn scenario, takes each median, then the geomean. Resampling rounds alone treats each
    scenario's median as exact up to round-to-round noise; identical code says otherwise: on the
    cpu task one scenario read 1.094 in one evaluation and 0.977 in the next (its buffers' placement
    in memory is fixed for a scenario, so its offset does not vary between rounds), and such offsets
    made an interval of the baseline against itself exclude 1.0 (CI, 2026-12-01). Drawing the
    scenarios too counts that spread. None when a scenario has under 3 rounds."""
    lists = [[r for r in rs if r is not None and r > 0 and math.isfinite(r)] for rs in per_scenario]
    if not lists or any(len(rs) < 3 for rs in lists):
        return None
    # Each scenario's replicate medians once, then scenarios drawn per replicate.
    medians = [[math.log(m) for m in _replicate_medians(rs, rng, b)] for rs in lists]
    k = len(lists)
    logs = []
    for i in range(b):
        drawn = rng.choices(range(k), k=k) if k > 1 else [0]
        logs.append(sum(medians[j][i] for j in drawn) / k)
    return _interval([math.exp(v) for v in logs])


def verdict(ci):
    """faster | slower | same: a difference only when the interval excludes 1.0; None without one."""
    if ci is None:
        return None
    lo, hi = ci
    if lo > 1.0:
        return "faster"
    if hi < 1.0:
        return "slower"
    return "same"
