"""The NVML reader (harness/timing/nvml.py): decoding and summaries on synthetic samples, and the real
ctypes calls against a fake libnvidia-ml built here with gcc (variants by -D: an old driver, a
device that cannot read power, a failing init, several GPUs). On a GPU host, one real sample."""

import ctypes
import shutil
import subprocess

import pytest

from harness.timing import nvml

FAKE_NVML = r"""
#include <string.h>
typedef void *dev_t_;
/* Handles above 2**32: a handle passed without argtypes would be truncated to an int. */
static char devs[2];
#define DEV0 ((dev_t_)((unsigned long long)&devs[0] | (1ULL << 40)))
#define DEV1 ((dev_t_)((unsigned long long)&devs[1] | (1ULL << 40)))
#ifndef COUNT
#define COUNT 1
#endif
#ifndef INIT_RC
#define INIT_RC 0
#endif
int inits, shutdowns;
char last_bus_id[64];
int nvmlInit_v2(void) { inits++; return INIT_RC; }
int nvmlShutdown(void) { shutdowns++; return 0; }
const char *nvmlErrorString(int rc) { return rc == 9 ? "Driver Not Loaded" : "Not Found"; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = COUNT; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, dev_t_ *d) {
  if (i >= COUNT) return 2;
  *d = i ? DEV1 : DEV0; return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char *id, dev_t_ *d) {
  strncpy(last_bus_id, id, sizeof last_bus_id - 1);
  if (strcmp(id, "00000000:19:00.0")) return 6;
  *d = DEV1; return 0;
}
/* Each device answers its own figures; a wrong handle is an invalid argument, as in NVML. */
#define BASE(d) ((d) == DEV0 ? 0 : (d) == DEV1 ? 100 : -1)
int nvmlDeviceGetClockInfo(dev_t_ d, int type, unsigned *mhz) {
  if (BASE(d) < 0) return 2;
  if (type == 1) *mhz = 1755 + BASE(d); else if (type == 2) *mhz = 3201 + BASE(d); else return 2;
  return 0;
}
int nvmlDeviceGetMaxClockInfo(dev_t_ d, int type, unsigned *mhz) {
  if (BASE(d) < 0 || type != 1) return 2;
  *mhz = 1980 + BASE(d); return 0;
}
int nvmlDeviceGetTemperature(dev_t_ d, int sensor, unsigned *c) {
  if (BASE(d) < 0 || sensor != 0) return 2;
  *c = 41 + BASE(d); return 0;
}
int nvmlDeviceGetPowerUsage(dev_t_ d, unsigned *mw) {
#ifdef NO_POWER
  return 3; /* NVML_ERROR_NOT_SUPPORTED */
#endif
  if (BASE(d) < 0) return 2;
  *mw = 612345; return 0;
}
#ifndef OLD_DRIVER
int nvmlDeviceGetCurrentClocksEventReasons(dev_t_ d, unsigned long long *r) {
  if (BASE(d) < 0) return 2;
  *r = 0x4ULL | 0x40ULL | (1ULL << 40); return 0;
}
#endif
int nvmlDeviceGetCurrentClocksThrottleReasons(dev_t_ d, unsigned long long *r) {
  if (BASE(d) < 0) return 2;
  *r = 0x1ULL; return 0;
}
"""


