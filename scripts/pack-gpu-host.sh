#!/usr/bin/env bash
# Packs what the GPU host lacks into .carry/host (git-ignored), for the device tool's `carry`:
# a compressed Node binary, production node_modules, and Redis and bubblewrap (the sandbox of the
# agent's commands) from Debian packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/.carry/host"
mkdir -p "$out/debs"
[ -s "$out/node.xz" ] || xz -T2 -c "$(command -v node)" > "$out/node.xz"
tmp=$(mktemp -d)
cp "$root/package.json" "$root/package-lock.json" "$tmp/"
(cd "$tmp" && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
tar -C "$tmp" -cf - node_modules | xz -T2 -6 > "$out/node_modules.tar.xz"
rm -rf "$tmp"
(cd "$out/debs" && rm -f ./*.deb && apt-get download redis-server redis-tools libjemalloc2 liblzf1 bubblewrap >/dev/null 2>&1)
for f in "$out"/debs/*%3a*; do [ -e "$f" ] && mv "$f" "${f//%3a/_}"; done
du -sh "$out"/*
