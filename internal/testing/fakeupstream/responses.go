package fakeupstream

import (
	"net/http"
)

// responsesUsage is the Responses usage object.
// input_tokens counts the whole prompt, cached_tokens the part of it read
// from the cache.
func responsesUsage(u usage, out int) ordered {
	return ordered{
		{"input_tokens", u.Total},
		{"input_tokens_details", ordered{{"cached_tokens", u.Read}}},
		{"output_tokens", out},
		{"output_tokens_details", ordered{{"reasoning_tokens", 0}}},
		{"total_tokens", u.Total + out},
	}
}

// response is the Responses response object in a given state.
func (f *Fake) response(b *body, id, status string, output []ordered, usage, errObj any) ordered {
	if output == nil {
		output = []ordered{}
	}
	return ordered{
		{"id", "resp_fake" + id}, {"object", "response"}, {"created_at", f.cfg.Now().Unix()},
		{"status", status}, {"error", errObj}, {"incomplete_details", nil},
		{"model", b.model}, {"output", output},
		{"parallel_tool_calls", true}, {"store", false}, {"tool_choice", "auto"},
		{"usage", usage},
	}
}

// responses answers a Responses request, streamed or not. Every stream
// event carries its sequence_number, counted from 0.
func (f *Fake) responses(w http.ResponseWriter, b *body, a answer, in usage, id string) {
	out := outputTokens(a)
	var done ordered
	if a.tool != "" {
		done = ordered{{"id", "fc_fake" + id}, {"type", "function_call"}, {"status", "completed"},
			{"arguments", a.args}, {"call_id", "call_fake" + id}, {"name", a.tool}}
	} else {
		done = ordered{{"id", "msg_fake" + id}, {"type", "message"}, {"status", "completed"},
			{"content", []ordered{{{"type", "output_text"}, {"annotations", []any{}}, {"text", a.text}}}},
			{"role", "assistant"}}
	}
	w.Header().Set("X-Request-Id", "req_fake"+id)
	if !b.stream {
		writeJSON(w, http.StatusOK, f.response(b, id, "completed", []ordered{done}, responsesUsage(in, out), nil))
		return
	}
	s := startSSE(w)
	seq := 0
	emit := func(typ string, fields ...kv) {
		ev := append(ordered{{"type", typ}, {"sequence_number", seq}}, fields...)
		seq++
		s.event(typ, ev)
	}
	emit("response.created", kv{"response", f.response(b, id, "in_progress", nil, nil, nil)})
	emit("response.in_progress", kv{"response", f.response(b, id, "in_progress", nil, nil, nil)})
	if a.tool != "" {
		added := ordered{{"id", "fc_fake" + id}, {"type", "function_call"}, {"status", "in_progress"},
			{"arguments", ""}, {"call_id", "call_fake" + id}, {"name", a.tool}}
		emit("response.output_item.added", kv{"output_index", 0}, kv{"item", added})
		for _, part := range chunks(a.args, 24) {
			s.pause(a.pace)
			emit("response.function_call_arguments.delta", kv{"item_id", "fc_fake" + id}, kv{"output_index", 0}, kv{"delta", part})
		}
		emit("response.function_call_arguments.done", kv{"item_id", "fc_fake" + id}, kv{"output_index", 0}, kv{"arguments", a.args})
	} else {
		itemID := "msg_fake" + id
		added := ordered{{"id", itemID}, {"type", "message"}, {"status", "in_progress"}, {"content", []any{}}, {"role", "assistant"}}
		emit("response.output_item.added", kv{"output_index", 0}, kv{"item", added})
		emit("response.content_part.added", kv{"item_id", itemID}, kv{"output_index", 0}, kv{"content_index", 0},
			kv{"part", ordered{{"type", "output_text"}, {"annotations", []any{}}, {"text", ""}}})
		for _, part := range chunks(a.text, 24) {
			s.pause(a.pace)
			emit("response.output_text.delta", kv{"item_id", itemID}, kv{"output_index", 0}, kv{"content_index", 0},
				kv{"delta", part}, kv{"logprobs", []any{}})
		}
		emit("response.output_text.done", kv{"item_id", itemID}, kv{"output_index", 0}, kv{"content_index", 0},
			kv{"text", a.text}, kv{"logprobs", []any{}})
		emit("response.content_part.done", kv{"item_id", itemID}, kv{"output_index", 0}, kv{"content_index", 0},
			kv{"part", ordered{{"type", "output_text"}, {"annotations", []any{}}, {"text", a.text}}})
	}
	emit("response.output_item.done", kv{"output_index", 0}, kv{"item", done})
	emit("response.completed", kv{"response", f.response(b, id, "completed", []ordered{done}, responsesUsage(in, out), nil)})
}

// responsesFailed reports an overflow inside a 200 stream:
// response.created, then response.failed with code context_length_exceeded.
func (f *Fake) responsesFailed(w http.ResponseWriter, b *body, rec *Request) {
	id := f.nextID()
	w.Header().Set("X-Request-Id", "req_fake"+id)
	s := startSSE(w)
	s.event("response.created", ordered{{"type", "response.created"}, {"sequence_number", 0},
		{"response", f.response(b, id, "in_progress", nil, nil, nil)}})
	errObj := ordered{{"code", "context_length_exceeded"}, {"message", overflowMessage(Responses, rec.Tokens, f.cfg.Window)}}
	s.event("response.failed", ordered{{"type", "response.failed"}, {"sequence_number", 1},
		{"response", f.response(b, id, "failed", nil, nil, errObj)}})
}
