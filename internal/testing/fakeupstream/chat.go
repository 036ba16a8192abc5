package fakeupstream

import (
	"net/http"
)

// chatUsage is the Chat Completions usage object.
// prompt_tokens counts the whole prompt, cached_tokens the part of it
// read from the cache.
func chatUsage(u usage, out int) ordered {
	return ordered{
		{"prompt_tokens", u.Total},
		{"completion_tokens", out},
		{"total_tokens", u.Total + out},
		{"prompt_tokens_details", ordered{{"cached_tokens", u.Read}}},
	}
}

// chat answers a Chat Completions request, streamed or not. A stream
// carries "usage": null in every chunk and a final usage chunk with empty
// choices only when stream_options.include_usage is true, as OpenAI does.
func (f *Fake) chat(w http.ResponseWriter, b *body, a answer, in usage, id string) {
	out := outputTokens(a)
	created := f.cfg.Now().Unix()
	cmplID := "chatcmpl-fake" + id
	callID := "call_fake" + id
	finish := "stop"
	if a.tool != "" {
		finish = "tool_calls"
	}
	w.Header().Set("X-Request-Id", "req_fake"+id)
	if !b.stream {
		msg := ordered{{"role", "assistant"}}
		if a.tool != "" {
			msg = append(msg, kv{"content", nil}, kv{"tool_calls", []ordered{{
				{"id", callID}, {"type", "function"},
				{"function", ordered{{"name", a.tool}, {"arguments", a.args}}},
			}}})
		} else {
			msg = append(msg, kv{"content", a.text})
		}
		msg = append(msg, kv{"refusal", nil})
		writeJSON(w, http.StatusOK, ordered{
			{"id", cmplID}, {"object", "chat.completion"}, {"created", created}, {"model", b.model},
			{"choices", []ordered{{{"index", 0}, {"message", msg}, {"logprobs", nil}, {"finish_reason", finish}}}},
			{"usage", chatUsage(in, out)},
			{"system_fingerprint", "fp_fake"},
		})
		return
	}
	s := startSSE(w)
	chunk := func(delta ordered, finish any) ordered {
		c := ordered{
			{"id", cmplID}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", b.model},
			{"system_fingerprint", "fp_fake"},
			{"choices", []ordered{{{"index", 0}, {"delta", delta}, {"logprobs", nil}, {"finish_reason", finish}}}},
		}
		if b.includeUsage {
			c = append(c, kv{"usage", nil})
		}
		return c
	}
	if a.tool != "" {
		s.event("", chunk(ordered{{"role", "assistant"}, {"content", nil}}, nil))
		s.event("", chunk(ordered{{"tool_calls", []ordered{{
			{"index", 0}, {"id", callID}, {"type", "function"},
			{"function", ordered{{"name", a.tool}, {"arguments", ""}}},
		}}}}, nil))
		for _, part := range chunks(a.args, 24) {
			s.pause(a.pace)
			s.event("", chunk(ordered{{"tool_calls", []ordered{{
				{"index", 0}, {"function", ordered{{"arguments", part}}},
			}}}}, nil))
		}
	} else {
		s.event("", chunk(ordered{{"role", "assistant"}, {"content", ""}, {"refusal", nil}}, nil))
		for _, part := range chunks(a.text, 24) {
			s.pause(a.pace)
			s.event("", chunk(ordered{{"content", part}}, nil))
		}
	}
	s.event("", chunk(ordered{}, finish))
	if b.includeUsage {
		s.event("", ordered{
			{"id", cmplID}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", b.model},
			{"system_fingerprint", "fp_fake"},
			{"choices", []any{}},
			{"usage", chatUsage(in, out)},
		})
	}
	s.raw([]byte("data: [DONE]\n\n"))
}
