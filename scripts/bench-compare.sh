#!/usr/bin/env bash
# Compares the Go benchmarks of the working tree with those of an earlier
# revision, on the same machine in the same run: both sides' test binaries
# are built first, then run in interleaved rounds (round i runs the base,
# then the tree, the order swapped every other round) so that both see
# the same load, and benchstat compares them. A package that moved since
# the base is found under its old path through git's rename detection.
# BENCHMARKS.md reports this output for changes that must not be slower.
#
#   scripts/bench-compare.sh 8a0a3d9                  # the default packages, 5 rounds
#   scripts/bench-compare.sh --rounds 8 HEAD~3 ./session ./proxy
#   scripts/bench-compare.sh --bench 'Parse|Load' --benchtime 2s main ./session
#
# Options:
#   --rounds N       interleaved rounds (default 5)
#   --bench REGEX    benchmarks to run (default .)
#   --benchtime T    go test -benchtime (default 1s)
#   --out DIR        keep base.txt and tree.txt in DIR
#
# Needs go and git; benchstat is run with `go run` from the module proxy.
# The base is checked out as a git worktree beside this checkout (so that
# ../shared resolves the same for both sides) and removed at the end.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
die() { echo "bench-compare: $*" >&2; exit 2; }
rounds=5 bench=. benchtime=1s out="" base="" pkgs=()
while (($#)); do
	case $1 in
	--rounds) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive number"; rounds=$2; shift 2 ;;
	--bench) [[ -n ${2:-} ]] || die "--bench wants a regular expression"; bench=$2; shift 2 ;;
	--benchtime) [[ -n ${2:-} ]] || die "--benchtime wants a duration or Nx"; benchtime=$2; shift 2 ;;
	--out) [[ -n ${2:-} ]] || die "--out wants a folder"; out=$2; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) if [[ -z $base ]]; then base=$1; else pkgs+=("$1"); fi; shift ;;
	esac
done
[[ -n $base ]] || die "usage: scripts/bench-compare.sh [options] BASE [PKG...] (see --help)"
git rev-parse --verify -q "$base^{commit}" >/dev/null || die "$base: not a revision of this repository"
((${#pkgs[@]})) || pkgs=(. ./session ./proxy ./agents/claudecode ./agents/codex ./agents/requestbody ./summarize/extractive ./report)

testdata="${COMPACT_TESTDATA:-$root/../shared/testdata}"
[[ -d $testdata ]] || die "test data not found at $testdata (set COMPACT_TESTDATA)"
COMPACT_TESTDATA=$(cd "$testdata" && pwd)
export COMPACT_TESTDATA

tmp=$(mktemp -d)
wt="$root/../.bench-compare-$$"
cleanup() {
	git -C "$root" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
	rm -rf "$tmp"
}
trap cleanup EXIT
git worktree add -q --detach "$wt" "$base"

# oldpath prints the path pkg had at the base revision: the same path when
# it exists there, else where git's rename detection says its files were.
oldpath() {
	local pkg=${1#./}
	if [[ $pkg == . || -d $wt/$pkg ]]; then echo "$pkg"; return; fi
	local from
	from=$(git diff -M --name-status "$base" HEAD | awk -v d="$pkg/" '$1 ~ /^R/ && index($3, d) == 1 && $3 ~ /\.go$/ && substr($3, length(d) + 1) !~ /\// {print $2; exit}')
	[[ -n $from ]] || return 1
	dirname "$from"
}

names=()
for p in "${pkgs[@]}"; do
	p=${p#./}
	[[ -d $root/$p ]] || die "$p: no such package folder"
	old=$(oldpath "$p") || die "$p: not found at $base (neither there nor renamed)"
	name=$(echo "$p" | tr '/.' '__')
	echo "building $p (base: $old)" >&2
	(cd "$root" && go test -c -o "$tmp/tree.$name.test" "./$p")
	(cd "$wt" && go test -c -o "$tmp/base.$name.test" "./$old")
	names+=("$name:$p:$old")
done

run() { # side name dir
	(cd "$3" && "$tmp/$1.$2.test" -test.run '^$' -test.bench "$bench" -test.benchtime "$benchtime" -test.benchmem) |
		grep -E '^(Benchmark|goos|goarch|pkg|cpu)' | grep -v 'NaN' | sed "s#^pkg: .*#pkg: $4#"
}
for ((r = 1; r <= rounds; r++)); do
	echo "round $r/$rounds" >&2
	for entry in "${names[@]}"; do
		IFS=: read -r name p old <<<"$entry"
		if ((r % 2)); then
			run base "$name" "$wt/$old" "$p" >>"$tmp/base.txt"
			run tree "$name" "$root/$p" "$p" >>"$tmp/tree.txt"
		else
			run tree "$name" "$root/$p" "$p" >>"$tmp/tree.txt"
			run base "$name" "$wt/$old" "$p" >>"$tmp/base.txt"
		fi
	done
done
if [[ -n $out ]]; then
	mkdir -p "$out"
	cp "$tmp/base.txt" "$tmp/tree.txt" "$out/"
fi
echo "base: $(git rev-parse --short "$base"); tree: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes')"
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da base="$tmp/base.txt" tree="$tmp/tree.txt"
