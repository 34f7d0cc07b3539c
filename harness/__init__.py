"""KernelSeek harness: compiles one candidate kernel file, checks it and times it against a task.

Run it as ``python3 -m harness eval --task-dir kernels/<task> --candidate <file>`` from the
repository root. docs/harness.md explains how it works; docs/tasks.md how to write a task.
"""

# Part of every compile-cache key and of every result: bump it whenever a change to the harness can
# change a compiled library or the meaning of a result.
HARNESS_VERSION = "0.1.0"
