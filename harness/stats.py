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
