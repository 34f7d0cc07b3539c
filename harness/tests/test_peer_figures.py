"""The peers' figures kept between evaluations (harness/timing/peer_figures.py): per GPU, driver, torch,
task and harness version and per scenario; whatever does not match or parse is measured again."""

import json

from harness.timing.peer_figures import PeerFigures
from harness.task.scenarios import select_scenarios
from harness.task.model import load_task

from .conftest import REPO

TASK = load_task(REPO / "kernels" / "flash_attn_fwd")
H200 = {"name": "NVIDIA H200", "driver": "580.159.04"}
PEERS = ["cudnn", "flash"]


def _scenarios():
    return select_scenarios(TASK, "quick")[:2]


def test_kept_figures_come_back_for_the_same_scenario_only(tmp_path):
    a, b = _scenarios()
    kept = PeerFigures(tmp_path, TASK, H200, {"pad_ms": 0.4})
    assert kept.get(a, PEERS) is None
    kept.put(a, {"cudnn": 1.25, "flash": 2.5}, {})
    assert kept.get(a, PEERS) == {"ms": {"cudnn": 1.25, "flash": 2.5}, "unsupported": {}}
    assert kept.get(b, PEERS) is None
    kept.put(b, {"cudnn": 0.5}, {"flash": "no GQA in this backend"})
    assert kept.get(b, PEERS) == {"ms": {"cudnn": 0.5}, "unsupported": {"flash": "no GQA in this backend"}}


def test_another_gpu_driver_or_setting_measures_again(tmp_path):
    a = _scenarios()[0]
    PeerFigures(tmp_path, TASK, H200, {"pad_ms": 0.4}).put(a, {"cudnn": 1.0, "flash": 2.0}, {})
    assert PeerFigures(tmp_path, TASK, {"name": "NVIDIA H100", "driver": "580.159.04"}, {"pad_ms": 0.4}).get(a, PEERS) is None
    assert PeerFigures(tmp_path, TASK, {"name": "NVIDIA H200", "driver": "575.0"}, {"pad_ms": 0.4}).get(a, PEERS) is None
    assert PeerFigures(tmp_path, TASK, H200, {"pad_ms": 0.1}).get(a, PEERS) is None
    assert PeerFigures(tmp_path, TASK, H200, {"pad_ms": 0.4}).get(a, PEERS) is not None


def test_an_entry_that_does_not_cover_the_peers_or_is_damaged_is_not_used(tmp_path):
    a = _scenarios()[0]
    kept = PeerFigures(tmp_path, TASK, H200, {})
    kept.put(a, {"cudnn": 1.0}, {})                       # flash missing
    assert kept.get(a, PEERS) is None
    kept.put(a, {"cudnn": 1.0, "flash": -2.0}, {})        # not a time
    assert kept.get(a, PEERS) is None
    path = kept._path(a)
    path.write_text("{")
    assert kept.get(a, PEERS) is None
    path.write_text(json.dumps({"ms": {"cudnn": 1.0, "flash": 2.0}}))
    assert kept.get(a, PEERS) is None


class _Ctx:
    def __init__(self, root):
        self.task = TASK
        self.peer_figures = PeerFigures(root, TASK, H200, {})


def test_a_scenario_keeps_its_peers_only_when_every_one_was_timed_or_is_unsupported(tmp_path):
    from harness.timing.cuda_loop import _keep_peers
    a, b = _scenarios()
    ctx = _Ctx(tmp_path)
    samples = {"candidate": {"ms": [1.0, 1.1]}, "peer:cudnn": {"ms": [0.5, 0.7, 0.6]}, "peer:flash": {"ms": [0.9]}}
    _keep_peers(ctx, a, samples, {})
    assert ctx.peer_figures.get(a, PEERS) == {"ms": {"cudnn": 0.6, "flash": 0.9}, "unsupported": {}}
    # flash could not run the scenario: kept as unsupported; a peer that failed is not kept at all
    _keep_peers(ctx, b, {"candidate": {"ms": [1.0]}, "peer:cudnn": {"ms": [0.5]}}, {"flash": "no GQA"})
    assert ctx.peer_figures.get(b, PEERS) == {"ms": {"cudnn": 0.5}, "unsupported": {"flash": "no GQA"}}
    other = _Ctx(tmp_path / "other")
    _keep_peers(other, a, {"candidate": {"ms": [1.0]}, "peer:cudnn": {"ms": [0.5]}}, {"flash": "failed during timing: x"})
    assert other.peer_figures.get(a, PEERS) is None


