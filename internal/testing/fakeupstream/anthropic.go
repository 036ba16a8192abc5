package fakeupstream

import (
	"encoding/json"
	"net/http"
	"time"
)

// anthropicUsage is the Messages usage object: input_tokens is the
// uncached part of the prompt, then the cache figures (cache_creation
// splits the writes by TTL, as the API does), then output_tokens.
func anthropicUsage(u usage, out int) ordered {
	return ordered{
		{"input_tokens", max(u.Total-u.Read-u.Write, 0)},
		{"cache_creation_input_tokens", u.Write},
		{"cache_read_input_tokens", u.Read},
		{"cache_creation", ordered{
			{"ephemeral_5m_input_tokens", u.Write - u.Write1h},
			{"ephemeral_1h_input_tokens", u.Write1h},
		}},
		{"output_tokens", out},
	}
}

// answerBlocks are the content blocks of an answer, complete: a
// thinking block first when the answer carries a signature, then the
// tool call or text; a compaction answer is its compaction block alone.
func answerBlocks(a answer, id string) []ordered {
	if a.compaction {
		return []ordered{{{"type", "compaction"}, {"content", a.text}, {"encrypted_content", a.blob}}}
	}
	var out []ordered
	if a.signature != "" {
		out = append(out, ordered{{"type", "thinking"}, {"thinking", a.thinking}, {"signature", a.signature}})
	}
	if a.tool != "" {
		out = append(out, ordered{{"type", "tool_use"}, {"id", "toolu_fake" + id}, {"name", a.tool}, {"input", json.RawMessage(a.args)}})
	} else {
		out = append(out, ordered{{"type", "text"}, {"text", a.text}})
	}
	return out
}

// anthropicStop is an answer's stop_reason.
func anthropicStop(a answer) string {
	switch {
	case a.compaction:
		return "compaction"
	case a.tool != "":
		return "tool_use"
	}
	return "end_turn"
}

// anthropic answers a Messages request, streamed or not. A stream sends
// each block as the API does: thinking as thinking_delta events then one
// signature_delta, a tool call as input_json_delta, text as text_delta, a
// compaction block as one compaction_delta with content and
// encrypted_content.
func (f *Fake) anthropic(w http.ResponseWriter, b *body, a answer, u usage, id string) {
	out := outputTokens(a)
	stop := anthropicStop(a)
	msgID := "msg_fake" + id
	w.Header().Set("Request-Id", "req_fake"+id)
	// The cache diagnostics, when asked for, follow the usage in the
	// message (the body, or message_start's message).
	var diag ordered
	if v, ok := f.diagnose(b, msgID); ok {
		diag = ordered{{"diagnostics", v}}
	}
	if !b.stream {
		writeJSON(w, http.StatusOK, append(ordered{
			{"id", msgID}, {"type", "message"}, {"role", "assistant"}, {"model", b.model},
			{"content", answerBlocks(a, id)},
			{"stop_reason", stop}, {"stop_sequence", nil},
			{"usage", anthropicUsage(u, out)},
		}, diag...))
		return
	}
	s := startSSE(w)
	s.event("message_start", ordered{{"type", "message_start"}, {"message", append(ordered{
		{"id", msgID}, {"type", "message"}, {"role", "assistant"}, {"model", b.model},
		{"content", []any{}}, {"stop_reason", nil}, {"stop_sequence", nil},
		{"usage", anthropicUsage(u, 1)},
	}, diag...)}})
	s.event("ping", ordered{{"type", "ping"}})
	index := 0
	block := func(start ordered, deltas ...ordered) {
		s.event("content_block_start", ordered{{"type", "content_block_start"}, {"index", index}, {"content_block", start}})
		for _, d := range deltas {
			s.pause(a.pace)
			s.event("content_block_delta", ordered{{"type", "content_block_delta"}, {"index", index}, {"delta", d}})
		}
		s.event("content_block_stop", ordered{{"type", "content_block_stop"}, {"index", index}})
		index++
	}
	switch {
	case a.compaction:
		block(ordered{{"type", "compaction"}, {"content", nil}, {"encrypted_content", nil}},
			ordered{{"type", "compaction_delta"}, {"content", a.text}, {"encrypted_content", a.blob}})
	default:
		if a.signature != "" {
			var ds []ordered
			if a.thinking != "" {
				for _, part := range chunks(a.thinking, 24) {
					ds = append(ds, ordered{{"type", "thinking_delta"}, {"thinking", part}})
				}
			}
			ds = append(ds, ordered{{"type", "signature_delta"}, {"signature", a.signature}})
			block(ordered{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}, ds...)
		}
		if a.tool != "" {
			var ds []ordered
			for _, part := range chunks(a.args, 24) {
				ds = append(ds, ordered{{"type", "input_json_delta"}, {"partial_json", part}})
			}
			block(ordered{{"type", "tool_use"}, {"id", "toolu_fake" + id}, {"name", a.tool}, {"input", ordered{}}}, ds...)
		} else {
			var ds []ordered
			for _, part := range chunks(a.text, 24) {
				ds = append(ds, ordered{{"type", "text_delta"}, {"text", part}})
			}
			block(ordered{{"type", "text"}, {"text", ""}}, ds...)
		}
	}
	s.event("message_delta", ordered{{"type", "message_delta"},
		{"delta", ordered{{"stop_reason", stop}, {"stop_sequence", nil}}},
		{"usage", anthropicUsage(u, out)}})
	s.event("message_stop", ordered{{"type", "message_stop"}})
}

// pause waits d between two events of a stream.
func (s *sse) pause(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}
