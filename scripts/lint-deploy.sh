#!/usr/bin/env bash
# Lints the container files, the compose file and the systemd units under deploy/ (or the folder
# given), with every linter this machine has, and says which ones it does not have instead of
# passing silently. `npm run lint` runs it; so does CI (through npm run lint).
#   Dockerfiles:  dockerfile-utils (npm, devDependency), and hadolint when it is on PATH
#   compose:      the Compose Specification's JSON schema and the project's settings (scripts/lint-compose.ts)
#   units:        systemd-analyze verify (Debian's systemd package)
#   image:        docker build of the server image, when a container engine answers
# Exit status 1 when a linter found a problem; absent linters are reported, not counted.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/deploy}"
failed=0
absent=()
say() { printf 'lint-deploy: %s\n' "$*"; }
run() { # name, command...: runs a linter, shows what it printed, counts a failure
  local name="$1"; shift
  local out
  if out="$("$@" 2>&1)" && [ -z "$out" ]; then say "ok    $name"; else failed=1; say "FAIL  $name"; printf '%s\n' "$out" | sed 's/^/    /'; fi
}

shopt -s nullglob
dockerfiles=("$dir"/docker/*.Dockerfile)
units=("$dir"/systemd/*.service)
[ ${#dockerfiles[@]} -gt 0 ] || { say "FAIL  no Dockerfile under $dir/docker"; failed=1; }
[ ${#units[@]} -gt 0 ] || { say "FAIL  no systemd unit under $dir/systemd"; failed=1; }

for f in "${dockerfiles[@]}"; do run "dockerfile-utils lint ${f#"$root"/}" "$root/node_modules/.bin/dockerfile-utils" lint "$f"; done
if command -v hadolint >/dev/null 2>&1; then
  for f in "${dockerfiles[@]}"; do run "hadolint ${f#"$root"/}" hadolint "$f"; done
else
  absent+=("hadolint (not packaged for this Debian release nor on npm; install its binary to use it)")
fi

run "compose schema and settings ${dir#"$root"/}/compose.yaml" "$root/node_modules/.bin/tsx" "$root/scripts/lint-compose.ts" "$dir/compose.yaml" "$dir/env" "$root/README.md"

if command -v systemd-analyze >/dev/null 2>&1; then
  # verify reads the units as systemd would (unknown keys, bad values, missing executables); its
  # man-page lookups are beside the point here.
  for f in "${units[@]}"; do run "systemd-analyze verify ${f#"$root"/}" systemd-analyze verify --man=no "$f"; done
else
  absent+=("systemd-analyze (apt-get install systemd): the units were not verified")
fi

if [ "${LINT_DEPLOY_BUILD:-auto}" != "no" ] && command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  run "docker build (server image)" docker build --quiet -f "$root/deploy/docker/server.Dockerfile" -t kernelseek-server:lint "$root"
else
  absent+=("a container engine (docker info does not answer here): the server image was not built")
fi

for a in "${absent[@]}"; do say "SKIP  $a"; done
if [ "$failed" -ne 0 ]; then say "problems found: fix the lines marked FAIL"; exit 1; fi
say "all linters that are present passed (${#absent[@]} absent, listed above)"
