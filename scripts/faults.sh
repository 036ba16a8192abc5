#!/usr/bin/env bash
# Fault tests of the proxy at scale: three `compact proxy` processes share
# one redis-server (started by the tests on loopback, installed from
# Debian's packages when missing) and carry 50 concurrent agent
# conversations of 30 tool steps each, through one fault per test (the
# provider's faults hit each conversation, never twice in a row):
#
#   TestReplicaProcessesOnRedis  no fault: one compaction per crossing
#   TestFaultRedisRestart        Redis killed half way, back empty later
#   TestReplicaKilledMidStream   a replica killed with SIGKILL mid-stream
#   TestFaultUpstream500s        the provider fails one request in 7
#   TestFaultUpstreamTimeouts    ... leaves one in 13 without an answer
#   TestFaultStalledStream       ... stops one stream in 13 after a chunk
#   TestFaultSummarizerFails     every model summary fails (offline used)
#   TestFaultClientDisconnects   clients abandon one answer in nine
#
# After each, no lock may outlive its expiry and every record must decode
# (and match what the conversation last sent). The figures each test logs
# (requests, faults injected, retries, cancellations, compactions) are
# printed. `go test ./...` (and .ci/run) runs the same tests; this script
# runs only them, verbosely.
#
#   scripts/faults.sh                   # all of them (about 40 s)
#   scripts/faults.sh -run TestFaultStalledStream
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
command -v go >/dev/null || { echo "faults.sh: go is not on PATH" >&2; exit 1; }
if ! command -v redis-server >/dev/null; then
	echo "--- installing redis-server"
	sudo=""
	if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq redis-server >/dev/null
fi
run='TestReplicaProcessesOnRedis|TestFault|TestReplicaKilledMidStream'
if [ "${1:-}" = "-run" ]; then
	run=${2:?-run needs a pattern}
	shift 2
fi
cd "$root"
COMPACT_REQUIRE_REDIS=1 go test -count=1 -v -run "$run" "$@" ./proxy/store/redis |
	grep -E '^(=== RUN|--- |ok|FAIL|PASS)|_test\.go:[0-9]+:'
