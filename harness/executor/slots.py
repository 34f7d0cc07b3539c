"""Many calls' worth of a scenario's tensors in one shared memfd, for batched timed requests.

A timed request makes many calls, each on its own inputs and outputs (fresh values, own pointers:
caching by pointer or content gains nothing), so that the request's own cost is spread over them.
One memfd per implementation holds every call's tensors, each page-aligned, and is mapped once; a
Slot looks like a BufferSet (tensors, ref, spec) to the code that fills, calls and checks.
"""

from ..task.dtypes import DTYPES
from ..task.tolerance import poison, poison_rows, unwritten
from .calls import call_args
from .memory import close_set, new_sets, slot_stride
from .shm import ALIGN, layout


def slot_bytes(set_bytes, task):
    """Upper bound of one slot's bytes once every tensor is rounded up to a page."""
    return set_bytes + ALIGN * sum(1 for a in task.args if a.kind == "tensor")


class Slot:
    def __init__(self, bs, j, names, table, owner=None):
        self.bs, self.j, self.table, self.owner = bs, j, table, owner
        self.id = bs.id
        self.tensors = {n: bs.tensors[f"{n}#{j}"] for n in names}
        # (address in the parent, bytes) of this slot's tensors: what a round's cache flush evicts.
        start = min(t.data_ptr() for t in self.tensors.values())
        end = max(t.data_ptr() + t.numel() * t.element_size() for t in self.tensors.values())
        self.span = (start, end - start)

    def ref(self, name):
        return self.bs.ref(f"{name}#{self.j}")

    def spec(self, name):
        return self.bs.spec(f"{name}#{self.j}")


def _specs(task, input_shapes, output_shapes, count, stride=None):
    """Every slot's tensors, slot after slot: [(name#j, dtype, shape)]; with `stride` (bytes, a page
    multiple at least one slot's size), each slot but the last followed by an unused gap up to it."""
    specs, gap = [], None
    for j in range(count):
        mine = []
        for arg in task.args:
            if arg.kind == "tensor":
                shape = input_shapes[arg.name] if arg.role == "input" else output_shapes[arg.name]
                mine.append((f"{arg.name}#{j}", arg.dtype, shape))
        specs += mine
        if gap is None:     # every slot lays out alike: one slot's bytes, once
            gap = (stride or 0) - layout(mine)[1]
        if gap > 0 and j < count - 1:
            specs.append((f"~gap#{j}", "uint8", (gap,)))
    return specs


def make_slots(executors, task, input_shapes, output_shapes, count, rng, scalars=None):
    """{name: Slots of `count` slots} for the implementations a round times ({name: executor}), their
    memory made together (memory.new_sets: on a CPU task the pages of all of them allocated
    in one random order). `scalars` ({name: the scenario's scalars}): those executors are also sent
    every slot's argument list once (cmd_table), and timed requests name slots by index."""
    scalars = scalars or {}
    one = layout(_specs(task, input_shapes, output_shapes, 1))[1]
    specs = _specs(task, input_shapes, output_shapes, count, slot_stride(list(executors.values()), one, count))
    made = new_sets([(ex, specs) for ex in executors.values()], rng)
    out = {}
    try:
        for (name, ex), bs in zip(executors.items(), made):
            out[name] = Slots(ex, task, bs, count, scalars.get(name))
    except BaseException:
        for (name, ex), bs in zip(executors.items(), made):
            if name in out:
                out[name].close()
            else:
                close_set(ex, bs)
        raise
    return out


class Slots:
    def __init__(self, ex, task, bs, count, scalars=None):
        """`count` slots laid out one after another in `bs` (make_slots)."""
        self.ex, self.bs = ex, bs
        names = [a.name for a in task.args if a.kind == "tensor"]
        self.outputs = [a.name for a in task.args if a.kind == "tensor" and a.role == "output"]
        table = self.bs.id if scalars is not None else None
        self.slots = [Slot(self.bs, j, names, table, self) for j in range(count)]
        # Every slot's copy of one tensor as one [count, numel] view: the slots are laid out alike, one
        # after another, so the parent poisons and inspects a round's outputs in one operation each.
        self._stacked = {n: self._stack(n, count) for n in self.outputs}
        # the inputs likewise, for one seed's values into many slots at once (Timer.fresh_slots)
        self._inputs = {n: self._stack(n, count) for n in names if n not in self.outputs}
        if table is not None:
            ex.request({"cmd": "table", "id": table, "batch": [call_args(task, s, scalars) for s in self.slots]})

    def _stack(self, name, count):
        off, dtype, shape, numel = self.bs.layout[f"{name}#0"]
        step = self.bs.layout[f"{name}#1"][0] - off if count > 1 else 0
        flat = self.bs.u8.view(DTYPES[dtype])
        size = flat.element_size()
        return flat.as_strided((count, numel), (step // size, 1), off // size)

    def get(self, k):
        return self.slots[k]

    def stacked(self, name):
        """Every slot's copy of tensor `name` as one [count, numel] view (row j: slot j's)."""
        return self._stacked[name] if name in self._stacked else self._inputs[name]

    def poison_outputs(self):
        """Poison every slot's outputs (one operation per output)."""
        for view in self._stacked.values():
            poison(view)

    def poison_slots(self, rows):
        """Poison the outputs of the slots `rows` (a long tensor of indices), one operation per output."""
        for view in self._stacked.values():
            poison_rows(view, rows.to(view.device))

    def unwritten_outputs(self, slots):
        """{slot index: [outputs still holding poison]} for `slots` (of this Slots), the clean ones left out."""
        out = {}
        for name, view in self._stacked.items():
            left = unwritten(view).any(1).tolist()
            for s in slots:
                if left[s.j]:
                    out.setdefault(s.j, []).append(name)
        return out

    def close(self):
        self.slots, self._stacked, self._inputs = [], {}, {}
        close_set(self.ex, self.bs)
