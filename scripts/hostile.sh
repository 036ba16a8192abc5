#!/usr/bin/env bash
# Hostile traffic against a built `compact proxy`, measured on the proxy
# process itself: N concurrent large bodies (admission budget), one body
# of a million tiny messages (work bound per request), and connections
# that trickle their body at one byte a second (body timeout). It prints
# the status codes the clients got, the proxy's open descriptors, and its
# peak RSS (VmHWM from /proc/<pid>/status). Everything runs on loopback
# against a fake upstream started by the driver (scripts/hostile).
#
#   scripts/hostile.sh                          # 40 × 30 MiB, 1,000,000 tiny, 1,000 tricklers
#   scripts/hostile.sh -n 10 -mb 8 -tiny 100000 -slow 100
#   scripts/hostile.sh -proxy-args "--max-inflight-mb 64"
#
# Linux only (/proc). The trickle phase needs about -slow + 100 open files
# (ulimit -n).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
command -v go >/dev/null || { echo "hostile.sh: go is not on PATH" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/compact" ./cmd/compact
go build -o "$work/hostile" ./scripts/hostile
ulimit -n 4096 2>/dev/null || true
"$work/hostile" -compact "$work/compact" "$@"
