#!/usr/bin/env bash
# Load benchmark of the proxy at scale: wrk (Debian's package) sends
# streamed Anthropic requests of 20,000-token agent conversations at 50 and
# 200 concurrent connections, directly to a provider with latency
# (internal/cmd/loadupstream) and through one and three `compact proxy`
# processes sharing one redis-server, in interleaved rounds. No compaction
# runs: this measures what the proxy adds to every request.
#
# It prints, per target and concurrency, the median over the rounds of the
# requests per second (and their share of direct in the same round), the
# latency to the end of the stream at p50 and p99 (and what the proxy adds
# to direct's in the same round), and the peak resident memory of each
# replica. A second direct run in every round ("direct-again") shows the
# noise floor: what the same target differs from itself. It exits non-zero
# if any request failed.
#
#   scripts/load.sh                  # 5 rounds of 10 s per row (about 7 min)
#   scripts/load.sh --quick          # 1 round of 2 s per row, a smoke test
#   scripts/load.sh --rounds 3 --duration 5
#
# Environment (defaults in brackets):
#   LOAD_FIRST_BYTE  the provider's time to first byte [300ms]
#   LOAD_CHUNKS      text deltas per answer [60]
#   LOAD_INTERVAL    time between deltas [10ms]
# The defaults pace an answer like a fast model (about 0.9 s); real ones
# take seconds. LOAD_FIRST_BYTE=50ms LOAD_CHUNKS=20 LOAD_INTERVAL=5ms is a
# stress run with about five times the request rate.
#   LOAD_TOKENS      conversation size in tokens (4 bytes a token) [20000]
#   LOAD_THREADS     wrk threads, spread round-robin over the replicas [10]
#   LOAD_PIN         1 to pin wrk, the provider and Redis to the first CPU
#                    and the replicas to the others (taskset), as if the
#                    replicas had a machine of their own [0]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rounds=5
duration=10
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) rounds=1; duration=2 ;;
	--rounds) rounds=${2:?--rounds needs a number}; shift ;;
	--duration) duration=${2:?--duration needs seconds}; shift ;;
	-h|--help) sed -n "2,/^set -e/p" "$0" | grep "^#" | sed "s/^# \{0,1\}//"; exit 0 ;;
	*) echo "load.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case "$rounds$duration" in *[!0-9]*) echo "load.sh: --rounds and --duration take whole numbers" >&2; exit 2 ;; esac
threads=${LOAD_THREADS:-10}
export TOKENS=${LOAD_TOKENS:-20000}

die() { echo "load.sh: $*" >&2; exit 1; }
. "$root/scripts/lib.sh"
command -v go >/dev/null || die "go is not on PATH"
need wrk redis-server

# Pinning: "front" runs wrk, the provider and Redis, "back" the replicas.
front=()
back=()
if [ "${LOAD_PIN:-0}" = 1 ]; then
	cpus=$(nproc)
	[ "$cpus" -ge 2 ] || die "LOAD_PIN=1 needs at least 2 CPUs"
	command -v taskset >/dev/null || die "LOAD_PIN=1 needs taskset (util-linux)"
	front=(taskset -c 0)
	back=(taskset -c "1-$((cpus - 1))")
fi

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "--- building compact and loadupstream"
(cd "$root" && go build -o "$work/compact" ./cmd/compact && go build -o "$work/loadupstream" ./internal/cmd/loadupstream)

