"""What an evaluation is asked to do (`evaluate(Options(...))`). Standard library only: the command
line builds it, and starts the peers' executor from it, before it imports torch."""

from dataclasses import dataclass

from .executor.lanes import DEFAULT_PROCESSES
from .progress import Progress


@dataclass
class Options:
    task_dir: str
    candidate: str
    scenarios: str = "all"
    device: str = None
    seeds: int = 2
    seed: int = None
    with_peers: bool = True
    with_baseline: bool = True
    # A scenario's rounds may stop before the task's min_reps once every interval settles its verdict
    # (harness/timing/rounds.py, EARLY_REPS); `--full-rounds` turns it off.
    early_stop: bool = True
    # The run's current best (a source file): timed beside the candidate in an executor of its own, so
    # that "better than the best so far" is measured, not inferred from two separate evaluations.
    incumbent: str = None
    cache_dir: str = None
    # The reference's outputs and lowp's error kept on the host per task, scenario, seed and device,
    # in at most this many GiB of the data dir (harness/task/refcache.py); 0: computed every time.
    reference_cache_gb: float = 16.0
    # Without `seed`, an evaluation's correctness seeds after each scenario's first derive from one of
    # the host's `seed_pool` base seeds, drawn at random (kept in the reference cache, which they then
    # meet again); each scenario's first seed is always the evaluation's own, fresh. 0 or no reference
    # cache: all from the evaluation's own random base, like every other seed.
    seed_pool: int = 2
    call_timeout: float = 30.0
    timeout: float = 1800.0
    # When the evaluation's process started (time.monotonic()): `timeout` counts from there, not from
    # evaluate()'s call; None, from the call (a caller that runs several evaluations in one process).
    started: float = None
    progress: Progress = None
    # Tests turn the executor's seccomp filter off to show the checks behind it still catch a class.
    confine: bool = True
    # The executors run inside bubblewrap (harness/sandbox/bwrap.py) when it works on this host.
    sandbox: bool = True
    # Tests turn the symbol allowlist off (the denylist stays) to show the run-time defences behind
    # it catch a class by themselves: each layer is tested alone, not only the first that fires.
    allowlist: bool = True
    # Bound requests (harness/timing/bound.py): the candidate's figures bounded from below by the
    # parent's own clock around lean calls beside the baseline's (CUDA: the wall clock; CPU, issue 39:
    # the kernel's account of the executor's CPU, and the null requests' calibration capped by the
    # twin's). Tests turn them off to show the cheat they defend against paying off without them.
    bound: bool = True
    # CUDA: bound requests in batch mode (harness/timing/bound.py, measure_batch): per pair one call and a
    # batch of K back-to-back calls in each executor, the per-call figure the slope between them, so that
    # what a request costs apart from its calls (tens of microseconds, different in each executor on an
    # H100) cancels. Off by default until a GPU run shows it on the adversarial set and the A/A.
    bound_batch: bool = False
    # Issue 39: every correctness seed after the first on inputs of another distribution than the
    # task's generator (harness/task/variants.py). Tests turn it off to show a tuned kernel passing.
    variants: bool = True
    # CUDA: before every flush the parent resets persisting L2 lines and the device's set-aside from its
    # own context (harness/timing/devices.py). Tests turn it off to measure what a forged check gains.
    parent_l2: bool = True
    # CUDA: keep the peers' figures per GPU and use them in later evaluations (harness/timing/peer_figures.py).
    # Seen on the H200: the second evaluation's peer figures are the first's, flash's quick set took
    # 5.6 s instead of 30.8 s (docs/harness-lab.md, "Speed").
    keep_peers: bool = True
    # CUDA, with keep_peers: an evaluation that measures the peers (a host's first) times the candidate
    # and the baseline again afterwards, in rounds of their own against the figures just kept, as every
    # later evaluation times them; its figures are those. On the H200 the evaluation that timed the
    # peers between the candidate's calls read the candidate and the baseline 0.5-0.8 % slower than the
    # evaluations after it (docs/harness-lab.md, "Tenth session"); with this, 0.15-0.21 % (median) like
    # every later pair ("Eleventh session"). `--peers-together` turns it off.
    peers_apart: bool = True
    # CUDA: the evaluation that measures the peers times each of them in this many processes at once,
    # each round the mean of them (harness/executor/lanes.py): cuDNN's share of calls in its slower kernel
    # mode is set per process, and one process's figure of it moved by up to 5 % from one evaluation
    # to the next (docs/harness-lab.md, "Twelfth session").
    peer_processes: int = DEFAULT_PROCESSES
    # CUDA: each timed call's figure is the work of its kernels as CUPTI records them in the executor
    # (their span less the front end's gaps, harness/executor/cupti_activity.py), bounded by the events; False:
    # the events less their offset only.
    cupti: bool = True
    # Every round's figure of every implementation kept in the result (timing.samples_ms), not only
    # the medians and intervals: what the spread of a scenario's calls is (docs/harness-lab.md, issue 14).
    samples: bool = False
    # The peers' executor, already starting (pair.EarlyPeers: the command line starts it
    # before it imports torch). evaluate() owns it from here and closes what it does not use.
    early: object = None

