"""The walls around what the harness runs: bubblewrap (bwrap.py) for the compiler and the executors,
the executor's seccomp filter (seccomp.py), and what /proc says of a process (procinfo.py).

Imports: the standard library only. The executor imports seccomp.py inside its sandbox, so this
file imports nothing (a package's face here would be loaded into the candidate's process).
"""
