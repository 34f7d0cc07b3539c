"""tools/lab/cupti_fidelity.py without a GPU: cutting profiles into calls, the summary, the CLI."""

import hashlib
import json

import pytest
import torch
from torch.autograd import DeviceType

from harness.task.scenarios import select_scenarios
from harness.task.model import load_reference, load_task
from tools.lab import cupti_fidelity as cf

from .conftest import NO_CUDA_REASON, REPO

RMSNORM = REPO / "kernels" / "rmsnorm"
FLUSH = "Memcpy DtoD (Device -> Device)"
PAD = "at::cuda::(anonymous namespace)::spin_kernel(long)"


def test_calls_are_cut_at_each_flush_and_the_pad_is_left_out():
    activity = [  # unsorted, as a profile may list them
        ("rms_kernel", "kernel", 300.0, 340.0),
        ("side", "kernel", 310.0, 320.0),   # on another stream, inside the first one's time
        (FLUSH, "flush", 0.0, 60.0),
        (PAD, "kernel", 60.5, 160.0),
        ("k1", "kernel", 161.0, 181.0),
        ("Memset (Device)", "memset", 182.0, 183.0),
        ("k2", "kernel", 185.0, 195.0),
        ("Memcpy HtoD (Pageable -> Device)", "memcpy", 196.0, 198.0),
        (FLUSH, "flush", 200.0, 260.0),
    ]
    first, second = cf.split_calls(activity, 2)
    # the work: the span less the gaps between records (1, 2 and 1 us, each within the front end's allowance)
    assert first == {"kernel_sum_us": 30.0, "span_us": 37.0, "work_us": 33.0, "kernels": 2}
    assert second == {"kernel_sum_us": 50.0, "span_us": 40.0, "work_us": 40.0, "kernels": 2}


def test_a_calls_work_counts_a_gap_beyond_the_front_ends_allowance():
    activity = [(FLUSH, "flush", 0.0, 60.0), (PAD, "kernel", 60.5, 160.0), ("k1", "kernel", 161.0, 171.0),
                ("k2", "kernel", 191.0, 201.0)]     # 20 us between them: the host, not the front end
    (call,) = cf.split_calls(activity, 1)
    assert call["span_us"] == 40.0 and call["work_us"] == pytest.approx(40.0 - cf.FRONT_END_GAP_MS * 1e3)


def test_a_pad_named_kernel_inside_a_call_is_counted():
    activity = [(FLUSH, "flush", 0, 1), ("k", "kernel", 2, 5), (PAD, "kernel", 6, 10)]
    assert cf.split_calls(activity, 1) == [{"kernel_sum_us": 7, "span_us": 8, "work_us": 7, "kernels": 2}]


def test_a_call_that_copies_device_memory_itself_cannot_be_split():
    activity = [(FLUSH, "flush", 0, 1), ("k", "kernel", 2, 3), (FLUSH, "flush", 4, 5), ("k", "kernel", 6, 7),
                (FLUSH, "flush", 10, 11), ("k", "kernel", 12, 13)]
    with pytest.raises(cf.FidelityError, match="3 device-to-device copies where 2 flushes"):
        cf.split_calls(activity, 2)


def test_work_before_the_first_flush_or_an_empty_call_is_refused():
    with pytest.raises(cf.FidelityError, match="early ran before the first flush"):
        cf.split_calls([("early", "kernel", 0, 1), (FLUSH, "flush", 2, 3), ("k", "kernel", 4, 5)], 1)
    with pytest.raises(cf.FidelityError, match="call 1 ran nothing"):
        cf.split_calls([(FLUSH, "flush", 0, 1), ("k", "kernel", 2, 3), (FLUSH, "flush", 4, 5),
                        (PAD, "kernel", 6, 7)], 2)


def test_kinds_follow_cupti_names():
    names = (FLUSH, "Memcpy DtoH (Device -> Pinned)", "Memset (Device)", "flash_fwd_kernel<128>", PAD)
    assert [cf.kind_of(n) for n in names] == ["flush", "memcpy", "memset", "kernel", "kernel"]


