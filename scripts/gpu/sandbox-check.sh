#!/usr/bin/env bash
# The sandbox on a GPU host: runs `nvidia-smi` and an nvcc-built CUDA program through the real
# gpu_bash code path (runGpuBash: bubblewrap, /dev/nvidia* bound, CUDA_VISIBLE_DEVICES), checks the
# command had no network and left no process, and writes what it saw under $OUT. One GPU (the
# device tool's `nvidia-h200` kind), from the repository root, with .carry/host carried (run
# `bash scripts/pack-gpu-host.sh` here first: it carries bubblewrap's .deb). About a minute.
# As root (issue 39) `unprivileged.txt` must show no WROTE-/OPENED-/NESTED- line and the CUDA sum.
#
#   OUT=/tmp/out bash scripts/gpu/sandbox-check.sh
set -u
: "${OUT:?set OUT}"
mkdir -p "$OUT"
# shellcheck disable=SC1091
source scripts/gpu-host-env.sh
export PATH="/usr/local/cuda/bin:$PATH"
{ date -u; command -v bwrap; bwrap --version; nvidia-smi -L; id; uname -r
  cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null; cat /proc/sys/user/max_user_namespaces; } > "$OUT/env.txt" 2>&1
timeout --kill-after=10 110 node --import tsx scripts/gpu/sandbox-check.ts "$OUT/work" 0 > "$OUT/sandbox-check.log" 2>&1
echo "rc=$?" >> "$OUT/sandbox-check.log"
sleep 1
# The survivor check's `setsid sleep 4242` must be gone with its sandbox.
{ echo "survivors:"; ps -eo pid=,args= | grep -E '^\s*[0-9]+ sleep 4242$' || echo none; } >> "$OUT/sandbox-check.log"
rm -rf "$OUT/work/ws"
tail -n 40 "$OUT/sandbox-check.log"
