"""Where a CUDA peer's own allocations lie: one memory pool per slot, not wherever the process's
allocator happens to keep its block.

A peer (PyTorch code) allocates its outputs and workspace itself, inside its call; the caching
allocator hands every call of a scenario the same block or two, so the whole evaluation's calls
write to the same few lines of the GPU's memory. On the H200 a cuDNN call of a few microseconds
reads about 10 % slower from some placements than from others (docs/harness.md "Ninth session"):
the share of its calls in the slower mode was then a property of the peers' executor (0.00, 0.50
and 0.00 on one scenario in three evaluations), while the candidate's and the baseline's outputs,
in the harness's slots, are drawn anew every round. Here each slot's calls allocate from a pool of
their own (`torch.cuda.use_mem_pool`), so a peer's figure is the mean over as many placements of its
own memory as of its inputs'. A scenario gets new pools (its key changes), as many as `budget`
bytes of the first call's peak allocation hold, at most `count`; a pool's first call of each peer
is made untimed (`before`), so no timed call pays for the pool's growth. With a torch that has no
`use_mem_pool` (PyTorch < 2.8), calls allocate as before and `active` is False.

Kept free of the rest of the harness: the peers' executor imports it (executor.py), and so does
the fidelity tool (tools/cupti_fidelity.py), whose peers' calls take a pool per placement alike.
"""

COUNT = 32
BUDGET_BYTES = 2 << 30


class PeerPools:
    def __init__(self, torch, count=COUNT, budget=BUDGET_BYTES):
        self.torch = torch
        self.use = getattr(torch.cuda, "use_mem_pool", None) or getattr(getattr(torch.cuda, "memory", None),
                                                                         "use_mem_pool", None)
        self.count, self.budget = count, budget
        self.key, self.n, self.pools, self.warm = None, None, {}, set()

    @property
    def active(self):
        return self.use is not None

    def before(self, key, name, place, call):
        """Untimed, before `name`'s timed call on `place` in the scenario `key`: the scenario's pools
        (new ones, the old released, when `key` changes), and one call of `name` in that place's pool
        if the pool has had none. True when it made a call."""
        if self.use is None:
            return False
        torch = self.torch
        if key != self.key:
            self.pools.clear()
            self.warm.clear()
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            self.key, self.n = key, None
        if self.n is None:      # the first call of the scenario: how many pools its allocations allow
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            self._call(0, call)
            peak = max(1, torch.cuda.max_memory_allocated() - before)
            self.n = max(1, min(self.count, self.budget // peak))
            self.warm.add((0, name))
            return True
        i = place % self.n
        if (i, name) in self.warm:
            return False
        self._call(i, call)
        self.warm.add((i, name))
        return True

    def run(self, place, call):
        """call() with its allocations in `place`'s pool (as `before` set them up)."""
        if self.use is None or self.n is None:
            return call()
        with self.use(self._pool(place % self.n)):
            return call()

    def placement(self, place):
        """Which pool `place` calls allocate from (None: the process's own allocator)."""
        return None if self.use is None or self.n is None else place % self.n

    def _pool(self, i):
        if i not in self.pools:
            self.pools[i] = self.torch.cuda.MemPool()
        return self.pools[i]

    def _call(self, i, call):
        with self.use(self._pool(i)):
            call()
        self.torch.cuda.synchronize()
