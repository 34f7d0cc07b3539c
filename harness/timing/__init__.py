"""How the trusted parent times calls made in the executors and what it concludes: the timing loops
(loop.py for a CPU task and the parts every loop shares, cuda_loop.py for a CUDA task), the rounds'
placement and stopping rules (rounds.py), the statistics and verdict rules (stats.py), the parent's
device (devices.py: flushes, clocks, information; nvml.py), the calibration of the events against
CUPTI (event_offsets.py, profiler.py), the peers' kept figures (peer_figures.py) and where a
stage's time goes (laps.py).

Imports: the standard library, torch, harness/executor/, harness/task/, harness/native/,
harness/errors.py. Nothing below imports this package.
"""
