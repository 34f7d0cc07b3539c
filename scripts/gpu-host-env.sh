#!/usr/bin/env bash
# Source this on the GPU host (device tool) after carrying .carry/host: unpacks Node, node_modules
# Redis and bubblewrap into /tmp/kshost and puts node, redis-server, redis-cli and bwrap on PATH.
# Usage: source scripts/gpu-host-env.sh
set -e
_ks_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_ks_carry="$_ks_root/.carry/host"
mkdir -p /tmp/kshost/bin /tmp/kshost/redis
if [ ! -x /tmp/kshost/bin/node ]; then
  xz -dc "$_ks_carry/node.xz" > /tmp/kshost/bin/node && chmod +x /tmp/kshost/bin/node
fi
if [ ! -d "$_ks_root/node_modules" ]; then
  tar -C "$_ks_root" -xJf "$_ks_carry/node_modules.tar.xz"
fi
if [ ! -x /tmp/kshost/redis/usr/bin/redis-server ] || [ ! -x /tmp/kshost/redis/usr/bin/bwrap ]; then
  for d in "$_ks_carry"/debs/*.deb; do dpkg -x "$d" /tmp/kshost/redis; done
fi
export PATH="/tmp/kshost/bin:/tmp/kshost/redis/usr/bin:$PATH"
export LD_LIBRARY_PATH="/tmp/kshost/redis/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
set +e
