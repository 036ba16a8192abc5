package proxy

import (
	"net/http"
	"strings"
)

// maxAgentLen bounds the agent name kept for a conversation.
const maxAgentLen = 64

// agentOf names the client that sent a request, for the conversation
// API: the first product of its User-Agent ("claude-cli/2.0.14",
// "codex_cli_rs/0.46.0", "opencode/0.15.0", "OpenAI/Python 1.109.1" gives
// "OpenAI/Python"), else its X-App header (Claude Code's "cli"), else its
// Originator (Codex's); "" when none is sent. Only printable ASCII is
// kept, at most maxAgentLen bytes: a header is the client's to fill, and
// the name is shown to people.
func agentOf(h http.Header) string {
	for _, v := range []string{h.Get("User-Agent"), h.Get("X-App"), h.Get("Originator")} {
		if name := cleanAgent(v); name != "" {
			return name
		}
	}
	return ""
}

// cleanAgent returns the first product token of v, printable ASCII only
// and at most maxAgentLen bytes.
func cleanAgent(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, " \t("); i >= 0 {
		v = v[:i]
	}
	var b strings.Builder
	for i := 0; i < len(v) && b.Len() < maxAgentLen; i++ {
		if c := v[i]; c > ' ' && c < 0x7f {
			b.WriteByte(c)
		}
	}
	return b.String()
}