def test_calls_go_to_implementations_in_order_with_the_harness_figure_in_ms():
    # The harness's figure of a CUDA scenario's rounds (stats.TRIMMED_MEAN: of three, their mean), the
    # spans' median beside it.
    figures = [{"kernel_sum_us": k, "span_us": k + 1, "work_us": k + 0.5, "kernels": 1} for k in (10, 60, 20, 100, 300, 200)]
    out = cf.per_impl(figures, ["candidate", "cudnn"], 3)
    assert (out["candidate"]["kernel_sum_ms"], out["candidate"]["span_ms"]) == pytest.approx((0.03, 0.031))
    assert out["candidate"]["span_median_ms"] == pytest.approx(0.021)
    assert out["candidate"]["work_ms"] == pytest.approx(0.0305)
    assert (out["cudnn"]["kernel_sum_ms"], out["cudnn"]["span_ms"]) == pytest.approx((0.2, 0.201))
    assert [c["kernel_sum_us"] for c in out["cudnn"]["calls"]] == [100, 300, 200]


def test_the_harness_layout_puts_every_slot_at_the_same_offsets_in_its_2_mib_pages():
    task = load_task(RMSNORM)
    inputs = {a.name: torch.zeros(3, 1000, dtype=getattr(torch, a.dtype)) for a in task.args
              if a.kind == "tensor" and a.role == "input"}
    shapes = {a.name: (3, 1000) for a in task.outputs()}
    buf, slots = cf.harness_slots(task, inputs, shapes, 5, device="cpu")
    assert len(slots) == 5
    names = list(slots[0])
    assert set(names) == {a.name for a in task.args if a.kind == "tensor"}
    for slot in slots:
        for name, t in slot.items():
            off = t.data_ptr() - slots[0][name].data_ptr()
            assert off % (2 << 20) == 0 and off >= 0                     # 2 MiB multiples apart
            assert (t.data_ptr() - slots[0][names[0]].data_ptr()) % 4096 == 0   # page-aligned in the slot
            assert tuple(t.shape) == ((3, 1000) if name in shapes else tuple(inputs[name].shape))
    assert slots[0][names[0]].data_ptr() % (2 << 20) == 0               # from a 2 MiB boundary
    ends = sorted((t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for s in slots for t in s.values())
    assert all(a[1] <= b[0] for a, b in zip(ends, ends[1:]))             # nothing overlaps
    lo, hi = buf.data_ptr(), buf.data_ptr() + buf.numel()
    assert all(lo <= a and b <= hi for a, b in ends)


def test_the_harness_layout_takes_its_memory_from_the_allocator_it_is_given():
    # --memory arena: the slots' buffer comes from memory made as the harness's arena reaches an
    # executor (ArenaMemory on the GPU); any allocator of bytes is laid out alike
    task = load_task(RMSNORM)
    inputs = {a.name: torch.zeros(2, 64, dtype=getattr(torch, a.dtype)) for a in task.args
              if a.kind == "tensor" and a.role == "input"}
    shapes = {a.name: (2, 64) for a in task.outputs()}
    asked = []

    def alloc(nbytes):
        asked.append(nbytes)
        return torch.empty(nbytes, dtype=torch.uint8)
    buf, slots = cf.harness_slots(task, inputs, shapes, 3, alloc=alloc)
    assert len(asked) == 1 and buf.numel() == asked[0]
    lo, hi = buf.data_ptr(), buf.data_ptr() + buf.numel()
    assert all(lo <= t.data_ptr() < hi for s in slots for t in s.values())


def test_arena_memory_needs_the_harness_layout():
    with pytest.raises(SystemExit):
        cf._parser().parse_args(["--task-dir", "t", "--candidate", "c", "--result", "r", "--memory", "heap"])
    assert cf.main(["--task-dir", str(RMSNORM), "--candidate", "c", "--result", "r", "--memory", "arena"]) == 2


def test_refill_in_the_other_process_needs_the_arena_it_writes_into():
    base = ["--task-dir", str(RMSNORM), "--candidate", "c", "--result", "r"]
    assert cf.main(base + ["--refill-in", "other", "--refill", "--flush-in", "other"]) == 2
    assert cf.main(base + ["--refill-in", "other", "--layout", "harness", "--memory", "arena", "--flush-in", "other"]) == 2


def _rms_inputs():
    task = load_task(RMSNORM)
    sc = next(x for x in select_scenarios(task, "all") if x.id == "r7-c1000")
    return task, load_reference(task), dict(sc.params)


def test_the_other_process_writes_the_references_inputs_at_the_offsets_it_is_given():
    task, ref, params = _rms_inputs()
    want = ref.make_inputs(params, 1234, "cpu")
    u8 = torch.zeros(1 << 20, dtype=torch.uint8)
    at, off = {}, 4096
    for name, t in want.items():
        at[name] = [off, str(t.dtype).replace("torch.", ""), list(t.shape)]
        off += -(-t.numel() * t.element_size() // 4096) * 4096
    cf.write_inputs(u8, ref, {"params": params, "seed": 1234, "at": at}, device="cpu")
    for name, (o, dtype, shape) in at.items():
        got = u8[o:o + want[name].numel() * want[name].element_size()].view(getattr(torch, dtype)).view(shape)
        assert torch.equal(got, want[name])
    assert int(u8[:4096].abs().sum()) == 0      # nothing written outside the places given


@pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA_REASON)
def test_arena_memory_is_one_exported_allocation_reused_and_released():
    from harness.executor.cuda_driver import Driver
    mem = cf.ArenaMemory(Driver(torch.cuda.current_device()), 8 << 20)
    t = mem(3 << 20)
    assert t.numel() == 3 << 20 and t.device.type == "cuda" and mem.offset(t) == 0
    t.fill_(7)
    assert int(mem(4 << 20)[(3 << 20) - 1]) == 7        # the same memory, from its start
    with pytest.raises(cf.FidelityError):
        mem(16 << 20)
    mem.close()


@pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA_REASON)
def test_the_other_process_writes_inputs_into_the_arena_this_process_reads():
    # as the harness's parent writes each round's inputs into the arena its executors map
    from harness.executor.cuda_driver import Driver
    task, ref, params = _rms_inputs()
    mem = cf.ArenaMemory(Driver(torch.cuda.current_device()), 8 << 20)
    other = cf.OtherProcess(1 << 20, mem, task.dir)
    try:
        want = ref.make_inputs(params, 99, "cuda")
        at, off = {}, 2 << 20
        for name, t in want.items():
            at[name] = [off, str(t.dtype).replace("torch.", ""), list(t.shape)]
            off += -(-t.numel() * t.element_size() // 4096) * 4096
        other.refill(params, 99, at)
        for name, (o, dtype, shape) in at.items():
            got = mem.u8[o:o + want[name].numel() * want[name].element_size()].view(getattr(torch, dtype)).view(shape)
            assert torch.equal(got, want[name])
        other.flush()
    finally:
        other.close()
        mem.close()


class _Event:
    """A kineto event as torch 2.x (ns=True) or 1.13 exposes it."""

    def __init__(self, name, start_us, length_us, device=DeviceType.CUDA, ns=True, annotation=False, start_ns=None):
        self._name, self._device, self._annotation = name, device, annotation
        if ns:
            self.start_ns = lambda: int(start_us * 1000) if start_ns is None else start_ns
            self.duration_ns = lambda: int(length_us * 1000)
            self.is_user_annotation = lambda: annotation
        else:
            self.start_us = lambda: int(start_us)
            self.duration_us = lambda: int(length_us)

    def name(self):
        return self._name

    def device_type(self):
        return self._device


def test_kineto_events_of_either_torch_are_read_in_microseconds_from_the_first():
    events = [_Event("k", 1.5, 2.25), _Event("k13", 7, 3, ns=False), _Event("aten::mm", 0, 9, DeviceType.CPU),
              _Event("gpu range", 0, 50, annotation=True), _Event(FLUSH, 20, 5)]
    assert cf.kineto_activity(events, DeviceType.CUDA) == [
        ("k", "kernel", 0.0, 2.25), ("k13", "kernel", 5.5, 8.5), (FLUSH, "flush", 18.5, 23.5)]


def test_kineto_stamps_since_1970_keep_their_nanoseconds():
    # CUPTI's stamps are ns since the epoch: as a float of us (1.76e15) they would move in 0.25 us
    # steps, and a 2.176 us kernel would read 2.0 or 2.25 (the fidelity tool's bug until 2026-12-02)
    t = 1_764_662_400_123_456_789
    events = [_Event("pad", 0, 100.0, start_ns=t), _Event("k", 0, 2.176, start_ns=t + 102_528)]
    (_, _, s0, e0), (_, _, s1, e1) = cf.kineto_activity(events, DeviceType.CUDA)
    assert (s0, e0, s1) == (0.0, 100.0, 102.528) and abs((e1 - s1) - 2.176) < 1e-9


def test_cuptis_own_records_keep_their_nanoseconds():
    t = 1_764_662_400_123_456_789
    recs = cf.records_us([("kernel", t + 102_528, t + 104_704), ("kernel", t, t + 100_000)])
    assert recs[0] == ("kernel", "kernel", 0.0, 100.0)
    assert recs[1][2] == 102.528 and abs(cf.call_figure(recs[1:], 0)["span_us"] - 2.176) < 1e-9


def test_kineto_events_of_the_installed_torch_are_read():
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        torch.mm(a, b)
    mm = [x for x in cf.kineto_activity(prof.profiler.kineto_results.events(), DeviceType.CPU)
          if x[0] == "aten::mm"]
    assert len(mm) == 1 and mm[0][1] == "kernel" and mm[0][3] > mm[0][2] >= 0
    assert cf.device_activity(prof) == []   # no GPU here, or no GPU work


def _rows(impl, ratios, key="span_ms"):
    return [{"id": f"{impl}-{i}", "impl": impl, "harness_ms": r, key: 1.0} for i, r in enumerate(ratios)]


def test_summary_counts_within_5_percent_and_finds_the_worst():
    rows = _rows("candidate", [1.0, 1.05, 0.949, 1.02]) + _rows("cudnn", [1.001, 0.995, 1.004])
    s = cf.summarize(rows, "span_ms")
    cand, peer = s["impls"]["candidate"], s["impls"]["cudnn"]
    assert (cand["n"], cand["within"], cand["worst_id"]) == (4, 3, "candidate-2")
    assert cand["worst_ratio"] == 0.949 and not cand["met"]
    assert cand["median_ratio"] == pytest.approx(1.01) and cand["median_abs_dev"] == pytest.approx(0.035)
    assert (peer["within"], peer["met"]) == (3, True) and peer["median_abs_dev"] == pytest.approx(0.004)
    assert (s["overall"]["n"], s["overall"]["within"], s["overall"]["worst_id"]) == (7, 6, "candidate-2")


def test_summary_fails_a_median_over_1_percent_and_a_missing_figure():
    s = cf.summarize(_rows("baseline", [1.02, 1.03, 1.02]), "span_ms")["impls"]["baseline"]
    assert s["within"] == 3 and not s["met"]
    rows = _rows("flash", [1.0, 1.0]) + [{"id": "x", "impl": "flash", "harness_ms": 1.0, "error": "boom"}]
    s = cf.summarize(rows, "span_ms")["impls"]["flash"]
    assert (s["n"], s["missing"], s["met"]) == (2, 1, False)
    assert cf.summarize(rows[2:], "kernel_sum_ms")["overall"] == dict(
        n=0, missing=1, within=0, median_ratio=None, median_abs_dev=None, worst_ratio=None, worst_id=None,
        met=False)


def _result(scenarios, task="rmsnorm", candidate=RMSNORM / "baseline.cu"):
    return {"schema": "kernelseek.eval/1", "task": task, "device": "cuda", "scenarios": scenarios,
            "candidate": {"file": str(candidate), "sha256": hashlib.sha256(candidate.read_bytes()).hexdigest()}}


def _scenario(sid, status="ok", time_ms=0.01, baseline_ms=0.02, peer_ms=None):
    return {"id": sid, "params": {}, "status": status, "time_ms": time_ms, "baseline_ms": baseline_ms,
            "peer_ms": peer_ms or {}}


def test_plan_takes_ok_scenarios_and_the_implementations_the_harness_timed():
    task = load_task(RMSNORM)
    result = _result([_scenario("r1-c1024", peer_ms={"torch": 0.03, "torch_rms_norm": 0.04}),
                      _scenario("r128-c1024", status="incorrect"),
                      _scenario("r4096-c1024", baseline_ms=None, peer_ms={"torch": 0.5})])
    planned, left_out = cf.plan(task, result, "c1024")
    assert [(sc.id, times) for sc, times in planned] == [
        ("r1-c1024", {"candidate": 0.01, "baseline": 0.02, "torch": 0.03, "torch_rms_norm": 0.04}),
        ("r4096-c1024", {"candidate": 0.01, "torch": 0.5})]
    assert left_out == ["r128-c1024: incorrect", "1 selected scenario(s) not in the result"]
    # --impls: the peers alone (as in the harness's peers' executor); a scenario with none of them is left out
    planned, left_out = cf.plan(task, result, "c1024", ["torch", "torch_rms_norm"])
    assert [(sc.id, times) for sc, times in planned] == [
        ("r1-c1024", {"torch": 0.03, "torch_rms_norm": 0.04}), ("r4096-c1024", {"torch": 0.5})]


def test_cli_refuses_busy_after_without_the_other_process(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_result([_scenario("r1-c1024")])))
    code = cf.main(["--task-dir", str(RMSNORM), "--candidate", str(RMSNORM / "baseline.cu"),
                    "--result", str(path), "--busy-after"])
    assert code == 2 and "--busy-after needs --flush-in other" in capsys.readouterr().err


