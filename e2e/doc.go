// Package e2e drives real coding agents (Claude Code, Codex, opencode, pi)
// against internal/testing/fakeupstream, directly and through `compact proxy`.
//
// The tests carry the build tag e2e, so `go test ./...` skips them: they
// need the agents' CLIs from npm and a built compact binary. Run them with
// scripts/e2e-agents.sh, which installs both and sets the environment:
//
//	COMPACT_E2E_BIN       the compact binary
//	COMPACT_E2E_CLAUDE    the claude CLI (@anthropic-ai/claude-code)
//	COMPACT_E2E_CODEX     the codex CLI (@openai/codex)
//	COMPACT_E2E_OPENCODE  the opencode CLI (opencode-ai)
//	COMPACT_E2E_PI        the pi CLI (@mariozechner/pi-coding-agent), run
//	                      once per API it speaks (Anthropic Messages, Chat
//	                      Completions, Responses)
//
// A test whose variable is unset skips. Everything is hermetic: each agent
// runs with a temporary HOME and talks to 127.0.0.1 only.
//
// Three tests have no tag and run with `go test ./...`, because they need
// nothing but the go tool: they hold the doors to one behaviour.
// doors_anthropic_test.go and doors_openai_test.go feed the same request
// bodies through every door that reads them (the proxy, the request-body
// reader, the Claude Code and Codex readers) and expect the same messages;
// trigger_test.go checks that `compact inspect`, the library's Guard and
// the proxy trigger a model at the same size (compact.DefaultPolicy),
// building the command line with the go tool when COMPACT_E2E_BIN is unset.
package e2e
