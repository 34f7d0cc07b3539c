"""What an evaluation is about: the task folder (model.py: task.yaml and reference.py, checked against
schema.py), its scenarios (scenarios.py, exprs.py), and the trusted side of correctness: the
reference's inputs, outputs and tolerances (oracle.py), the tolerance rule (tolerance.py) and
inputs of other distributions than the task's generator (variants.py).

Imports: the standard library, torch, PyYAML, and harness/errors.py. Nothing here knows how a
candidate is built, run or timed.
"""