def test_cli_refuses_implementations_the_task_lacks(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_result([_scenario("r1-c1024")])))
    code = cf.main(["--task-dir", str(RMSNORM), "--candidate", str(RMSNORM / "baseline.cu"),
                    "--result", str(path), "--impls", "torch,cudnn"])
    assert code == 2 and "--impls torch,cudnn: not this task's implementations" in capsys.readouterr().err


def _cli(tmp_path, result, capsys):
    path, out = tmp_path / "r.json", tmp_path / "out.json"
    path.write_text(json.dumps(result))
    code = cf.main(["--task-dir", str(RMSNORM), "--candidate", str(RMSNORM / "baseline.cu"),
                    "--result", str(path), "--json", str(out)])
    return code, capsys.readouterr().err, out


def test_cli_without_a_gpu_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    code, err, out = _cli(tmp_path, _result([_scenario("r1-c1024")]), capsys)
    assert code == 4
    assert "CUDA is not available to PyTorch" in err and "run this on the GPU host" in err
    assert not out.exists()


def test_cli_refuses_a_result_of_another_task_or_candidate(tmp_path, capsys):
    code, err, _ = _cli(tmp_path, _result([], task="flash_attn_fwd"), capsys)
    assert code == 2 and "is for task 'flash_attn_fwd', not 'rmsnorm'" in err
    other = _result([], candidate=REPO / "kernels" / "flash_attn_fwd" / "baseline.cu")
    code, err, _ = _cli(tmp_path, other, capsys)
    assert code == 2 and "measured on another candidate" in err


