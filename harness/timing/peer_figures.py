"""The peers' figures, kept per GPU, driver, torch, task and harness version (CUDA tasks).

A peer (cuDNN, FlashAttention through PyTorch) is the same code on the same shapes in every
evaluation on a host: timing it again each time costs an evaluation most of its time (its first
call on a new shape plans cuDNN's graph: 7.9 of 13.3 s of flash_attn_fwd's quick timing stage on
the H200), and says nothing new. So the first evaluation on a host measures each scenario's peers
in the usual rounds and keeps their times here (cuda_loop.FIGURE); later ones take them from here and pair the
candidate's every round with the kept time. The candidate is still timed beside the baseline (and
the incumbent) in every round: those comparisons stay paired. The entry is written and read only
by the trusted parent, in the data dir (no sandbox binds it); one that does not parse is measured
again. On by default (`Options.keep_peers`); `--fresh-peers` measures them again. On the H200 a
second quick flash_attn_fwd evaluation read the same peer figures as the first and took 5.6 s
instead of 30.8 s (docs/harness-lab.md, "Speed"). The key includes the clock the figures come from
(CUPTI's records or events) and the gaps a call's figure leaves out (FRONT_END_GAP_MS), so figures of
one are never paired with the other's.
"""

import hashlib
import json
import os
from pathlib import Path

import torch

from .. import HARNESS_VERSION


class PeerFigures:
    def __init__(self, root, task, device_info, extra):
        self.dir = Path(root) / "peer-figures"
        parts = [device_info.get("name"), device_info.get("driver"), torch.__version__, torch.version.cuda,
                 HARNESS_VERSION, task.yaml_path.read_text(), task.reference_path.read_text(),
                 json.dumps(task.timing, sort_keys=True), json.dumps(extra, sort_keys=True)]
        self.base = hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()

    def _path(self, scenario):
        key = hashlib.sha256(f"{self.base}\0{scenario.id}\0{json.dumps(dict(scenario.params), sort_keys=True)}"
                             .encode()).hexdigest()[:32]
        return self.dir / f"{key}.json"

    def get(self, scenario, peers):
        """{"ms": {peer: median ms}, "unsupported": {peer: reason}} covering every peer, or None."""
        try:
            kept = json.loads(self._path(scenario).read_text())
            ms, unsupported = dict(kept["ms"]), dict(kept["unsupported"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if set(ms) | set(unsupported) != set(peers) or not all(isinstance(v, float) and v > 0 for v in ms.values()):
            return None
        return {"ms": ms, "unsupported": {p: str(r) for p, r in unsupported.items()}}

    def put(self, scenario, ms, unsupported):
        path = self._path(scenario)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"scenario": scenario.id, "ms": ms, "unsupported": unsupported}))
        os.replace(tmp, path)
