"""A peer timed in several processes at once ("lanes"), its figure the mean of them round by round.

On the H200 cuDNN runs some of its calls in a slower kernel mode (1.7 us of a 12 us kernel on
b2-h16-kv16-sq1000-sk113-d128-c0), and what share of its calls does is set per process: 0.32 of one
process's calls, 0.69 of the next one's, so a peer's figure from one process moved by up to 5 % from
one evaluation to the next (docs/harness-lab.md, "Tenth session", "Eleventh session"). Such a mode is the
peer's own and stays in its figure; which process got which share is not the harness's to choose.
So the evaluation that measures the peers (a host's first: its figures are kept) starts the peers'
executor `processes` times, each with its own memory, calls every lane of a peer in every round, and
reads each round of the peer as the mean of its lanes' calls: a spread of the process's share over
n processes, not one draw of it.

Names: the first lane is the peer's own implementation name (`peer:cudnn`), lane k > 1 is
`peer:cudnn~k`. Nothing past the timing loop sees a lane.
"""

MARK = "~"
# The lanes a peer is timed in by default (Options.peer_processes), when an evaluation measures peers.
DEFAULT_PROCESSES = 2
MAX_PROCESSES = 4


def peer_executors(ctx):
    """The peers' executors that are up, the first one's (ctx.peerx) first: one per lane."""
    lanes = getattr(ctx, "peer_lanes", None)
    if lanes:
        return list(lanes)
    peerx = getattr(ctx, "peerx", None)
    return [peerx] if peerx is not None else []


def lane_names(name, processes):
    """The implementation names of `name` (`peer:X`) in `processes` lanes, the first being `name`."""
    return [name] + [f"{name}{MARK}{k}" for k in range(2, processes + 1)]


def lane_of(name):
    """0 for an implementation's first (or only) lane, k - 1 for `peer:X~k`."""
    base, mark, k = name.rpartition(MARK)
    return int(k) - 1 if mark and base.startswith("peer:") and k.isdigit() else 0


def base_of(name):
    """`peer:X` for any of its lanes; any other name as it is."""
    return name.rpartition(MARK)[0] if lane_of(name) else name


def peer_of(name):
    """The peer's own name (`X`) for `peer:X` or any of its lanes."""
    return base_of(name)[len("peer:"):]


def merge(samples, processes):
    """`samples` ({implementation: {key: [per round]}}) with each peer's `processes` lanes folded into
    its first: every list of numbers the mean of the lanes' values of the same round (None where any
    lane's is None: that round's value was not read), other lists (`slot`) the first lane's; and the
    rounds of each lane apart, {peer name: [each lane's `ms`]} (`lanes`). A peer one of whose lanes is
    gone from `samples` (a call of it failed: loop.taken) is gone altogether: its failure
    is recorded, and the lanes left would be a figure of fewer processes. Returns (merged, lanes)."""
    if processes <= 1:
        return samples, {}
    merged, lanes = {}, {}
    for name, s in samples.items():
        if lane_of(name):
            continue
        if not name.startswith("peer:"):
            merged[name] = s
            continue
        names = lane_names(name, processes)
        if not all(n in samples for n in names):
            continue     # a lane failed: the peer is dropped (its reason is in `unsupported`)
        rows = [samples[n] for n in names]
        merged[name] = {key: list(vals) if key == "slot" else _mean_rows([r.get(key, []) for r in rows])
                        for key, vals in s.items()}
        lanes[peer_of(name)] = [list(r["ms"]) for r in rows]
    return merged, lanes


def merged_ms(samples, processes):
    """{implementation: {"ms": per round}} with the lanes folded (merge), for the stopping rule."""
    if processes <= 1:
        return samples
    return merge({n: {"ms": s["ms"]} for n, s in samples.items()}, processes)[0]


def _mean_rows(rows):
    n = min(len(r) for r in rows)
    out = []
    for i in range(n):
        vals = [r[i] for r in rows]
        out.append(None if any(v is None for v in vals) else sum(vals) / len(vals))
    return out
