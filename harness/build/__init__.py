"""From a candidate's source to a checked shared library: a candidate's files (sources.py: one file or
a folder), the compile in a sandbox through a verified cache (compile.py, cache.py) with the task's
header folders and packs (headers.py: CUTLASS), the checks on the source and on the binary
(static_checks.py with allowlist.py and denylist.py; elf.py reads the binary, includes.py what the
compiler read), the compiler's resource report (ptxas.py); a Python (Triton) file's checks
(python_source.py: nothing to compile before the device).

Imports: the standard library, HARNESS_VERSION (harness/__init__.py), harness/errors.py,
harness/sandbox/. No torch.
"""
