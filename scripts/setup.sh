#!/usr/bin/env bash
# Sets a fresh Debian/Ubuntu machine up for KernelSeek: the system packages the harness needs for
# cpu tasks (g++, Python with PyTorch and PyYAML from Debian: python3-torch is PyTorch CPU for
# /usr/bin/python3), a font for chart labels, git for run workspaces, bubblewrap (the sandbox of
# the agent's commands; prlimit comes with util-linux), a Python with Triton, CUTLASS's headers,
# then the npm dependencies.
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
/usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
command -v g++ >/dev/null || need+=(g++)
command -v git >/dev/null || need+=(git)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v prlimit >/dev/null || need+=(util-linux)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Triton (kernel.language: triton) needs PyTorch 2.x. Where no python3 imports both (Debian's has
# PyTorch 1.13), a virtual environment with PyTorch (CPU) and Triton from the package index, outside
# the checkout (the harness's sandbox never shows the checkout): $KERNELSEEK_TRITON_VENV, default
# ~/.local/share/kernelseek/triton-venv. The harness's Triton tests run with it.
triton_venv="${KERNELSEEK_TRITON_VENV:-$HOME/.local/share/kernelseek/triton-venv}"
if ! python3 -c 'import torch, triton, yaml, pytest; assert int(torch.__version__.split(".")[0]) >= 2' >/dev/null 2>&1 \
    && ! "$triton_venv/bin/python" -c 'import torch, triton, yaml, pytest' >/dev/null 2>&1; then
  echo "setup: a Python with PyTorch 2.x and Triton in $triton_venv (a few minutes)"
  /usr/bin/python3 -m venv "$triton_venv"
  "$triton_venv/bin/pip" install -q --retries 1 --timeout 60 torch triton numpy pyyaml pytest
fi

# CUTLASS and CuTe headers (kernel.headers: [cutlass]) at the harness's pinned tag, in the git-ignored
# third_party/cutlass (its include/ and licence), unless KERNELSEEK_CUTLASS_DIR names a copy. Only
# tasks that use the headers need them: when the repository cannot be reached, a note and no more.
cutlass_tag="v$(sed -n 's/^CUTLASS_VERSION = "\(.*\)"$/\1/p' harness/build/headers.py)"
if [ -z "${KERNELSEEK_CUTLASS_DIR:-}" ] && [ ! -f third_party/cutlass/include/cute/tensor.hpp ]; then
  rm -rf third_party/cutlass.tmp
  if timeout 600 git clone -q --depth 1 --branch "$cutlass_tag" https://github.com/NVIDIA/cutlass.git \
      third_party/cutlass.tmp >/dev/null 2>&1; then
    mkdir -p third_party/cutlass
    mv third_party/cutlass.tmp/include third_party/cutlass.tmp/LICENSE.txt third_party/cutlass/
    echo "setup: CUTLASS $cutlass_tag headers in third_party/cutlass"
  else
    echo "setup: CUTLASS $cutlass_tag could not be fetched: tasks with kernel.headers: [cutlass] need" \
         "KERNELSEEK_CUTLASS_DIR (a CUTLASS $cutlass_tag checkout)"
  fi
  rm -rf third_party/cutlass.tmp
fi

npm ci --no-audit --no-fund --loglevel=error