def test_report_shows_each_row_and_both_summaries():
    rows = [{"id": "r1-c1024", "impl": "candidate", "harness_ms": 0.01, "kernel_sum_ms": 0.0095, "work_ms": 0.00996,
             "span_ms": 0.01, "ratio_work": 0.01 / 0.00996, "ratio_span": 1.0, "ratio_kernel_sum": 0.01 / 0.0095},
            {"id": "r1-c1024", "impl": "torch_rms_norm", "harness_ms": 0.02, "error": "unsupported: old torch"}]
    report = {"rows": rows, "left_out": ["r128-c1024: incorrect"],
              "summary": {"work": cf.summarize(rows, "work_ms"), "span": cf.summarize(rows, "span_ms"),
                          "kernel_sum": cf.summarize(rows, "kernel_sum_ms")}}
    lines = cf.render(report).splitlines()
    assert lines[1].split() == ["r1-c1024", "candidate", "0.0100", "0.0095", "0.0100", "0.0100", "1.004", "1.000",
                                "1.053"]
    work = lines[lines.index(next(l for l in lines if "against the work" in l)) + 1]
    assert work.split()[:2] == ["candidate", "1/1"] and work.endswith("  met")
    assert "not measured: unsupported: old torch" in lines[2] and lines[3] == "left out: r128-c1024: incorrect"
    span = lines[lines.index(next(l for l in lines if "against the span" in l)) + 1]
    assert span.split()[:2] == ["candidate", "1/1"] and span.endswith("  met")
    ksum = next(l for l in lines if l.strip().startswith("candidate") and "within" in l and "1.0526" in l)
    assert ksum.endswith("NOT met")
    assert any(l.strip().startswith("torch_rms_norm no figures (1 not measured)") for l in lines)


