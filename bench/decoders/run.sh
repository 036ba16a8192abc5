#!/usr/bin/env bash
# run.sh times the session parse with each decoder of Candidates, in
# rounds: every round runs each candidate once, in a new random order, in
# a process of its own, so that load that comes and goes on a shared
# machine spreads over all of them. It prints benchstat's summary when
# benchstat is installed (go install golang.org/x/perf/cmd/benchstat@latest).
#
#   bench/decoders/run.sh [rounds] [benchtime] [cpu]     (defaults: 6 1s 2)
#
# COMPACT_BIG_SESSION=/tmp/s50.jsonl adds a large file (made with
# internal/cmd/bigsession); GOEXPERIMENT=jsonv2 adds encoding/json/v2.
# Raw results go to $OUT (default /tmp/decoders), one file per run.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-6}
benchtime=${2:-1s}
cpu=${3:-2}
out=${OUT:-/tmp/decoders}
mkdir -p "$out"
tag=${GOEXPERIMENT:-default}-cpu$cpu
bin=$out/decoders-$tag.test
go test -c -o "$bin" .
# floor is BenchmarkParseFloor's decoder, which costs nothing.
cands="$("$bin" -test.run '^TestListCandidates$' -test.v | sed -n 's/^candidate //p') floor"
res=$out/parse-$tag.txt
: >"$res"
echo "load before: $(uptime)" | tee "$out/load-$tag.txt"
for r in $(seq "$rounds"); do
	for c in $(printf '%s\n' $cands | shuf); do
		"$bin" -test.run '^$' -test.bench "^BenchmarkParse(Floor)?\$/.*/^decoder=${c}\$" -test.benchtime "$benchtime" \
			-test.count 1 -test.cpu "$cpu" >>"$res"
	done
	echo "round $r done: $(uptime)" | tee -a "$out/load-$tag.txt"
done
echo "load after: $(uptime)" | tee -a "$out/load-$tag.txt"
if command -v benchstat >/dev/null; then
	# The hand decoder is the base every other column is compared with.
	benchstat -row /file -col "/decoder@($(echo $cands))" "$res" | tee "$out/benchstat-$tag.txt"
fi