class _Shape:
    def __init__(self, *shape):
        self.shape = shape


class _Oracle:
    """The shapes of flash_attn_fwd's largest scenario: only shapes size the arenas."""

    def inputs(self, params, seed):
        b, h, s, d = 1, 16, 16384, 128
        return {"q": _Shape(b, h, s, d), "k": _Shape(b, h, s, d), "v": _Shape(b, h, s, d)}

    def output_shapes(self, params):
        return {"o": (1, 16, 16384, 128)}


def test_the_pool_of_a_scenario_whose_peers_are_kept_fits_the_arena_sized_for_them():
    # Seen on the H200: with the peers' figures kept, the candidate's pool doubled (two
    # implementations instead of four) and no longer fit the arena sized before the figures were read.
    from harness.timing.cuda_loop import arena_bytes, scenario_pool, set_bytes
    ctx = type("Ctx", (), {})()
    ctx.task, ctx.oracle, ctx.with_peers, ctx.has_baseline, ctx.has_incumbent = TASK, _Oracle(), True, True, True
    a = _scenarios()[0]
    need = arena_bytes(ctx, [a])
    per_set = set_bytes(TASK, {k: v.shape for k, v in ctx.oracle.inputs(a.params, 0).items()},
                        ctx.oracle.output_shapes(a.params))
    ctx.kept_peers, ctx.incx = {a.id: {"ms": {"cudnn": 1.0, "flash": 1.0}, "unsupported": {}}}, None
    for side in ("cand", "ref", "inc"):
        assert scenario_pool(ctx, per_set) * per_set <= need[side]
    assert scenario_pool(ctx, per_set) >= 2


def test_peers_apart_times_the_candidate_again_only_after_a_loop_that_kept_the_peers(tmp_path):
    from harness.timing.cuda_loop import _apart
    a, b = _scenarios()
    ctx = _Ctx(tmp_path)
    ctx.peers_apart = True
    impls = ["candidate", "baseline", "peer:cudnn", "peer:flash"]
    policy = {"target_rse": 0.01, "kept": ["peer:cudnn", "peer:flash"], "kept_seconds": 2.0}
    ok = {"status": "ok"}
    ctx.peer_figures.put(a, {"cudnn": 0.5, "flash": 0.9}, {})
    own, kept_now, policy_now = _apart(ctx, a, impls, policy, ok)
    assert own == ["candidate", "baseline"] and kept_now["ms"] == {"cudnn": 0.5, "flash": 0.9}
    assert policy_now == {"target_rse": 0.01}           # the rounds against kept figures: the usual rule
    assert _apart(ctx, b, impls, policy, ok) is None     # the loop kept nothing (a peer failed)
    assert _apart(ctx, a, impls, policy, {"status": "incorrect"}) is None
    assert _apart(ctx, a, impls, {"target_rse": 0.01}, ok) is None    # the peers were kept before: nothing to redo
    ctx.peers_apart = False
    assert _apart(ctx, a, impls, policy, ok) is None     # --peers-together
    from harness.cli import _parser as parser
    args = parser().parse_args(["eval", "--task-dir", "t", "--candidate", "c"])
    assert args.peers_apart                              # on by default
    assert not parser().parse_args(["eval", "--task-dir", "t", "--candidate", "c", "--peers-together"]).peers_apart


def test_an_evaluation_timed_apart_keeps_the_rounds_its_peers_figures_were_made_of():
    from harness.timing.cuda_loop import peers_rounds
    timing = {"samples_ms": {"candidate": [1.0], "peer:cudnn": [0.5, 0.6]}, "samples_slot": {"peer:cudnn": [3, 4]},
              "samples_span_ms": {"candidate": [1.1]}, "clock": "cupti"}
    assert peers_rounds(timing) == {"samples_ms": {"peer:cudnn": [0.5, 0.6]}, "samples_slot": {"peer:cudnn": [3, 4]}}
    assert peers_rounds(None) == {} and peers_rounds({"clock": "cupti"}) == {}
