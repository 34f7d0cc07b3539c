"""Issue 39 on the CPU path, each defence alone: the calibration taken from the twins, the bound on
the kernel's CPU clock around lean calls, inputs of more than one distribution. The adversarial
candidates (harness/adversarial/cpu/manifest.yaml, trust 39*) test them together; here each is shown
to hold by itself, or to be what is measured."""

import pytest
import torch

from harness.adversarial.run import texts
from harness.evaluate import Options, evaluate
from harness.task import variants
from harness.timing import loop

from .conftest import CPU_TASK, REPO

ADV = REPO / "harness" / "adversarial" / "cpu"


# -- the calibration --------------------------------------------------------------------------------
def test_an_executor_that_inflates_its_null_requests_moves_no_figure():
    null = {"cand": [2.1, 2.4, 1.9], "ref": [0.19, 0.2], "inc": [0.3], "peer": [0.5]}
    over = loop.calibrated(null)
    assert over["cand"] == over["ref"] == over["inc"] == pytest.approx(0.19)
    assert over["peer"] == 0.5                      # the peers' executor runs other code: its own
    # ... and one that deflates its own lowers every native figure's calibration alike
    assert loop.calibrated({"cand": [0.05], "ref": [0.19]}) == {"cand": 0.05, "ref": 0.05}
    # with the twins' calibration off (Options.bound), each its own
    assert loop.calibrated(null, twin=False)["cand"] == pytest.approx(1.9)


def test_a_null_request_far_past_the_twins_is_a_finding_and_noise_is_not():
    assert loop.calibration_finding({"cand": [0.124], "ref": [0.042]}) is None      # seen on the loaded VM
    found = loop.calibration_finding({"cand": [1.95], "ref": [0.2]})
    assert found and "tampered with" in found


# -- the null poison's control: what it gains with every defence off ------------------------------
def test_the_null_poison_pays_off_with_the_defences_off(cache_dir, candidate):
    # The manifest's 0.8 ms a null request gains 1.08x-1.4x with the defences off, too close to a loaded
    # CI machine's noise for a control; 3 ms against ~1 ms batches leaves the figures near zero. Burnt
    # by the thread's CPU clock, not the wall's: a loaded machine gives a spinning thread a fraction of
    # a core, and the figures are CPU time (CI once read 1.10x with the wall's 3 ms).
    source = (ADV / "trust39_null_poison.cpp").read_text().replace("burn(800000)", "burn(3000000)")
    source = source.replace("CLOCK_MONOTONIC", "CLOCK_THREAD_CPUTIME_ID")
    assert source.count("CLOCK_THREAD_CPUTIME_ID") == 2
    # A control, not a defence: the attack must be shown to pay off, and on a loaded two-core CI machine
    # one evaluation in a few read 1.2x (the hook reads requests as they arrive, and the machine's load
    # decides how they arrive). Up to three tries; each one's reading is kept for the message.
    path = str(candidate(source))
    seen = []
    for _ in range(3):
        result = evaluate(Options(task_dir=str(CPU_TASK), candidate=path, scenarios="r64-c128",
                                  cache_dir=cache_dir, allowlist=False, bound=False, with_peers=False))
        gained = result["summary"].get("speedup_vs_baseline_geomean")
        times = [sc["time_ms"] for sc in result["scenarios"]]
        seen.append((result["status"], gained, times, texts(result)))
        # Either a large gain, or figures of zero (everything subtracted: no ratio to take).
        if result["status"] == "ok" and ((gained is not None and gained >= 1.5) or all(t == 0 for t in times)):
            break
    else:
        pytest.fail(f"the null poison did not pay off with the defences off in three tries: {seen}")


# -- the bound alone (the calibration's defence turned off) ----------------------------------------
def test_the_cpu_bound_alone_refuses_a_poisoned_calibration(monkeypatch, cache_dir, candidate):
    plain = loop.calibrated
    monkeypatch.setattr(loop, "calibrated", lambda null, twin=True: plain(null, twin=False))
    monkeypatch.setattr(loop, "CAL_REJECT_FACTOR", 1e9)
    # 3 ms a null request: what the rounds' interval on this loaded machine cannot hide (the manifest's
    # 0.8 ms is for the defences together; with few rounds the bound alone lets part of it through)
    source = (ADV / "trust39_null_poison.cpp").read_text()
    assert "burn(800000)" in source
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(candidate(source.replace("burn(800000)",
                                                                                            "burn(3000000)"))),
                              scenarios="r64-c128", cache_dir=cache_dir, allowlist=False, with_peers=False))
    found = texts(result)
    gained = result["summary"].get("speedup_vs_baseline_geomean")
    # Undefended, 3 ms subtracted from ~1 ms batches leaves figures of zero: an unbounded speedup. The
    # baseline's own code timed twice reads up to ~1.1x apart on a loaded two-core CI machine.
    assert (result["status"] == "rejected" and any("under the parent's clock" in t for t in found)) or \
        (result["status"] == "ok" and gained is not None and gained <= 1.25), (result["status"], gained, found)


