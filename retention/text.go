package retention

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize/facts"
)

// ContextText is the text of a context that the measures look facts up
// in, normalized (facts.Normalize): every message's text (a summary, a
// user or assistant text, a tool result, a shell command with its
// output), and the name and string arguments of every tool call.
// Reasoning (thinking parts) and images are left out: a fact only there
// does not count as kept.
func ContextText(c *compact.Context) string {
	var b strings.Builder
	for _, m := range c.Messages {
		b.WriteString(m.Text())
		b.WriteByte('\n')
		for _, call := range m.ToolCalls() {
			b.WriteString(call.Name)
			b.WriteByte('\n')
			var args any
			if json.Unmarshal(call.Arguments, &args) == nil {
				writeStrings(&b, args)
			}
		}
	}
	return facts.Normalize(b.String())
}

// writeStrings writes the strings of a decoded JSON value, one a line.
func writeStrings(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		b.WriteString(v)
		b.WriteByte('\n')
	case []any:
		for _, x := range v {
			writeStrings(b, x)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the same text every time
		for _, k := range keys {
			writeStrings(b, v[k])
		}
	}
}
