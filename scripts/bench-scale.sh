#!/usr/bin/env bash
# Scale measurements for issue 13: the real large-session repeated to 10, 50
# and 200 MB (internal/cmd/bigsession), and 1M tiny entries; for each,
# `compact inspect`, `compact run --dry-run` and `compact run` (on a copy)
# timed by internal/cmd/rusage: wall and CPU seconds to the millisecond,
# ms per MB, and peak RSS as a multiple of the file size. Rounds are interleaved and the median is
# printed, with the machine's load average before and after.
#
#   scripts/bench-scale.sh               # 3 rounds, sizes 10 50 200, and 1M tiny entries
#   scripts/bench-scale.sh --quick       # 1 round, sizes 10 50, no tiny file
#   ROUNDS=5 SIZES="10 200" scripts/bench-scale.sh
#   BASE=bdbb4b7 scripts/bench-scale.sh  # also the compact of that revision,
#                                        # interleaved, rows marked base: / new:
#
# Files are generated once into ${COMPACT_SCALE_DIR:-/tmp/compact-scale}.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
testdata=${COMPACT_TESTDATA:-$root/../shared/testdata}
src=$testdata/sessions/pi/large-session.jsonl
dir=${COMPACT_SCALE_DIR:-/tmp/compact-scale}
rounds=${ROUNDS:-3}
sizes=${SIZES:-10 50 200}
tiny=${TINY:-1000000}
if [[ ${1:-} == --quick ]]; then rounds=1; sizes="10 50"; tiny=0; fi

[[ -f $src ]] || { echo "bench-scale: $src not found (set COMPACT_TESTDATA)" >&2; exit 1; }
mkdir -p "$dir"
bin=$dir/compact
(cd "$root" && go build -o "$bin" ./cmd/compact && go build -o "$dir/bigsession" ./internal/cmd/bigsession &&
	go build -o "$dir/rusage" ./internal/cmd/rusage)
# bins: label=binary pairs, run one after the other for every command.
bins=("new=$bin")
if [[ -n ${BASE:-} ]]; then
	base_src=$dir/base-src
	rm -rf "$base_src" && mkdir -p "$base_src"
	(cd "$root" && git archive "$BASE") | tar -x -C "$base_src" ||
		{ echo "bench-scale: cannot extract revision $BASE" >&2; exit 1; }
	(cd "$base_src" && go build -o "$dir/compact-base" ./cmd/compact)
	bins=("base=$dir/compact-base" "new=$bin")
	echo "base: $BASE ($(cd "$root" && git rev-parse --short "$BASE")), new: the working tree ($(cd "$root" && git rev-parse --short HEAD)$(cd "$root" && git diff --quiet HEAD || echo ', with uncommitted changes'))"
fi

files=()
for mb in $sizes; do
	f=$dir/s$mb.jsonl
	[[ -f $f ]] || "$dir/bigsession" -in "$src" -mb "$mb" -o "$f"
	files+=("$f")
done
if (( tiny > 0 )); then
	f=$dir/tiny$tiny.jsonl
	[[ -f $f ]] || "$dir/bigsession" -tiny "$tiny" -o "$f"
	files+=("$f")
fi

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
results=$dir/results.txt
: > "$results"
for ((r = 1; r <= rounds; r++)); do
	for f in "${files[@]}"; do
		for cmd in inspect "run --dry-run" run; do
			for lb in "${bins[@]}"; do
				label=${lb%%=*} b=${lb#*=}
				target=$f
				if [[ $cmd == run ]]; then
					target=$dir/copy.jsonl
					cp "$f" "$target"
				fi
				# shellcheck disable=SC2086
				"$dir/rusage" -o "$dir/time.txt" "$b" $cmd "$target" >/dev/null 2>"$dir/stderr.txt" ||
					{ echo "bench-scale: compact ($label) $cmd $target failed:" >&2; cat "$dir/stderr.txt" >&2; exit 1; }
				name=${cmd// /_}
				((${#bins[@]} > 1)) && name=$label:$name
				echo "$(basename "$f") $(stat -c %s "$f") $name $(cat "$dir/time.txt")" >> "$results"
			done
		done
	done
done
rm -f "$dir/copy.jsonl"
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo
awk '
{ key = $1 " " $3; size[key] = $2; n[key]++; wall[key, n[key]] = $4; cpu[key, n[key]] = $5 + $6; rss[key, n[key]] = $7 }
function median(arr, k, m,    i, j, t, v) {
	for (i = 1; i <= m; i++) v[i] = arr[k, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
}
END {
	printf "%-22s %-18s %9s %9s %9s %11s %10s %9s\n", "file", "command", "MB", "wall s", "cpu s", "cpu ms/MB", "peak MiB", "x file"
	for (key in n) {
		split(key, p, " ")
		mb = size[key] / 1e6
		w = median(wall, key, n[key]); c = median(cpu, key, n[key]); m = median(rss, key, n[key])
		printf "%-22s %-18s %9.1f %9.3f %9.3f %11.2f %10.0f %9.2f\n", p[1], p[2], mb, w, c, c * 1000 / mb, m / 1024, m * 1024 / size[key]
	}
}' "$results" | sort -k1,1V -k2,2