def test_the_cpu_bound_is_recorded_and_leaves_honest_code_alone(cache_dir):
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"),
                              scenarios="r64-c128,r7-c33", cache_dir=cache_dir, with_peers=False))
    assert result["status"] == "ok", texts(result)
    for s in result["scenarios"]:
        b = s["timing"]["bound"]
        assert b["clock"] == "cpu" and b["pairs"] >= 3 and b["path"] in ("native", "python"), b
        assert b["factor"]["candidate"] == 1.0, b


# -- inputs of more than one distribution ---------------------------------------------------------
def test_variants_keep_shapes_dtypes_and_integers_and_change_the_values():
    torch.manual_seed(0)
    inputs = {"x": torch.randn(64, 32), "h": torch.randn(128).to(torch.bfloat16), "n": torch.arange(7)}
    for kind in variants.KINDS:
        out, what = variants.derive(inputs, kind, seed=3)
        assert "scaled by 8" in what
        for name, t in inputs.items():
            assert out[name].shape == t.shape and out[name].dtype == t.dtype
        assert torch.equal(out["n"], inputs["n"])
        assert not torch.equal(out["x"], inputs["x"]) and torch.isfinite(out["x"]).all()
        assert torch.equal(inputs["x"], inputs["x"].clone())      # the task's own left as they were
    scaled, _ = variants.derive({"x": inputs["x"]}, "outliers", seed=3)
    assert int((scaled["x"] != inputs["x"] * 8).sum()) >= 1       # an outlier or more, the rest x8 exactly
    special, _ = variants.derive({"x": inputs["x"]}, "special", seed=3)
    flat = special["x"].reshape(-1)
    assert bool((flat == 0).any()) and bool(torch.signbit(flat[flat == 0]).any())    # -0.0 among the zeros
    # a dtype that would overflow is scaled down instead
    big = {"x": torch.full((16,), 30000.0, dtype=torch.float16)}
    assert "1/8" in variants.derive(big, "shifted", seed=1)[1]


def test_a_kernel_tuned_to_the_generator_passes_without_variants_and_fails_with(cache_dir):
    cand = str(ADV / "trust39_tuned_distribution.cpp")
    plain = evaluate(Options(task_dir=str(CPU_TASK), candidate=cand, scenarios="r64-c128", cache_dir=cache_dir,
                             with_peers=False, variants=False, bound=False))
    assert plain["correct"], texts(plain)         # the control: correct on the task's own inputs
    judged = evaluate(Options(task_dir=str(CPU_TASK), candidate=cand, scenarios="r64-c128", cache_dir=cache_dir,
                              with_peers=False))
    assert judged["status"] == "incorrect"
    assert "another distribution" in judged["scenarios"][0]["reason"], judged["scenarios"][0]["reason"]


def test_the_baseline_passes_every_variant_and_each_seed_says_which(cache_dir):
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), seeds=4,
                              scenarios="r64-c128,r7-c33,r1-c4096", cache_dir=cache_dir, with_peers=False))
    assert result["status"] == "ok", texts(result)
    said = [c.get("inputs") for s in result["scenarios"] for c in s["checks"]]
    assert said.count(None) == 3                     # each scenario's first seed: the task's own inputs
    for kind in variants.KINDS:                      # the kinds in turn: 9 seeds cover all three
        assert any(w and variants.describe(kind).split(", ", 1)[1] in w for w in said), (kind, said)
    assert not any("checked instead" in m for m in result["messages"]), result["messages"]


def test_a_variant_without_a_finite_reference_falls_back_to_the_seeds_own_inputs(monkeypatch, cache_dir):
    original = variants.derive

    def overflowing(inputs, kind, seed):
        out, what = original(inputs, kind, seed)
        return {k: (v * 1e38 if torch.is_floating_point(v) else v) for k, v in out.items()}, what + " (x1e38)"
    monkeypatch.setattr(variants, "derive", overflowing)
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"),
                              scenarios="r64-c128", cache_dir=cache_dir, with_peers=False, bound=False))
    assert result["status"] == "ok", texts(result)
    assert any("no usable reference" in m and "checked instead" in m for m in result["messages"]), result["messages"]
    assert all(c.get("inputs") is None for c in result["scenarios"][0]["checks"])


def test_a_variant_the_baseline_fails_is_not_held_against_the_candidate(monkeypatch, cache_dir):
    from harness import correctness_stage
    monkeypatch.setattr(correctness_stage, "baseline_passes", lambda *a, **k: False)
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(ADV / "trust39_tuned_distribution.cpp"),
                              scenarios="r64-c128", cache_dir=cache_dir, with_peers=False, bound=False))
    assert result["correct"], texts(result)      # the seed checked again on the task's own inputs
    assert any("the task's baseline is not within the tolerance on inputs scaled" in m for m in result["messages"])
