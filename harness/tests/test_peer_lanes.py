"""A peer timed in several processes at once (harness/executor/lanes.py): each round its lanes' mean, a
lane that failed takes its peer out, nothing but the timing loop sees a lane, and only a CUDA
evaluation that measures the peers starts more than one peers' executor."""

import pytest

from harness.cli import _parser as parser
from harness.executor.pair import lanes_wanted
from harness.timing.rounds import done
from harness.timing.loop import _executor, _message, executors, implementations, peer_processes, taken
from harness.executor.lanes import MAX_PROCESSES, base_of, lane_names, lane_of, merge, merged_ms, peer_of
from harness.timing.stats import TRIMMED_MEAN
from harness.task.model import load_task

from .conftest import REPO

FLASH = load_task(REPO / "kernels" / "flash_attn_fwd")


def test_lane_names_and_back():
    assert lane_names("peer:cudnn", 1) == ["peer:cudnn"]
    assert lane_names("peer:cudnn", 3) == ["peer:cudnn", "peer:cudnn~2", "peer:cudnn~3"]
    for name, lane, base in (("peer:cudnn", 0, "peer:cudnn"), ("peer:cudnn~2", 1, "peer:cudnn"),
                             ("peer:flash~4", 3, "peer:flash"), ("candidate", 0, "candidate"),
                             ("baseline~2", 0, "baseline~2"), ("peer:x~y", 0, "peer:x~y")):
        assert (lane_of(name), base_of(name)) == (lane, base), name
    assert peer_of("peer:cudnn~2") == peer_of("peer:cudnn") == "cudnn"


def _rows(ms, **extra):
    row = {"ms": list(ms), "work_ms": list(ms), "slot": list(range(len(ms)))}
    row.update({k: list(v) for k, v in extra.items()})
    return row


def test_each_round_of_a_peer_is_the_mean_of_its_lanes():
    # One process in cuDNN's slow mode (13.3 us), the other in its fast one (11.1 us): the figure is
    # their mean, round by round; the candidate and the baseline are left as they are.
    samples = {"candidate": _rows([0.010, 0.011]), "baseline": _rows([0.012, 0.012]),
               "peer:cudnn": _rows([0.0133, 0.0133], idle_ms=[0.001, None]),
               "peer:cudnn~2": _rows([0.0111, 0.0113], idle_ms=[0.003, 0.002])}
    merged, lanes = merge(samples, 2)
    assert set(merged) == {"candidate", "baseline", "peer:cudnn"}
    assert merged["candidate"] is samples["candidate"]
    assert merged["peer:cudnn"]["ms"] == pytest.approx([0.0122, 0.0123])
    assert merged["peer:cudnn"]["work_ms"] == pytest.approx([0.0122, 0.0123])
    assert merged["peer:cudnn"]["idle_ms"][0] == pytest.approx(0.002)
    assert merged["peer:cudnn"]["idle_ms"][1] is None       # a round a lane could not read stays unread
    assert merged["peer:cudnn"]["slot"] == [0, 1]
    assert lanes == {"cudnn": [[0.0133, 0.0133], [0.0111, 0.0113]]}


def test_one_process_is_the_samples_as_they_are():
    samples = {"candidate": _rows([1.0]), "peer:cudnn": _rows([2.0])}
    assert merge(samples, 1) == (samples, {})


def test_a_lane_that_failed_takes_its_peer_out():
    # taken() drops a peer's lane whose call failed and records why: the lanes left would be the
    # figure of fewer processes, so the peer has no figure at all (and is not kept).
    impls = ["candidate", "peer:cudnn", "peer:cudnn~2", "peer:flash", "peer:flash~2"]
    samples = {n: _rows([1.0]) for n in impls}
    unsupported = {}
    assert not taken({"peer_error": "failed", "message": "CUDNN_STATUS_EXECUTION_FAILED"}, "peer:cudnn~2", 1,
                     impls, samples, unsupported, {})
    assert unsupported == {"cudnn": "failed during timing: CUDNN_STATUS_EXECUTION_FAILED"}
    merged, lanes = merge(samples, 2)
    assert set(merged) == {"candidate", "peer:flash"} and set(lanes) == {"flash"}
    del samples["peer:flash"]                       # the first lane failing takes it out too
    assert set(merge(samples, 2)[0]) == {"candidate"}


