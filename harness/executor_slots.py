"""Many calls' worth of a scenario's tensors in one shared memfd, for batched timed requests.

A timed request makes many calls, each on its own inputs and outputs (fresh values, own pointers:
caching by pointer or content gains nothing), so that the request's own cost is spread over them.
One memfd per implementation holds every call's tensors, each page-aligned, and is mapped once; a
Slot looks like a BufferSet (tensors, ref, spec) to the code that fills, calls and checks.
"""

from .executor_eval import call_args
from .executor_memory import close_set, new_set
from .shm import ALIGN


def slot_bytes(set_bytes, task):
    """Upper bound of one slot's bytes once every tensor is rounded up to a page."""
    return set_bytes + ALIGN * sum(1 for a in task.args if a.kind == "tensor")


class Slot:
    def __init__(self, bs, j, names, table):
        self.bs, self.j, self.table = bs, j, table
        self.id = bs.id
        self.tensors = {n: bs.tensors[f"{n}#{j}"] for n in names}

    def ref(self, name):
        return self.bs.ref(f"{name}#{self.j}")

    def spec(self, name):
        return self.bs.spec(f"{name}#{self.j}")


class Slots:
    def __init__(self, ex, task, input_shapes, output_shapes, count, scalars=None):
        """`scalars` (the scenario's): the executor is also sent every slot's argument list once
        (cmd_table), and timed requests name slots by index (`Slot.table`)."""
        self.ex, specs, names = ex, [], []
        tensors = [a for a in task.args if a.kind == "tensor"]
        for j in range(count):
            for arg in tensors:
                shape = input_shapes[arg.name] if arg.role == "input" else output_shapes[arg.name]
                specs.append((f"{arg.name}#{j}", arg.dtype, shape))
        names = [a.name for a in tensors]
        self.bs = new_set(ex, specs)
        table = self.bs.id if scalars is not None else None
        self.slots = [Slot(self.bs, j, names, table) for j in range(count)]
        if table is not None:
            ex.request({"cmd": "table", "id": table, "batch": [call_args(task, s, scalars) for s in self.slots]})

    def get(self, k):
        return self.slots[k]

    def close(self):
        self.slots = []
        close_set(self.ex, self.bs)
