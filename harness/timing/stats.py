"""Summary statistics for timing samples and speedups."""

import math
from typing import Callable, NamedTuple

import torch


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


def interquartile_mean(xs):
    """The mean of the middle half (the lowest and highest quarter left out); None when empty."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    cut = n // 4
    mid = s[cut:n - cut]
    return sum(mid) / len(mid)


# The share of a CUDA scenario's rounds left out at each end of its time (TIME_TRIM below).
TIME_TRIM = 0.05


def trimmed_mean(xs, trim=TIME_TRIM):
    """The mean of `xs` with floor(trim x n) values left out at each end; None when empty. A CUDA
    call's time (its work in CUPTI's records) is what the GPU spent on it, so the time a kernel
    costs per call is a mean, the figure torch.profiler's averages report; the ends go for what the
    mean should not carry (a round the clocks' rule kept at a dip, a rare stall). Against the median
    it replaced as a CUDA scenario's time (docs/harness-lab.md, "Eighth session"): a call in two modes
    (the cuDNN peer's, 10 % apart, in a share that differs from process to process) reads between
    them in proportion instead of in either one; and calls that cluster by where their memory lies
    (a one-block kernel's placements, up to 8 % apart) are averaged over the placements drawn, where
    the median sat in whichever gap between clusters the draw left it."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    g = int(trim * n)
    mid = s[g:n - g]
    return sum(mid) / len(mid)


def rse_of_trimmed_mean(xs, trim=TIME_TRIM):
    """Relative standard error of trimmed_mean(xs, trim), by Tukey and McLaughlin: the winsorized
    sample's standard deviation (the cut values replaced by the nearest kept one) over
    (1 - 2 g/n) sqrt(n). Unlike the MAD's error (rse_of_median), it sees calls that come in 32 ns steps
    or in clusters: most rounds on one step leave a MAD of zero while the rest still move the mean.
    inf under 3 values or for a figure that is not positive."""
    s = sorted(xs)
    n = len(s)
    if n < 3:
        return math.inf
    g = int(trim * n)
    mid = s[g:n - g]
    w = [s[g]] * g + mid + [s[n - g - 1]] * g
    mw = sum(w) / n
    var = sum((x - mw) ** 2 for x in w) / (n - 1)
    tm = sum(mid) / len(mid)     # trimmed_mean(xs, trim), without sorting again (every round, rounds.done)
    if not tm or tm <= 0:
        return math.inf
    return math.sqrt(var) / ((1 - 2 * g / n) * math.sqrt(n)) / tm


class Figure(NamedTuple):
    """How a scenario's rounds make one implementation's time: the statistic and its relative
    standard error (the stopping rules' precision, rounds.done)."""
    name: str
    of: Callable
    rse: Callable


# The CPU tasks' time: wall-clock rounds carry the host's preemptions, which a median ignores.
MEDIAN = Figure("median", median, rse_of_median)
# The CUDA tasks' time: CUPTI spans, the GPU's own record of each call (trimmed_mean above).
TRIMMED_MEAN = Figure(f"mean of the middle {100 - 200 * TIME_TRIM:.0f} %", trimmed_mean, rse_of_trimmed_mean)


def harrell_davis_median(xs):
    """The Harrell-Davis estimate of the median: every order statistic weighted by how likely it is to
    be the median of a sample of this size (Beta((n+1)/2, (n+1)/2) mass over its rank's interval).
    Between the sample median and the mean: steadier than the median on samples that come in steps
    (CUPTI's 32 ns on a 2 us kernel) or in two modes. The extremes' weights shrink fast with n: one
    wild round moves it nothing at 41 rounds, but pulls it at 5 (the median's robustness only once
    the sample is large)."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    a = (n + 1) / 2
    cdf = [_beta_cdf(i / n, a, a) for i in range(n + 1)]
    return sum(x * (cdf[i + 1] - cdf[i]) for i, x in enumerate(s))


def _beta_cdf(x, a, b):
    """The regularised incomplete beta function I_x(a, b) (a, b > 0), by its continued fraction."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(x, a, b) / a
    return 1.0 - front * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x, a, b, tiny=1e-300, eps=1e-13):
    """The continued fraction of I_x(a, b) in Lentz's form (converges for x < (a+1)/(a+b+2))."""
    def nz(v):
        return v if abs(v) > tiny else tiny
    c, d = 1.0, 1.0 / nz(1.0 - (a + b) * x / (a + 1))
    h = d
    for m in range(1, 10000):
        for coef in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                     -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 / nz(1.0 + coef * d)
            c = nz(1.0 + coef / c)
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


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
# under the interval's own width between seeds, few enough that 200 scenarios cost well under a second
# (drawn as one tensor: in pure Python, six intervals a scenario took 0.19 s of flash's timing stage).
BOOTSTRAP_REPLICATES = 1000
CI_LEVEL = 0.95


class _one_thread:
    """Tensors this small gain nothing from threads; and the parent runs rounds pinned to one core,
    where torch's pool of intra-op threads (16 on the GPU host) made each interval take ~100 ms
    (a rmsnorm evaluation went from 15 to 32 s)."""

    def __enter__(self):
        self.before = torch.get_num_threads()
        if self.before != 1:
            torch.set_num_threads(1)

    def __exit__(self, *exc):
        if self.before != 1:
            torch.set_num_threads(self.before)


def _generator(rng):
    """A torch generator seeded from `rng` (random.Random): the same rng, the same interval."""
    return torch.Generator().manual_seed(rng.getrandbits(62))


def _replicate_medians(values, rng, b):
    """[b] medians (the mean of the middle two for an even count) of `values` resampled with
    replacement, as a float64 tensor."""
    with _one_thread():
        x = torch.tensor(values, dtype=torch.float64)
        n = x.numel()
        drawn = x[torch.randint(n, (b, n), generator=_generator(rng))].sort(dim=1).values
        return 0.5 * (drawn[:, (n - 1) // 2] + drawn[:, n // 2])


def _interval(values):
    """Linear-interpolated 2.5 and 97.5 percentiles of a float64 tensor (as percentile() does)."""
    alpha = (1.0 - CI_LEVEL) / 2
    with _one_thread():
        q = torch.quantile(values, torch.tensor([alpha, 1.0 - alpha], dtype=torch.float64))
    return [float(q[0]), float(q[1])]


def ratio_ci(ratios):
    """95 % interval [lo, hi] of the median of one scenario's paired per-round ratios: the
    distribution-free one from order statistics, [x(k), x(n+1-k)] with the largest k for which
    P(Binomial(n, 1/2) < k) <= 2.5 %, so at least 95 % whatever the rounds' distribution (a round is
    the unit the pairing makes comparable). The percentile bootstrap it replaced covered 91 % at 8
    rounds and 93-94 % at 10-30 (1000 simulated scenarios each, harness/tests/test_timing_verdict.py),
    and scenarios often stop at 8-20 rounds. Under 6 rounds even [min, max] covers less than 95 %:
    it is given, at 3-5 rounds, as the widest there is. None under 3."""
    xs = sorted(r for r in ratios if r is not None and r > 0 and math.isfinite(r))
    n = len(xs)
    if n < 3:
        return None
    k = _order_rank(n)
    return [xs[k - 1], xs[n - k]]


def _order_rank(n, tail=(1.0 - CI_LEVEL) / 2):
    """The largest k >= 1 with P(Binomial(n, 1/2) <= k - 1) <= tail (log-space: 2^-n underflows)."""
    k, cum = 0, 0.0
    log_half = -n * math.log(2.0)
    while k < n:
        p = math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + log_half)
        if cum + p > tail:
            break
        cum += p
        k += 1
    return max(1, k)


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
    logs = torch.stack([_replicate_medians(rs, rng, b).log() for rs in lists])      # [k, b]
    k = len(lists)
    with _one_thread():
        drawn = torch.randint(k, (b, k), generator=_generator(rng)) if k > 1 else torch.zeros((b, 1), dtype=torch.long)
        means = logs[drawn, torch.arange(b).unsqueeze(1)].mean(dim=1).exp()
    return _interval(means)


# A verdict's margin: `faster` only when the whole interval lies above 1 + this, `slower` only when
# it lies below 1 / (1 + this). A 95 % interval excludes 1.0 for one identical kernel in forty (on
# the cpu task's quick set, 1 of 30 evaluations of the baseline against itself read 1.0556
# [1.0024, 1.1381]); such an interval barely clears 1.0, and the margin calls it `same`. The engine's
# new-best rule asks the same 1 % of the interval's bottom (src/harness/significance.ts).
VERDICT_MARGIN = 0.01


def verdict(ci):
    """faster | slower | same: a difference only when the interval excludes 1.0 by the margin
    (VERDICT_MARGIN) on its side; None without an interval."""
    if ci is None:
        return None
    lo, hi = ci
    if lo > 1.0 + VERDICT_MARGIN:
        return "faster"
    if hi < 1.0 / (1.0 + VERDICT_MARGIN):
        return "slower"
    return "same"
