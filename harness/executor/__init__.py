"""The executor: the process a candidate's (or the baseline's, or the peers') code runs in, and the
trusted parent's side of it.

Inside the sandbox (stdlib only, plus torch in the peers' executor and torch and Triton in a Python
implementation's): process.py (the executor itself; python_candidate.py, its variant for Triton
candidates and Python baselines and peers), cuda_driver.py, cuda_state.py, cupti_activity.py, with
harness/sandbox/seccomp.py and harness/native/calls.py; handle.py copies exactly these files into the sandbox (PACKAGE_FILES).
In the parent: handle.py (one executor process: start, talk, watch, kill), pair.py (an
evaluation's executors and what loading the candidate did), memory.py and shm.py (the buffers the
parent owns and the executor maps), slots.py (many calls' buffers for batched requests), lanes.py
(a peer in several processes at once), python_roles.py (which executor a Python role gets, how it
starts).

Imports: the standard library, torch (parent side), harness/native/, harness/sandbox/,
harness/build/ (the denylist, the cache folder), harness/task/ (dtypes, the poison pattern),
harness/errors.py. Never harness/timing/.
"""
