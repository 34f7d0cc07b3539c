"""Where an executor's buffers live: memfds on a CPU task, one shared GPU arena on a CUDA task.

Either way the trusted parent creates the memory, keeps its own mapping of it, writes inputs and
poison and reads outputs through that mapping; the executor only gets a descriptor to map. A CPU
set is a memfd of its own, mapped by a "map" request. On a CUDA task each executor gets one arena
before anything is loaded (harness/executor/cuda_driver.py: a VMM allocation exported as a descriptor,
imported by the executor as its buffer 0), and a set is a range of it: importing memory needs no
system call the executor's seccomp filter forbids, but it happens once, before the filter, anyway.
"""

import os

import torch

from ..sandbox.procinfo import ChildFailure
from ..task.dtypes import DTYPES
from .cuda_driver import DeviceRange
from .shm import ALIGN, BufferSet, layout

_ids = [0]


def next_id():
    _ids[0] += 1
    return _ids[0]


def new_set(ex, specs):
    """A buffer set for executor `ex`: [(name, dtype text, shape)] laid out page-aligned."""
    arena = getattr(ex, "arena", None)
    if arena is not None:
        return arena.new_set(specs)
    bs = BufferSet(next_id(), specs)
    try:
        _map(ex, bs)
    except BaseException:
        bs.close()
        raise
    return bs


def _map(ex, bs):
    ex.request({"cmd": "map", "id": bs.id, "size": bs.size}, fds=[bs.fd])


# The pages of a round's sets are allocated in a random order, this many bytes of one set at a time.
INTERLEAVE_BYTES = 64 << 10


def new_sets(wanted, rng):
    """new_set for several executors at once ([(executor, specs)] -> [set], in order), for memory the
    same round's implementations work on. On a CPU task the sets' pages are allocated before any
    executor maps its own, in one random order across all of them (INTERLEAVE_BYTES at a time, drawn
    from `rng`). Allocated one set after another, each set's pages kept an allocation pattern of
    their own, and what identical code cost on them differed by up to 10 % for every call on that
    set: the same baseline in three executors read 0.88-1.21x on r256-c1024 over 15 evaluations (sd
    of the log 0.06-0.07); interleaved, 0.95-1.05x (sd 0.02; docs/harness-lab.md, "Layout"). Which
    property of the pages matters is not pinned down (their frame numbers are as mixed between the
    sets either way, at page and at 2 MiB granularity); the random order makes it one and the same
    for every implementation."""
    if any(getattr(ex, "arena", None) is not None for ex, _ in wanted):
        return [new_set(ex, specs) for ex, specs in wanted]
    made, mapped = [], []
    try:
        for _, specs in wanted:
            made.append(BufferSet(next_id(), specs))
        chunks = [(bs, off) for bs in made for off in range(0, bs.size, INTERLEAVE_BYTES)]
        rng.shuffle(chunks)
        for bs, off in chunks:
            bs.u8[off:off + INTERLEAVE_BYTES:ALIGN] = 0     # the first write to a page allocates it
        for (ex, _), bs in zip(wanted, made):
            _map(ex, bs)
            mapped.append(ex)
    except BaseException:
        for i, bs in enumerate(made):
            if i < len(mapped):
                close_set(mapped[i], bs)
            else:
                bs.close()
        raise
    return made


# On a CUDA task a scenario's slots are spread over the room its arenas have left, a multiple of this
# apart: each slot on physical memory of its own.
SPREAD_ALIGN = 2 << 20


def slot_stride(executors, slot_bytes, count):
    """Bytes from one slot's start to the next's, for `count` slots of `slot_bytes` in each of
    `executors` ([executor], one set each; several may share an arena). On a CPU task, or with no
    room, the slots are packed (slot_bytes). On a CUDA task they are spread as far apart as every
    arena allows (SPREAD_ALIGN multiples), so that the calls a round draws at random run on
    different memory: what a tiny kernel costs depends on where its few lines lie (the DRAM
    channels and banks, the pages the walk reads, with L2 flushed), and in one place per
    implementation that was an offset of up to 7 % that held for a whole evaluation
    (docs/harness-lab.md, "Placement")."""
    sets_in = {}
    for ex in executors:
        arena = getattr(ex, "arena", None)
        if arena is None:
            return slot_bytes
        sets_in[id(arena)] = (arena, sets_in.get(id(arena), (arena, 0))[1] + 1)
    room = min((a.size - a.used) // n for a, n in sets_in.values())
    stride = room // max(1, count) // SPREAD_ALIGN * SPREAD_ALIGN
    return max(slot_bytes, stride)


def close_set(ex, bs):
    arena = getattr(ex, "arena", None)
    if arena is not None:
        arena.free(bs)
        return
    try:
        ex.request({"cmd": "unmap", "id": bs.id})
    except ChildFailure:
        pass
    bs.close()


class CudaArena:
    """One executor's shared device memory, created and mapped by the parent (buffer 0 in the
    executor). Sets are carved from it in order and the whole arena is reused once none is live."""

    def __init__(self, drv, size, device):
        self.drv = drv
        self.handle, self.fd, self.size = drv.create_shared(size)
        self.ptr = drv.map(self.handle, self.size)
        self.u8 = torch.as_tensor(DeviceRange(self.ptr, self.size), device=device)
        self.used, self.live = 0, 0

    def new_set(self, specs):
        lay, total = layout(specs)
        if self.used + total > self.size:
            raise MemoryError(f"the executor's shared GPU memory ({self.size} bytes) cannot hold another "
                              f"{total} bytes ({self.used} in use)")
        bs = CudaSet(self, self.used, lay, total)
        self.used += total
        self.live += 1
        return bs

    def free(self, bs):
        self.live -= 1
        if self.live <= 0:
            self.live, self.used = 0, 0
        bs.tensors = {}

    def close(self):
        self.u8 = None
        try:
            os.close(self.fd)
        except OSError:
            pass
        self.drv.unmap(self.ptr, self.size, self.handle)


class CudaSet:
    """A BufferSet's interface over a range of an arena: buffer 0 in the executor, at `base`."""

    id = 0

    def __init__(self, arena, base, lay, size):
        self.base, self.size = base, size
        self.u8 = arena.u8      # the layout's offsets are into the arena
        self.layout = {name: (base + off, dtype, shape, count) for name, (off, dtype, shape, count, _) in lay.items()}
        self.tensors = {}
        for name, (off, dtype, shape, count, nbytes) in lay.items():
            start = base + off
            self.tensors[name] = arena.u8[start:start + nbytes].view(DTYPES[dtype]).view(shape)

    def ref(self, name):
        return {"buf": 0, "off": self.layout[name][0]}

    def spec(self, name):
        off, dtype, shape, _ = self.layout[name]
        return {"buf": 0, "off": off, "dtype": dtype, "shape": list(shape)}

    def close(self):
        self.tensors, self.u8 = {}, None
