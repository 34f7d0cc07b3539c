"""The calibration of what the harness's events add to a CUDA call (harness/timing/event_offsets.py): kept
per GPU, driver, torch and harness version; a host where it cannot be measured keeps raw figures
and says why. (The measurement itself needs the GPU: scripts/gpu/timing-check.sh.)"""

import json

from harness.timing import event_offsets


H200 = {"name": "NVIDIA H200", "driver": "580.159.04"}
H100 = {"name": "NVIDIA H100", "driver": "580.159.04"}


def test_without_a_gpu_the_figures_stay_raw_and_say_why(tmp_path):
    found, how = event_offsets.offsets(H200, 0.1, tmp_path)     # measured in a process of its own
    assert found is None
    assert how.startswith("not calibrated (RuntimeError: ") and how.endswith("figures are the raw event times"), how
    assert not (tmp_path / "calibration").exists() or not list((tmp_path / "calibration").iterdir())


def test_a_kept_calibration_is_used_for_the_same_gpu_only(tmp_path):
    key = event_offsets._key(H200, 0.1)
    (tmp_path / "calibration").mkdir()
    (tmp_path / "calibration" / f"event-offsets-{key}.json").write_text(json.dumps({"native": 0.0028, "peers": 0.0017}))
    assert event_offsets.offsets(H200, 0.1, tmp_path) == ({"native": 0.0028, "peers": 0.0017}, "kept")
    assert event_offsets.offsets(H100, 0.1, tmp_path)[0] is None          # another GPU: measured again
    assert event_offsets.offsets(H200, 0.2, tmp_path)[0] is None          # another pad: measured again


def test_a_damaged_calibration_is_not_trusted(tmp_path):
    key = event_offsets._key(H200, 0.1)
    (tmp_path / "calibration").mkdir()
    for text in ("{", json.dumps({"native": -1.0, "peers": 0.001}), json.dumps({"native": 0.002})):
        (tmp_path / "calibration" / f"event-offsets-{key}.json").write_text(text)
        assert event_offsets.offsets(H200, 0.1, tmp_path)[0] is None


def test_the_offset_comes_off_every_figure_down_to_a_floor():
    assert event_offsets.corrected(0.0093, 0.0028) == 0.0093 - 0.0028
    assert event_offsets.corrected(0.001, 0.0028) == event_offsets.FLOOR_MS
    assert event_offsets.corrected(0.0093, None) == 0.0093
