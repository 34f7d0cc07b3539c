"""The only harness names a task's reference.py may import."""


class Unsupported(Exception):
    """Raised by a peer function when it cannot run a scenario; the message says why.

    The harness records the reason in the result (``peer_unsupported``) and leaves the peer out of
    that scenario's comparison instead of failing the evaluation.
    """
