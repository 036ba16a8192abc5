#!/usr/bin/env bash
# check-tracked.sh fails when git tracks a build output: an executable or
# object file (ELF, Mach-O, PE, Go archive), a test binary, a profile, or any
# file over 1 MiB. Build outputs belong in .gitignore, never in the history;
# .ci/run runs this first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

limit=$((1024 * 1024))
bad=0
while IFS= read -r -d '' f; do
	[ -f "$f" ] || continue
	case "$f" in
	*.test | *.prof | *.out | *.exe | *.o | *.a | *.so)
		echo "check-tracked: $f: build output tracked by git (name matches .gitignore's patterns)" >&2
		bad=1
		continue
		;;
	esac
	magic="$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')"
	case "$magic" in
	7f454c46 | cffaedfe | cefaedfe | 4d5a* | 213c6172)
		echo "check-tracked: $f: binary executable or archive tracked by git (magic $magic)" >&2
		bad=1
		continue
		;;
	esac
	size="$(stat -c %s "$f")"
	if [ "$size" -gt "$limit" ]; then
		echo "check-tracked: $f: $size bytes tracked by git (limit $limit; keep large data out of the repository)" >&2
		bad=1
	fi
done < <(git ls-files -z)
exit "$bad"
