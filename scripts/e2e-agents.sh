#!/usr/bin/env bash
# End-to-end test with real coding agents: Claude Code, Codex, opencode and
# pi (once per API kind: Anthropic Messages, Chat Completions, Responses) run
# a scripted 16-step shell task against a fake provider
# (internal/testing/fakeupstream), once directly (the task must overflow the fake's
# window) and once through `compact proxy` (it must finish).
#
# Installs the agents' CLIs from npm into a cache folder when missing,
# builds compact, and runs the e2e-tagged tests in ./e2e. Everything else
# is hermetic: each agent gets a temporary HOME and talks to 127.0.0.1 only.
# Where unprivileged user namespaces work (unshare -rn), the tests run in a
# network namespace that has nothing but loopback, which proves it.
#
#   scripts/e2e-agents.sh                          # all four agents
#   scripts/e2e-agents.sh -run 'Agents/codex'      # extra go test flags
#
# Environment:
#   COMPACT_E2E_CACHE   where the CLIs are installed (default ~/.cache/compact-e2e)
#   COMPACT_E2E_AGENTS  which to install and test, space-separated
#                       (default "claude codex opencode pi")
#   COMPACT_E2E_NETNS   0 to run the tests in the ordinary network namespace
set -euo pipefail

# The versions the tests and their window sizes were measured with.
CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
OPENCODE_VERSION=1.18.33
PI_VERSION=0.73.1

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${COMPACT_E2E_CACHE:-$HOME/.cache/compact-e2e}
agents=${COMPACT_E2E_AGENTS:-claude codex opencode pi}

die() { echo "e2e-agents: $*" >&2; exit 1; }
command -v go >/dev/null || die "go is not on PATH"
command -v npm >/dev/null || die "npm is not on PATH (the agents' CLIs come from npm)"

# install PACKAGE VERSION BIN: npm-install PACKAGE@VERSION into the cache
# unless BIN there already reports VERSION.
install() {
	local pkg=$1 version=$2 bin=$cache/node_modules/.bin/$3
	if [[ -x $bin ]] && "$bin" --version 2>/dev/null | grep -qF "$version"; then
		return
	fi
	echo "e2e-agents: installing $pkg@$version into $cache" >&2
	mkdir -p "$cache"
	# The CLIs ship native binaries as optional dependencies; Claude Code's
	# postinstall step puts its binary in place, so scripts must run.
	npm install --prefix "$cache" --save-exact --no-fund --no-audit \
		--loglevel=error "$pkg@$version" >&2
	"$bin" --version >/dev/null || die "$bin --version fails after installing $pkg@$version"
}

unset COMPACT_E2E_CLAUDE COMPACT_E2E_CODEX COMPACT_E2E_OPENCODE COMPACT_E2E_PI
for a in $agents; do
	case $a in
	claude)
		install @anthropic-ai/claude-code "$CLAUDE_VERSION" claude
		export COMPACT_E2E_CLAUDE=$cache/node_modules/.bin/claude ;;
	codex)
		install @openai/codex "$CODEX_VERSION" codex
		export COMPACT_E2E_CODEX=$cache/node_modules/.bin/codex ;;
	opencode)
		install opencode-ai "$OPENCODE_VERSION" opencode
		export COMPACT_E2E_OPENCODE=$cache/node_modules/.bin/opencode ;;
	pi)
		install @mariozechner/pi-coding-agent "$PI_VERSION" pi
		export COMPACT_E2E_PI=$cache/node_modules/.bin/pi ;;
	*) die "unknown agent $a in COMPACT_E2E_AGENTS (want claude, codex, opencode, pi)" ;;
	esac
done

bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
(cd "$root" && go build -o "$bindir/compact" ./cmd/compact)
export COMPACT_E2E_BIN=$bindir/compact

cd "$root"
# Fetch and compile what the tests need while the network is there.
go vet -tags e2e ./e2e/...
test=(go test -tags e2e -run Agents -v -timeout 30m "$@" ./e2e/...)
if [[ ${COMPACT_E2E_NETNS:-1} != 0 ]] && command -v ip >/dev/null &&
	unshare -rn sh -c 'ip link set lo up' 2>/dev/null; then
	echo "e2e-agents: running in a network namespace with loopback only" >&2
	GOPROXY=off GOTOOLCHAIN=local unshare -rn sh -c 'ip link set lo up && exec "$@"' sh "${test[@]}"
else
	echo "e2e-agents: no network namespace (unshare -rn unavailable or COMPACT_E2E_NETNS=0); the agents are still pointed at 127.0.0.1 only" >&2
	"${test[@]}"
fi
