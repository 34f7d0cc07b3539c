"""From a candidate's source to a checked shared library: the compile in a sandbox through a verified
cache (compile.py, cache.py), the checks on the source and on the binary (static_checks.py with
allowlist.py and denylist.py; elf.py reads the binary, includes.py what the compiler read), and the
compiler's resource report (ptxas.py).

Imports: the standard library, HARNESS_VERSION (harness/__init__.py), harness/errors.py,
harness/sandbox/. No torch.
"""