def test_the_timestamps_step_is_read_from_the_records_and_reported():
    # 0.25 us steps (seen in the tool's process on the H200) against 32 ns ones (the executors'),
    # which CUPTI's mapping onto the host's clock turns into 31-33 ns
    assert cf.timestamp_step([("kernel", 1000, 3250), ("kernel", 3500, 5750)]) == 250
    assert cf.timestamp_step([("kernel", 1000, 3251), ("kernel", 3500, 5749)]) == 250
    assert cf.timestamp_step([("kernel", 7, 2183), ("kernel", 9001, 13097), ("kernel", 0, 929)]) == 32
    assert cf.timestamp_step([("kernel", 0, 1003), ("kernel", 0, 77)]) == 1
    assert cf.timestamp_step([("kernel", 5, 5)]) == 0 and cf.timestamp_step([]) == 0
    rows = [{"calls": [{"step_ns": 500}, {"step_ns": 250}]}, {"calls": [{"step_ns": 0}]}, {"error": "x"}]
    assert cf._step(rows) == 250 and cf._step([{"calls": []}]) is None
    report = {"rows": [], "left_out": [], "timestamp_step_ns": 250,
              "summary": {"span": cf.summarize([], "span_ms"), "kernel_sum": cf.summarize([], "kernel_sum_ms")}}
    assert "CUPTI's timestamps here came in steps of 250 ns" in cf.render(report)


