"""A Triton kernel of the executor's own, compiled and launched once while the executor is still
clean (python_candidate.cmd_preload, CUDA tasks): Triton's first compile on a GPU runs LLVM in the
process, which installs signal handlers (HUP, INT, QUIT, USR1, USR2, TERM, XCPU, XFSZ, SYS; seen on
an H100 with Triton 3.x: caught-signal mask 0x141804a07 against the executor's 0x100000002). They are
the toolchain's, not the candidate's, so they belong to the clean state the parent compares with.
Imported only where Triton is (the module's import needs it)."""

import triton
import triton.language as tl


@triton.jit
def _store_one(out_ptr):
    tl.store(out_ptr, 1.0)


def warm(torch):
    """Compiles and runs `_store_one` on the current GPU; raises when it did not write."""
    out = torch.zeros(1, device="cuda", dtype=torch.float32)
    _store_one[(1,)](out)
    torch.cuda.synchronize()
    if out.item() != 1.0:
        raise RuntimeError("the executor's own Triton kernel did not write its output")
