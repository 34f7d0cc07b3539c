"""The CPU timing's cache flush (harness/native/flush.c): each round's own buffers evicted line by
line instead of twice the last-level cache written. On a VM that reports a 480 MiB L3 the written
flush cost ~0.2 s a round and the cpu task's scenarios ended at their time cap with 3-6 rounds
(fewer than min_reps); the line flush costs what the round's data costs."""

import torch

from harness.timing.devices import CpuDevice
from harness.native import line_flusher


def test_the_line_flush_builds_and_leaves_the_data_as_it_was(tmp_path):
    lib, why = line_flusher(tmp_path)
    assert lib is not None, why
    assert lib.ks_flush_kind() in (0, 1)
    t = torch.arange(1 << 18, dtype=torch.float32)
    lib.ks_flush(t.data_ptr() + 3, t.numel() * 4 - 3)     # unaligned ends: whole lines around them
    assert torch.equal(t, torch.arange(1 << 18, dtype=torch.float32))


def test_a_device_with_the_line_flush_never_writes_the_big_buffer(tmp_path):
    dev = CpuDevice()
    assert dev.use_line_flush(tmp_path) is None
    t = torch.ones(4096)
    dev.flush([(t.data_ptr(), t.numel() * 4)])
    assert 2 * dev.cache_bytes not in dev._bufs      # no 2 x LLC buffer was ever allocated
    dev.flush()                            # no spans: the written flush, as before
    assert dev._bufs[2 * dev.cache_bytes].numel() * 4 == 2 * dev.cache_bytes


def test_an_evaluation_says_which_flush_it_used(tmp_path):
    from harness.evaluate import Options, evaluate
    from .conftest import CPU_TASK
    result = evaluate(Options(task_dir=str(CPU_TASK), candidate=str(CPU_TASK / "baseline.cpp"), scenarios="r7-c33",
                              with_peers=False, cache_dir=str(tmp_path)))
    assert result["status"] == "ok", result["messages"]
    assert result["device_info"]["cache_flush"].startswith("each round's buffers, line by line")


def test_a_rounds_spans_are_flushed_in_a_few_runs_covering_every_byte():
    from harness.timing.devices import _coalesced
    spans = [(12288, 100), (0, 4000), (4096, 4000), (40960, 10), (8192, 4100)]
    assert _coalesced(spans) == [(0, 12388), (40960, 10)]
    covered = lambda runs, a: any(s <= a < s + n for s, n in runs)   # noqa: E731
    assert all(covered(_coalesced(spans), a) for s, n in spans for a in range(s, s + n))