class _Act:
    """CUPTI's stand-in: each call's one kernel, as long as that implementation's kernel."""

    def __init__(self):
        self.pending, self.t = [], 1_764_662_400_000_000_000

    def run(self, ns):
        self.pending.append(("kernel", self.t, self.t + ns))
        self.t += ns + 1000

    def take(self):
        out, self.pending = self.pending, []
        return out


def test_interleaved_calls_take_turns_each_round_and_land_on_their_own_implementation(monkeypatch):
    monkeypatch.setattr(cf.torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(cf, "_flush", lambda *a: None)
    act, order = _Act(), []
    def impl(name, ns):
        return lambda: (order.append(name), act.run(ns))
    placed = {"candidate": [impl("candidate", 2176)], "baseline": [impl("baseline", 3008)],
              "torch": [impl("torch", 9984), impl("torch", 9984)]}
    flush = (None, None, "write", act)
    got = cf._own_calls(placed, 4, flush, 0, interleave=True, seed=3)
    rounds = [order[i:i + 3] for i in range(0, 12, 3)]
    assert all(sorted(r) == ["baseline", "candidate", "torch"] for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1                        # the order changes between rounds
    assert [round(got[k]["span_ms"] * 1e6) for k in ("candidate", "baseline", "torch")] == [2176, 3008, 9984]
    # Each call says which copy of the inputs it ran on, and its records from its first start
    assert [c["placement"] for c in got["torch"]["calls"]] == [0, 1, 0, 1]
    assert got["baseline"]["calls"][0]["parts_us"] == [("kernel", 0.0, 3.008)]
    order.clear()
    cf._own_calls(placed, 2, flush, 0)
    assert order == ["candidate"] * 2 + ["baseline"] * 2 + ["torch"] * 2


def test_a_call_whose_host_outran_its_pad_is_retaken_and_left_out_of_the_figures(monkeypatch):
    # The second torch call's launches come 2 ms late (the host, not the GPU): its records hold a
    # 300 us gap the kernels never spent, which torch.profiler's kernel times leave out. It stays in
    # the report, marked, and another call takes its place in the figures.
    monkeypatch.setattr(cf.torch.cuda, "synchronize", lambda: None)
    act, n = _Act(), {"torch": 0}
    monkeypatch.setattr(cf.torch.cuda, "_sleep", lambda cycles: act.run(1_000_000))    # the pad's record
    monkeypatch.setattr(cf, "_flush", lambda *a: None)

    def torch_call():
        n["torch"] += 1
        if n["torch"] == 2:
            cf.time.sleep(0.002)
            act.run(5000)
            act.t += 300_000          # the GPU idle, waiting on the host
            act.run(5000)
        else:
            act.run(10_000)
    pad_cycles = int(cf.MAX_CLOCK_HZ * 1e-3)     # a 1 ms pad
    placed = {"candidate": [lambda: act.run(2176)], "torch": [torch_call]}
    got = cf._own_calls(placed, 3, (None, None, "write", act), pad_cycles)
    assert len(got["torch"]["calls"]) == 4 and got["torch"]["outran"] == 1
    assert [bool(c.get("outran")) for c in got["torch"]["calls"]] == [False, True, False, False]
    assert got["torch"]["work_ms"] == pytest.approx(0.010) and got["candidate"]["outran"] == 0
    assert len(got["candidate"]["calls"]) == 3


def test_retakes_stop_at_twice_the_calls_and_every_call_then_counts():
    assert cf.outran({"host_us": 1200.0}, 1000.0) and not cf.outran({"host_us": 800.0}, 1000.0)
    assert not cf.outran({"host_us": 1200.0}, 0.0)       # no pad: nothing to outrun
    every = [{"kernel_sum_us": 10.0, "span_us": 40.0, "work_us": 40.0, "outran": True}] * 6
    out = cf._figures(every)
    assert out["outran"] == 6 and out["work_ms"] == pytest.approx(0.040)
