# Shared by the one-GPU scripts (executor-check.sh, timing-check.sh): bubblewrap from the carried
# .deb, the host's versions in $OUT/env.txt (the commit from KS_COMMIT, which the caller sets: the
# device copy's git HEAD is not the tree it runs), and `step NAME TIMEOUT CMD...` (its log in
# $OUT/NAME.log, its exit code and wall time appended to $OUT/walls.txt). Sourced, with OUT set.
# With PACK=<name> set before it is sourced, everything is written under /tmp/ks-<name> instead (OUT
# points there, FINAL to the caller's folder), and `pack` puts it into $FINAL/<name>.tgz with walls.txt
# and summary.txt beside it, as the script calls it and on exit: the device tool returns at most eight
# files.
if [ -n "${PACK:-}" ]; then
  FINAL=$OUT
  OUT=/tmp/ks-$PACK
  rm -rf "$OUT"
  mkdir -p "$OUT"
  trap pack EXIT
fi
pack() {
  [ -n "${PACK:-}" ] || return 0
  (cd "$OUT" && tar czf "/tmp/ks-$PACK.tgz" . && mv "/tmp/ks-$PACK.tgz" "$FINAL/$PACK.tgz")
  for f in walls.txt summary.txt; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"; done
  return 0
}
export PYTHONUNBUFFERED=1 KERNELSEEK_DATA_DIR=${KERNELSEEK_DATA_DIR:-/tmp/ks-exec/data}
PY=${KERNELSEEK_PYTHON:-python3}
R=kernels/rmsnorm
F=kernels/flash_attn_fwd
mkdir -p /tmp/kshost/bw "$KERNELSEEK_DATA_DIR"
for d in .carry/host/debs/bubblewrap*.deb; do [ -f "$d" ] && dpkg -x "$d" /tmp/kshost/bw; done
export PATH="/tmp/kshost/bw/usr/bin:$PATH"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,clocks_event_reasons.active --format=csv
  echo "commit ${KS_COMMIT:-unknown (set KS_COMMIT from the submitting side: the device copy has another git HEAD)}"; bwrap --version; "$PY" -c 'import torch; print(torch.__version__)'; } > "$OUT/env.txt" 2>&1

step() {   # step NAME TIMEOUT CMD...
  local name=$1 t=$2 t0; shift 2; t0=$(date +%s)
  timeout --kill-after=5 "$t" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc wall=$(( $(date +%s) - t0 ))s" | tee -a "$OUT/walls.txt"
  return $rc
}
