"""Errors that stop the harness itself (as opposed to a candidate's failures, which become results:
fail() records one in its scenario's entry).

Each says who is at fault, so the CLI can pick an exit code and the message can say what to fix.
"""


def fail(entry, status, reason):
    """A candidate's failure in a scenario's result entry: its status and why, and not correct."""
    entry["status"], entry["reason"], entry["correct"] = status, reason, False


class HarnessError(Exception):
    """Base class: the harness could not produce a result."""

    exit_code = 1


class UsageError(HarnessError):
    """Bad command-line arguments or an impossible request (e.g. a scenario filter matching nothing)."""

    exit_code = 2


class TaskError(HarnessError):
    """A broken task folder: invalid task.yaml, a reference.py that violates its contract."""

    exit_code = 3

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.detail = message


class EnvironmentProblem(HarnessError):
    """The machine cannot run this evaluation (no compiler, no CUDA device, ...)."""

    exit_code = 4
