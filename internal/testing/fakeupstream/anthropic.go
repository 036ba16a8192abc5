package fakeupstream

import (
	"encoding/json"
	"net/http"
)

// anthropicUsage is the Messages usage object: the fake never caches, so
// both cache fields are 0.
func anthropicUsage(in, out int) ordered {
	return ordered{
		{"input_tokens", in},
		{"cache_creation_input_tokens", 0},
		{"cache_read_input_tokens", 0},
		{"output_tokens", out},
	}
}

// anthropic answers a Messages request, streamed or not.
func (f *Fake) anthropic(w http.ResponseWriter, b *body, a answer, in int, id string) {
	out := outputTokens(a)
	stop := "end_turn"
	var block ordered
	if a.tool != "" {
		stop = "tool_use"
		block = ordered{{"type", "tool_use"}, {"id", "toolu_fake" + id}, {"name", a.tool}, {"input", json.RawMessage(a.args)}}
	} else {
		block = ordered{{"type", "text"}, {"text", a.text}}
	}
	msgID := "msg_fake" + id
	if !b.stream {
		w.Header().Set("Request-Id", "req_fake"+id)
		writeJSON(w, http.StatusOK, ordered{
			{"id", msgID}, {"type", "message"}, {"role", "assistant"}, {"model", b.model},
			{"content", []ordered{block}},
			{"stop_reason", stop}, {"stop_sequence", nil},
			{"usage", anthropicUsage(in, out)},
		})
		return
	}
	w.Header().Set("Request-Id", "req_fake"+id)
	s := startSSE(w)
	s.event("message_start", ordered{{"type", "message_start"}, {"message", ordered{
		{"id", msgID}, {"type", "message"}, {"role", "assistant"}, {"model", b.model},
		{"content", []any{}}, {"stop_reason", nil}, {"stop_sequence", nil},
		{"usage", anthropicUsage(in, 1)},
	}}})
	s.event("ping", ordered{{"type", "ping"}})
	if a.tool != "" {
		start := ordered{{"type", "tool_use"}, {"id", "toolu_fake" + id}, {"name", a.tool}, {"input", ordered{}}}
		s.event("content_block_start", ordered{{"type", "content_block_start"}, {"index", 0}, {"content_block", start}})
		for _, part := range chunks(a.args, 24) {
			s.event("content_block_delta", ordered{{"type", "content_block_delta"}, {"index", 0},
				{"delta", ordered{{"type", "input_json_delta"}, {"partial_json", part}}}})
		}
	} else {
		s.event("content_block_start", ordered{{"type", "content_block_start"}, {"index", 0},
			{"content_block", ordered{{"type", "text"}, {"text", ""}}}})
		for _, part := range chunks(a.text, 24) {
			s.event("content_block_delta", ordered{{"type", "content_block_delta"}, {"index", 0},
				{"delta", ordered{{"type", "text_delta"}, {"text", part}}}})
		}
	}
	s.event("content_block_stop", ordered{{"type", "content_block_stop"}, {"index", 0}})
	s.event("message_delta", ordered{{"type", "message_delta"},
		{"delta", ordered{{"stop_reason", stop}, {"stop_sequence", nil}}},
		{"usage", anthropicUsage(in, out)}})
	s.event("message_stop", ordered{{"type", "message_stop"}})
}
