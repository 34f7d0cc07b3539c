"""Buffers the trusted side owns and the executor works on: one memfd per input/output set.

The parent creates the memfd, maps it itself and passes the descriptor to the executor, which maps
the same pages. The parent writes inputs and poison through its own mapping and reads outputs
through it too, so nothing the executor does to its page tables (PROT_NONE, MAP_FIXED over the
outputs, a SIGSEGV handler that computes on first touch) can make an output appear later: the
parent reads the pages as they are, poison included.

Poison (harness/task/tolerance.py): a signalling-NaN bit pattern no arithmetic produces, written into
every output before a call, so an element still holding it was never written.
"""

import mmap
import os

import torch

from ..task.dtypes import DTYPES

ALIGN = 4096


def layout(specs):
    """({name: (offset, dtype text, shape, count, bytes)}, total bytes), every tensor page-aligned."""
    out, offset = {}, 0
    for name, dtype, shape in specs:
        count = 1
        for d in shape:
            count *= int(d)
        nbytes = count * torch.empty((), dtype=DTYPES[dtype]).element_size()
        out[name] = (offset, dtype, tuple(int(d) for d in shape), count, nbytes)
        offset += -(-max(nbytes, 1) // ALIGN) * ALIGN
    return out, max(offset, ALIGN)


class BufferSet:
    """One set of a scenario's tensors (inputs and outputs) in one shared memfd."""

    def __init__(self, set_id, specs):
        """specs: [(name, dtype text, shape)] in the order of the task's tensor arguments."""
        self.id = set_id
        lay, self.size = layout(specs)
        self.layout = {name: (off, dtype, shape, count) for name, (off, dtype, shape, count, _) in lay.items()}
        self.fd = os.memfd_create(f"kernelseek-set-{set_id}", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, self.size)
        self.map = mmap.mmap(self.fd, self.size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.tensors = {}
        self.u8 = torch.frombuffer(self.map, dtype=torch.uint8)   # the whole set, the layout's offsets into it
        for name, (off, dtype, shape, count) in self.layout.items():
            self.tensors[name] = torch.frombuffer(self.map, dtype=DTYPES[dtype], count=count,
                                                  offset=off).view(shape)

    def ref(self, name):
        """How the executor finds a tensor: its buffer id and byte offset."""
        return {"buf": self.id, "off": self.layout[name][0]}

    def spec(self, name):
        off, dtype, shape, _ = self.layout[name]
        return {"buf": self.id, "off": off, "dtype": dtype, "shape": list(shape)}

    def close(self):
        self.tensors, self.u8 = {}, None
        try:
            os.close(self.fd)
        except OSError:
            pass