# A free loopback port for redis-server, which cannot pick its own.
redis_port=$(free_port redis-server)
"${front[@]}" redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
for i in $(seq 1 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null; then break; fi
	sleep 0.1
done

"${front[@]}" "$work/loadupstream" -listen 127.0.0.1:0 -first-byte "${LOAD_FIRST_BYTE:-300ms}" -chunks "${LOAD_CHUNKS:-60}" \
	-interval "${LOAD_INTERVAL:-10ms}" >"$work/upstream.out" 2>&1 &
pids+=($!)
upstream=$(started "$work/upstream.out" "listening on")

replicas=()
replica_pids=()
for i in 1 2 3; do
	"${back[@]}" "$work/compact" proxy --listen 127.0.0.1:0 --redis "redis://127.0.0.1:$redis_port/0" \
		--anthropic-upstream "http://$upstream" --window 200000 --summarizer extractive \
		--log-format json >"$work/replica$i.out" 2>"$work/replica$i.log" &
	pids+=($!)
	replica_pids+=($!)
	replicas+=("$(started "$work/replica$i.out" "listening on")")
done
echo "provider http://$upstream; replicas ${replicas[*]}; redis 127.0.0.1:$redis_port"

# run NAME CONC TARGETS...: one wrk run, its result line appended to
# $work/results as "NAME CONC ROUND JSON"; replica memory is sampled
# meanwhile into $work/rss.
run() {
	local name=$1 conc=$2 round=$3
	shift 3
	local targets
	targets=$(IFS=,; echo "$*")
	local sampler
	(
		while true; do
			for j in 0 1 2; do
				echo "$name $conc $j $(awk '/VmRSS/ {print $2}' "/proc/${replica_pids[$j]}/status" 2>/dev/null)"
			done
			sleep 0.5
		done >>"$work/rss"
	) &
	sampler=$!
	local out
	out=$(cd "$root/scripts/load" && TARGETS="$targets" "${front[@]}" wrk -t "$threads" -c "$conc" -d "${duration}s" --timeout 10s \
		-s conversations.lua "http://$1" 2>&1) || die "wrk failed: $out"
	kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
	local line
	line=$(echo "$out" | grep '^load-result ' | sed 's/^load-result //') || die "no result from wrk: $out"
	echo "$name $conc $round $line" >>"$work/results"
}

# Warm up at the higher concurrency, long enough that every connection
# has sent each of its conversations once: a conversation's first request
# is read in full (the proxy learns its size), the later ones are not.
echo "--- warming up"
saved=$duration
duration=3
run direct 200 0 "$upstream"
run 1-replica 200 0 "${replicas[0]}"
run 3-replicas 200 0 "${replicas[@]}"
duration=$saved
: >"$work/results"
: >"$work/rss"

for r in $(seq 1 "$rounds"); do
	for conc in 50 200; do
		echo "--- round $r/$rounds, $conc connections"
		run direct "$conc" "$r" "$upstream"
		run 1-replica "$conc" "$r" "${replicas[0]}"
		run 3-replicas "$conc" "$r" "${replicas[@]}"
		# Direct once more: how far two runs of the same thing differ is
		# the noise floor of the added latency.
		run direct-again "$conc" "$r" "$upstream"
	done
done

echo
echo "wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}'), $threads threads, ${duration}s per run, $rounds rounds; $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'))"
[ ${#front[@]} -eq 0 ] || echo "pinned: wrk, provider and Redis on CPU 0, replicas on CPUs ${back[2]}"
echo "provider: first byte ${LOAD_FIRST_BYTE:-300ms}, ${LOAD_CHUNKS:-60} deltas ${LOAD_INTERVAL:-10ms} apart; conversations of $TOKENS tokens"
echo
# The table: medians over rounds; added latency and share of direct are
# computed per round against that round's direct run, then the median.
awk -v rounds="$rounds" '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	if (n == 0) return 0
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function field(json, name,   m) {
	if (match(json, "\"" name "\":[0-9.]+")) { m = substr(json, RSTART, RLENGTH); sub(/.*:/, "", m); return m + 0 }
	return 0
}
FILENAME ~ /rss$/ { if ($4 + 0 > peak[$1 " " $2 " " $3]) peak[$1 " " $2 " " $3] = $4 + 0; next }
{
	key = $1 " " $2; round = $3; json = $4
	rps[key, round] = field(json, "requests") / field(json, "seconds")
	p50[key, round] = field(json, "p50"); p99[key, round] = field(json, "p99")
	errors += field(json, "errors") + field(json, "status_errors")
	seen[key] = 1
}
END {
	printf "| target | connections | req/s | of direct | p50 | p99 | added p50 | added p99 | peak RSS per replica |\n"
	printf "|---|---:|---:|---:|---:|---:|---:|---:|---|\n"
	split("direct direct-again 1-replica 3-replicas", names, " ")
	split("50 200", concs, " ")
	for (ci = 1; ci <= 2; ci++) for (ni = 1; ni <= 4; ni++) {
		key = names[ni] " " concs[ci]; d = "direct " concs[ci]
		if (!(key in seen)) continue
		lr = ""; lp50 = ""; lp99 = ""; ls = ""; la50 = ""; la99 = ""
		for (r = 1; r <= rounds; r++) {
			lr = lr " " rps[key, r]; lp50 = lp50 " " p50[key, r]; lp99 = lp99 " " p99[key, r]
			ls = ls " " (rps[d, r] ? 100 * rps[key, r] / rps[d, r] : 0)
			la50 = la50 " " (p50[key, r] - p50[d, r]); la99 = la99 " " (p99[key, r] - p99[d, r])
		}
		mem = "-"
		if (names[ni] ~ /replica/) {
			mem = ""
			for (j = 0; j < (names[ni] == "1-replica" ? 1 : 3); j++) mem = mem (j ? ", " : "") sprintf("%.0f MiB", peak[names[ni] " " concs[ci] " " j] / 1024)
		}
		added50 = names[ni] == "direct" ? "-" : sprintf("%+.2f ms", median(la50) / 1000)
		added99 = names[ni] == "direct" ? "-" : sprintf("%+.2f ms", median(la99) / 1000)
		printf "| %s | %s | %.0f | %.1f %% | %.1f ms | %.1f ms | %s | %s | %s |\n", names[ni], concs[ci], median(lr), median(ls), median(lp50) / 1000, median(lp99) / 1000, added50, added99, mem
	}
	if (errors > 0) { printf "\n%d requests failed\n", errors; exit 1 }
}' "$work/rss" "$work/results"
