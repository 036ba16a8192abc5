#!/usr/bin/env bash
# Side-by-side benchmark of compact against pi (issue 13): pi's own
# functions, from its published npm package (pinned in bench/vspi), and
# compact's Go benchmarks run on the same session files in interleaved
# rounds (round i: pi, then compact), so that both sides see the same
# machine load. It prints, per step and file, each side's median over the
# rounds, the median and range of the per-round ratios pi / compact, and
# each side's spread over the rounds (how noisy the machine was), then the
# append-and-check times at 1,000, 10,000 and 100,000 messages and whether
# the speed goals are met. BENCHMARKS.md reports this output.
#
#   scripts/bench-vs-pi.sh                       # 7 rounds on the two real pi sessions
#   scripts/bench-vs-pi.sh --rounds 5 a.jsonl b.jsonl
#   scripts/bench-vs-pi.sh --quick               # 1 short round: checks that it works
#
# Options:
#   --rounds N   interleaved rounds (default 7)
#   --quick      one round with few calls and a short benchtime (under 2 minutes)
#   --out DIR    keep the raw results (pi.N.json, go.N.txt) in DIR
#
# What each side times (see bench/vspi/pi.mjs and the Go benchmarks):
#   parse + migrate  pi: parseSessionEntries + migrateSessionEntries of the
#                    file's text in memory; compact: session BenchmarkParse
#                    (bytes in memory, decoded, migrated, indexed; token
#                    estimates are left to the first plan, as pi does).
#   load             pi: read + parse + migrate + index + buildSessionContext
#                    of the leaf; compact: session BenchmarkLoad (Open +
#                    the leaf's path + compact.BuildContext).
#   plan             pi: prepareCompaction with its default settings on a
#                    session loaded just before; compact: BenchmarkPlanFirst,
#                    PlanCompaction on a session loaded just before, which
#                    estimates every message as pi's does. Loading,
#                    the path and a garbage collection are untimed on both
#                    (Go's also returns the freed memory to the system, so
#                    that the runtime does not do it during the plan).
#   append + check   compact only: BenchmarkAppendAndCheck.
#
# Needs go, node and npm. Installs the pinned npm package with `npm ci`
# into bench/vspi/node_modules when it is missing. Not run by .ci/run (it
# takes minutes). The session files default to the two real pi sessions in
# ${COMPACT_TESTDATA:-../shared/testdata}/sessions/pi.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
vspi=bench/vspi

die() { echo "bench-vs-pi: $*" >&2; exit 1; }

rounds=7 quick=0 out="" files=()
while (($#)); do
	case $1 in
	--rounds)
		[[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive integer"
		rounds=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--out)
		[[ -n ${2:-} ]] || die "--out wants a folder"
		out=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) files+=("$1"); shift ;;
	esac
done

if ((${#files[@]} == 0)); then
	testdata=${COMPACT_TESTDATA:-../shared/testdata}
	files=("$testdata/sessions/pi/large-session.jsonl" "$testdata/sessions/pi/before-compaction.jsonl")
fi
abs=()
declare -A seen=()
for f in "${files[@]}"; do
	[[ -f $f ]] || die "session file '$f' not found (set COMPACT_TESTDATA or name the files)"
	b=$(basename "$f")
	[[ -z ${seen[$b]:-} ]] || die "two files named $b: the tables key files by name"
	seen[$b]=1
	abs+=("$(cd "$(dirname "$f")" && pwd)/$b")
done
list=$(IFS=:; echo "${abs[*]}")

for c in go node npm; do command -v $c >/dev/null || die "$c is not on PATH"; done

# installed exits 0 when node_modules holds the pinned version of pi.
installed() {
	(cd "$vspi" && node -e '
		const fs = require("fs");
		const want = JSON.parse(fs.readFileSync("package.json", "utf8")).dependencies["@mariozechner/pi-coding-agent"];
		let got = "";
		try { got = JSON.parse(fs.readFileSync("node_modules/@mariozechner/pi-coding-agent/package.json", "utf8")).version; } catch {}
		process.exit(got === want ? 0 : 1);')
}
if ! installed; then
	echo "bench-vs-pi: npm ci --prefix $vspi (pi's published package, pinned in package-lock.json)" >&2
	npm ci --prefix "$vspi" --ignore-scripts --no-audit --no-fund --loglevel=error >&2
	installed || die "npm ci did not install the pinned @mariozechner/pi-coding-agent"
fi

if ((quick)); then
	rounds=1
	pi_args=(--warmup 3 --calls 20 --plan-calls 10)
	benchtime=0.1s plan_count=10x append_count=10000x
else
	pi_args=(--warmup 20 --calls 200 --plan-calls 100)
	benchtime=1s plan_count=100x append_count=100000x
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
res=${out:-$tmp/results}
mkdir -p "$res"

echo "bench-vs-pi: compiling the Go benchmarks" >&2
go test -c -o "$tmp/compact.test" .
go test -c -o "$tmp/session.test" ./session

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
echo "Output of scripts/bench-vs-pi.sh --rounds $rounds$( ((quick)) && echo ' --quick'):"
echo
echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
echo "- machine: $(nproc) CPUs${cpu:+ ($cpu)}, $(go version | awk '{print $3, $4}'), node $(node --version)"
echo "- files: ${abs[*]}"
echo "- pi: ${pi_args[*]}; Go: -benchtime $benchtime (BenchmarkPlanFirst $plan_count, BenchmarkAppendAndCheck $append_count)"
echo "- load before: $(uptime | sed 's/.*load average/load average/')"

export COMPACT_BENCH_FILES=$list
for ((r = 1; r <= rounds; r++)); do
	echo "bench-vs-pi: round $r of $rounds: pi" >&2
	node --expose-gc "$vspi/pi.mjs" "${pi_args[@]}" "${abs[@]}" >"$res/pi.$r.json"
	echo "bench-vs-pi: round $r of $rounds: compact" >&2
	{
		(cd session && "$tmp/session.test" -test.run '^$' -test.bench '^Benchmark(Parse|Load)$' -test.benchtime "$benchtime")
		"$tmp/compact.test" -test.run '^$' -test.bench '^BenchmarkPlanFirst$' -test.benchtime "$plan_count"
		"$tmp/compact.test" -test.run '^$' -test.bench '^BenchmarkAppendAndCheck$' -test.benchtime "$append_count"
	} >"$res/go.$r.txt"
done

echo "- load after: $(uptime | sed 's/.*load average/load average/')"
echo
node "$vspi/report.mjs" "$res"
