package fakeupstream

import (
	"fmt"
	"time"
)

// Config scripts a Fake. The zero value is usable: every field documents
// the default it falls back to.
type Config struct {
	// Window is the context window in tokens (see CountTokens). A request
	// to /v1/messages, /v1/chat/completions or /v1/responses whose body
	// counts more tokens is rejected with that provider's real overflow
	// error. 0 means no limit.
	Window int
	// OverflowInStream makes a Responses overflow arrive the way some
	// OpenAI deployments report it: HTTP 200, response.created, then a
	// response.failed event whose error code is context_length_exceeded.
	// It applies to streamed Responses requests only; otherwise the
	// overflow is an HTTP 400.
	OverflowInStream bool
	// Steps is how many shell tool calls the script makes before it
	// answers with its final text "DONE after N steps". Default 16.
	Steps int
	// OutputLines sizes each step's shell output: the command is
	// "echo STEP-n; seq 1 OutputLines", about 5 bytes a line (more once
	// the newlines are escaped in JSON). Default 1200 (about 4.9 KB).
	OutputLines int
	// Command, when set, replaces the default command for step n
	// (counted from 1). Its output must print "STEP-n" so that the
	// script can read where it is from the next request.
	Command func(step int) string
	// ToolNames lists the shell tool names the script looks for in a
	// request's tools, first match wins, compared case-insensitively.
	// Default: Bash, exec_command, shell, shell_command, run_shell_command.
	ToolNames []string
	// Task, when set, makes the script start at the last message holding
	// this text: tool results before it are not read, so an agent that
	// continues an older conversation with this prompt runs the steps
	// from 1. Empty reads the whole request.
	Task string
	// AllowUnpaired turns off the rejection of requests whose tool
	// results and tool calls do not pair up (see Check). Real providers
	// reject them with a 400, and so does the fake by default.
	AllowUnpaired bool
	// Model is the model name reported in responses when the request
	// names none, and the first entry of GET /v1/models. Default
	// "fake-model".
	Model string
	// Now stamps the created fields of responses and is the clock of the
	// prompt cache's lifetimes. Default time.Now.
	Now func() time.Time

	// The fake behaves like the providers by default, as for an account
	// created after 2026-08-31: Anthropic thinking blocks are signed and
	// checked (see checkThinking), prompt caching is accounted (see
	// account), provider compaction is served and checked. The switches
	// below turn part of that off; a test that sets one says why.

	// OldAccount makes the Anthropic prefix check of thinking blocks
	// behave as for an account created before 2026-08-31: a block whose
	// prefix changed is accepted, unless the request sets
	// thinking.block_binding. Forged signatures and the tool-loop rule
	// are still refused.
	OldAccount bool
	// NoCache turns prompt-cache accounting off: every request reads and
	// writes nothing, as before a cache existed.
	NoCache bool
	// CacheMinTokens is the smallest prefix, in tokens, that is cached.
	// Default DefaultCacheMinTokens (1024); set 1 to cache every prefix.
	CacheMinTokens int

	// TurnLatency is how long the fake takes to answer a model call that
	// is not a summary request, SummaryLatency a summary request's: one
	// IsSummaryPrompt recognises, one that asks for a summary (an agent's
	// own compaction), an Anthropic compaction request or POST
	// /v1/responses/compact. The zero Latency answers at once (the
	// default, so that tests stay fast); a model takes about a second for
	// a turn and ten or more for a long summary.
	TurnLatency, SummaryLatency Latency
}

// Latency is how a model's answer arrives: FirstByte after the request,
// then the rest of a stream spread over Stream (a non-streamed answer
// arrives whole after FirstByte+Stream).
type Latency struct {
	FirstByte, Stream time.Duration
}

// total is the time until a whole non-streamed answer is there.
func (l Latency) total() time.Duration { return l.FirstByte + l.Stream }

// DefaultSteps, DefaultOutputLines and DefaultModel are the values an
// unset Config field stands for.
const (
	DefaultSteps       = 16
	DefaultOutputLines = 1200
	DefaultModel       = "fake-model"
)

// defaultToolNames is the shell tools of the agents the e2e tests drive:
// Claude Code's Bash, Codex's exec_command (older Codex: shell), opencode's
// bash, Gemini CLI's run_shell_command.
func defaultToolNames() []string {
	return []string{"Bash", "exec_command", "shell", "shell_command", "run_shell_command"}
}

// withDefaults returns c with every unset field filled in.
func (c Config) withDefaults() Config {
	if c.Steps <= 0 {
		c.Steps = DefaultSteps
	}
	if c.OutputLines <= 0 {
		c.OutputLines = DefaultOutputLines
	}
	if c.Command == nil {
		lines := c.OutputLines
		c.Command = func(step int) string { return fmt.Sprintf("echo STEP-%d; seq 1 %d", step, lines) }
	}
	if len(c.ToolNames) == 0 {
		c.ToolNames = defaultToolNames()
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.CacheMinTokens <= 0 {
		c.CacheMinTokens = DefaultCacheMinTokens
	}
	return c
}

// CountTokens is the fake's tokenizer: a quarter of the body's bytes,
// rounded up. It is deterministic and close enough to real tokenizers on
// English and JSON for window arithmetic in tests.
func CountTokens(body []byte) int {
	return (len(body) + 3) / 4
}