@pytest.fixture(scope="module")
def fake_nvml(tmp_path_factory):
    """fake_nvml("-DOLD_DRIVER", ...) -> path of a fake libnvidia-ml built with those defines."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed: the fake libnvidia-ml cannot be built")
    root = tmp_path_factory.mktemp("fake-nvml")
    (root / "fake.c").write_text(FAKE_NVML)

    def build(*defines):
        lib = root / ("libnvidia-ml" + "".join(d.replace("=", "_") for d in defines) + ".so")
        if not lib.exists():
            subprocess.run(["gcc", "-shared", "-fPIC", "-O1", *defines, str(root / "fake.c"), "-o", str(lib)],
                           check=True, capture_output=True)
        return str(lib)
    return build


def _counters(path):
    lib = ctypes.CDLL(path)   # the same handle NVML's loader got: dlopen counts references
    return ctypes.c_int.in_dll(lib, "inits").value, ctypes.c_int.in_dll(lib, "shutdowns").value


def test_masks_decode_to_nvml_h_names_in_bit_order():
    assert nvml.decode(0) == []
    assert nvml.decode(0x1) == ["GpuIdle"]
    assert nvml.decode(0x4 | 0x40 | 0x100) == ["SwPowerCap", "HwThermalSlowdown", "DisplayClockSetting"]
    assert nvml.decode(0x1FF) == list(nvml.REASONS)
    assert nvml.decode(0x8 | 1 << 9 | 1 << 63) == ["HwSlowdown", "0x200", "0x8000000000000000"]


def test_only_caps_imposed_on_the_kernel_count_as_throttling():
    assert nvml.throttled(nvml.decode(0x1 | 0x2 | 0x10 | 0x100)) == []
    assert nvml.throttled(nvml.decode(0x1FF)) == ["SwPowerCap", "HwSlowdown", "SwThermalSlowdown",
                                                   "HwThermalSlowdown", "HwPowerBrakeSlowdown"]
    assert nvml.throttled(["GpuIdle", "0x200", "SwThermalSlowdown"]) == ["SwThermalSlowdown"]


def test_summary_of_a_scenario_with_a_power_capped_sample():
    samples = [{"sm_mhz": 1980, "mem_mhz": 3201, "temp_c": 40, "power_w": 120.04, "reasons": ["GpuIdle"]},
               {"sm_mhz": 1755, "mem_mhz": 3201, "temp_c": 55, "power_w": 699.96,
                "reasons": ["SwPowerCap", "0x200"]},
               {"sm_mhz": None, "mem_mhz": None, "temp_c": None, "power_w": None, "reasons": None}]
    assert nvml.summarise(samples) == {
        "count": 3, "sm_mhz_min": 1755, "sm_mhz_max": 1980, "temp_c_max": 55, "power_w_max": 700.0,
        "reasons": ["GpuIdle", "SwPowerCap", "0x200"], "throttled": ["SwPowerCap"]}


def test_summary_of_nothing_says_nothing_was_read():
    assert nvml.summarise([]) == {"count": 0, "sm_mhz_min": None, "sm_mhz_max": None, "temp_c_max": None,
                                  "power_w_max": None, "reasons": [], "throttled": []}


def test_bus_id_from_torch_properties_in_nvml_s_format():
    class Props:
        pci_domain_id, pci_bus_id, pci_device_id = 0, 0x19, 0
    assert nvml.torch_bus_id(Props()) == "00000000:19:00.0"
    assert nvml.torch_bus_id(object()) is None   # torch 1.13: no PCI fields


def test_a_host_without_nvml_gets_no_device_and_the_loader_s_reason(tmp_path):
    dev, why = nvml.open_device(0, library=str(tmp_path / "libnvidia-ml.so.1"))
    assert dev is None
    assert why.startswith("NVML unavailable: ") and "cannot open shared object file" in why


def test_the_default_library_is_reported_missing_where_there_is_no_driver():
    try:
        ctypes.CDLL(nvml.LIBRARY)
        pytest.skip(f"{nvml.LIBRARY} is installed here: the real-GPU test below covers this host")
    except OSError:
        pass
    dev, why = nvml.open_device("00000000:19:00.0")
    assert dev is None and why.startswith(f"NVML unavailable: {nvml.LIBRARY}: cannot open shared object file")


def test_a_library_without_nvml_symbols_is_unavailable(fake_nvml, tmp_path):
    src = tmp_path / "empty.c"
    src.write_text("int unrelated(void) { return 0; }\n")
    lib = tmp_path / "libempty.so"
    subprocess.run(["gcc", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True, capture_output=True)
    dev, why = nvml.open_device(0, library=str(lib))
    assert dev is None and why.startswith("NVML unavailable: ") and "nvmlInit_v2" in why


def test_sample_through_the_fake_library_by_bus_id(fake_nvml):
    path = fake_nvml()
    inits, shutdowns = _counters(path)
    dev, why = nvml.open_device("00000000:19:00.0", library=path)
    assert why is None and dev.matched == "bus id 00000000:19:00.0"
    assert (ctypes.c_char * 64).in_dll(ctypes.CDLL(path), "last_bus_id").value == b"00000000:19:00.0"
    assert dev.max_sm_mhz == 2080   # the second device's figures: the bus id chose it
    assert dev.sample() == {"sm_mhz": 1855, "mem_mhz": 3301, "temp_c": 141, "power_w": 612.345,
                            "reasons": ["SwPowerCap", "HwThermalSlowdown", "0x10000000000"]}
    assert nvml.throttled(dev.sample()["reasons"]) == ["SwPowerCap", "HwThermalSlowdown"]
    with dev:
        pass
    dev.close()   # twice: one nvmlShutdown for the one nvmlInit_v2
    assert _counters(path) == (inits + 1, shutdowns + 1)


def test_an_unknown_bus_id_falls_back_to_the_only_gpu(fake_nvml):
    dev, why = nvml.open_device("00000000:AA:00.0", library=fake_nvml())
    assert why is None and dev.matched == "index 0 (the only GPU)"
    assert dev.sample()["sm_mhz"] == 1755 and dev.max_sm_mhz == 1980
    dev.close()


def test_several_gpus_and_no_bus_id_that_names_one_is_no_device(fake_nvml):
    path = fake_nvml("-DCOUNT=2")
    inits, shutdowns = _counters(path)
    for target in (None, "00000000:AA:00.0"):
        dev, why = nvml.open_device(target, library=path)
        assert dev is None and "2 GPUs and no bus id that names one" in why
    dev, why = nvml.open_device("00000000:AA:00.0", library=path)
    assert "nvmlDeviceGetHandleByPciBusId_v2('00000000:AA:00.0') returned 6 (Not Found)" in why
    dev, why = nvml.open_device(5, library=path)
    assert dev is None and "nvmlDeviceGetHandleByIndex_v2(5) returned 2" in why
    assert _counters(path) == (inits + 4, shutdowns + 4)   # every failed open shut NVML down again
    dev, why = nvml.open_device(1, library=path)
    assert dev.matched == "index 1" and dev.sample()["temp_c"] == 141
    dev.close()


def test_a_failing_init_says_why(fake_nvml):
    dev, why = nvml.open_device(0, library=fake_nvml("-DINIT_RC=9"))
    assert dev is None and why == "NVML unavailable: nvmlInit_v2 returned 9 (Driver Not Loaded)"


def test_an_old_driver_reads_throttle_reasons_and_unsupported_power_is_none(fake_nvml):
    dev, why = nvml.open_device(None, library=fake_nvml("-DOLD_DRIVER", "-DNO_POWER"))
    assert why is None
    assert dev.sample() == {"sm_mhz": 1755, "mem_mhz": 3201, "temp_c": 41, "power_w": None,
                            "reasons": ["GpuIdle"]}
    dev.close()


def test_a_real_gpu_answers():
    """On the GPU host: the device torch sees, found through NVML by its bus id."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: NVML is read for real on the GPU host")
    bus_id = nvml.torch_bus_id(torch.cuda.get_device_properties(0))
    dev, why = nvml.open_device(bus_id)
    assert why is None, why
    with dev:
        s = dev.sample()
        assert dev.max_sm_mhz and 0 < s["sm_mhz"] <= dev.max_sm_mhz
        assert s["mem_mhz"] > 0 and 0 < s["temp_c"] < 120 and s["power_w"] > 0
        assert isinstance(s["reasons"], list)
        print(bus_id, dev.matched, dev.max_sm_mhz, s, nvml.summarise([s, dev.sample()]))
