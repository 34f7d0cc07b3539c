#!/usr/bin/env bash
# Run the harness's test suite (pytest, harness/tests) from the repository root.
# Interpreter: $KERNELSEEK_PYTHON, else the first of python3, /usr/bin/python3 that imports torch,
# yaml and pytest. Extra arguments go to pytest (e.g. -k adversarial, -x, or test files under
# harness/tests). CUDA tests run when a GPU is visible and are reported as skipped, with the
# reason, otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

pick_python() {
  if [ -n "${KERNELSEEK_PYTHON:-}" ]; then
    echo "$KERNELSEEK_PYTHON"
    return
  fi
  for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import torch, yaml, pytest' >/dev/null 2>&1; then
      echo "$candidate"
      return
    fi
  done
  echo "run-tests.sh: no python3 with torch, yaml and pytest found; set KERNELSEEK_PYTHON" >&2
  exit 2
}

PY=$(pick_python)
echo "harness tests with $PY ($("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda" if torch.cuda.is_available() else "no cuda")'))"
# Test files named on the command line replace the default (the whole suite).
paths=(harness/tests)
for arg in "$@"; do
  case "$arg" in harness/tests*) paths=() ;; esac
done
exec "$PY" -m pytest -rs -q "${paths[@]}" "$@"