def test_the_stopping_rule_reads_the_mean_of_the_lanes():
    # Two processes each steady in its own mode: each alone is tight, so is their mean. What the rule
    # must not see is the lanes as one sample (a spread of two modes 17 % apart).
    policy = {"min_reps": 5, "max_reps": 1000, "max_seconds": 10.0, "target_rse": 0.005, "figure": TRIMMED_MEAN,
              "kept": ["peer:cudnn"], "kept_seconds": 20.0}
    n = 20
    samples = {"candidate": {"ms": [0.010] * n}, "peer:cudnn": {"ms": [0.0133] * n}, "peer:cudnn~2": {"ms": [0.0111] * n}}
    folded = merged_ms(samples, 2)
    assert set(folded) == {"candidate", "peer:cudnn"} and folded["peer:cudnn"]["ms"] == pytest.approx([0.0122] * n)
    assert done(folded, policy, 1.0)
    mixed = {"candidate": {"ms": [0.010] * 2 * n}, "peer:cudnn": {"ms": [0.0133, 0.0111] * n}}
    assert not done(mixed, policy, 1.0)


class _Ex:
    def __init__(self, pid):
        self.pid = pid


class _Ctx:
    def __init__(self, lanes, device_kind="cuda", processes=2):
        self.task, self.device_kind = FLASH, device_kind
        self.cand, self.refx, self.incx = _Ex(1), _Ex(2), None
        self.peer_lanes = [_Ex(10 + k) for k in range(lanes)]
        self.peerx = self.peer_lanes[0] if lanes else None
        self.has_baseline, self.has_incumbent, self.with_peers = True, False, True
        self.opts = type("Opts", (), {"peer_processes": processes})()


def test_the_timing_loop_calls_every_lane_in_its_own_executor_as_the_peer_itself():
    ctx = _Ctx(2)
    impls = implementations(ctx)
    assert impls == ["candidate", "baseline", "peer:cudnn", "peer:cudnn~2", "peer:flash", "peer:flash~2"]
    assert peer_processes(ctx) == 2
    assert _executor(ctx, "peer:flash") is ctx.peer_lanes[0] and _executor(ctx, "peer:flash~2") is ctx.peer_lanes[1]
    assert [ex.pid for ex in executors(ctx)] == [1, 2, 10, 11]      # every one pinned with the round
    scalars, params = {}, {"b": 1}
    assert _message(ctx, "peer:cudnn~2", [], scalars, params)["peer"] == "cudnn"   # the executor knows no lane
    one = _Ctx(1)
    assert implementations(one) == ["candidate", "baseline", "peer:cudnn", "peer:flash"] and peer_processes(one) == 1


def test_more_than_one_peers_executor_only_on_cuda_and_as_asked():
    assert lanes_wanted(_Ctx(0, processes=2)) == 2
    assert lanes_wanted(_Ctx(0, processes=1)) == 1
    assert lanes_wanted(_Ctx(0, processes=99)) == MAX_PROCESSES
    assert lanes_wanted(_Ctx(0, device_kind="cpu", processes=2)) == 1   # a CPU peer's time has no such mode


def test_peer_processes_on_the_command_line():
    base = ["eval", "--task-dir", "t", "--candidate", "c"]
    assert parser().parse_args(base).peer_processes == 2
    assert parser().parse_args(base + ["--peer-processes", "1"]).peer_processes == 1
    for bad in ("0", "5", "two", "-1"):
        with pytest.raises(SystemExit):
            parser().parse_args(base + ["--peer-processes", bad])
