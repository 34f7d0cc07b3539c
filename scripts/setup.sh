#!/usr/bin/env bash
# Sets a fresh Debian/Ubuntu machine up for KernelSeek: the system packages the harness needs for
# cpu tasks (g++, Python with PyTorch and PyYAML from Debian: python3-torch is PyTorch CPU for
# /usr/bin/python3), bubblewrap for the harness's sandbox, a font for chart labels, git for run
# workspaces, then the npm dependencies.
# GPU hosts bring their own CUDA toolkit and PyTorch; on them this only adds what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

need=()
py_ok=false
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch, yaml, numpy' >/dev/null 2>&1; then py_ok=true; break; fi
done
$py_ok || need+=(python3-torch python3-yaml python3-numpy)
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || need+=(python3-pytest)
command -v g++ >/dev/null || need+=(g++)
command -v git >/dev/null || need+=(git)
command -v bwrap >/dev/null || need+=(bubblewrap)   # the harness's sandbox (harness/sandbox.py)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
npm ci --no-audit --no-fund --loglevel=error
