#!/usr/bin/env bash
# `npm test`: the Node suite (vitest) and the harness's suite (pytest) at once. Both spend most of their
# time waiting on subprocesses, services and compilers, so on a two-core CI machine they overlap well.
# The harness's output is held in a file and printed after vitest's, so the two do not interleave.
# The harness's tests marked `quiet` (spreads of timings, harness/tests/conftest.py) run afterwards,
# alone: beside vitest they read twice their spread on an idle machine.
# Exit status: non-zero when any part failed (each one's status is printed at the end).
# Extra arguments go to vitest.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp -t ks-harness-tests.XXXXXX)
trap 'rm -f "$log"' EXIT
started=$(date +%s)
bash harness/run-tests.sh -m "not quiet" > "$log" 2>&1 &
harness=$!
npx vitest run "$@"
node_rc=$?
node_s=$(( $(date +%s) - started ))
wait "$harness"
py_rc=$?
py_s=$(( $(date +%s) - started ))
printf '\n== harness tests (bash harness/run-tests.sh -m "not quiet")\n'
cat "$log"
printf '\n== harness tests marked quiet, alone (bash harness/run-tests.sh -m quiet)\n'
bash harness/run-tests.sh -m quiet
quiet_rc=$?
quiet_s=$(( $(date +%s) - started ))
printf '\n== npm test: vitest rc=%s (%ss), harness rc=%s (%ss), quiet rc=%s (%ss)\n' \
  "$node_rc" "$node_s" "$py_rc" "$py_s" "$quiet_rc" "$quiet_s"
[ "$node_rc" = 0 ] && [ "$py_rc" = 0 ] && [ "$quiet_rc" = 0 ]
