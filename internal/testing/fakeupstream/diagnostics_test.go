package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// The fake answers Anthropic's cache diagnostics as the API does: no
// field without the opt-in, null on the first turn and when the prompt
// only grew, the first divergence in render order with the previous
// prompt's tokens from there on, previous_message_not_found for an id it
// does not know; in the body and in message_start alike.
func TestCacheDiagnostics(t *testing.T) {
	srv := httptest.NewServer(New(Config{Now: fixedNow}))
	t.Cleanup(srv.Close)
	msgs := []string{`{"role":"user","content":"first question"}`, `{"role":"assistant","content":"an answer"}`}
	body := func(model, system, tools string, msgs []string, diag string, stream bool) string {
		b := fmt.Sprintf(`{"model":%q,"max_tokens":100,"system":%q,"tools":[%s],"messages":[%s],"stream":%v`,
			model, system, tools, strings.Join(msgs, ","), stream)
		if diag != "" {
			b += `,"diagnostics":` + diag
		}
		return b + "}"
	}
	type message struct {
		ID          string          `json:"id"`
		Diagnostics json.RawMessage `json:"diagnostics"`
	}
	send := func(b string, stream bool) message {
		t.Helper()
		out := postOK(t, srv.URL, "/v1/messages", b)
		var m message
		if !stream {
			decode(t, string(out), &m)
			if !strings.Contains(string(out), `"diagnostics"`) {
				m.Diagnostics = nil
			}
			return m
		}
		for _, ev := range parseSSE(t, out) {
			if ev.name == "message_start" {
				var start struct {
					Message message `json:"message"`
				}
				decode(t, ev.data, &start)
				if !strings.Contains(ev.data, `"diagnostics"`) {
					start.Message.Diagnostics = nil
				}
				return start.Message
			}
		}
		t.Fatal("no message_start")
		return message{}
	}
	for _, stream := range []bool{false, true} {
		first := send(body("m", "sys", anthropicBashTool, msgs[:1], `{"previous_message_id":null}`, stream), stream)
		if string(first.Diagnostics) != "null" {
			t.Fatalf("first turn: diagnostics %s, want null", first.Diagnostics)
		}
		grown := body("m", "sys", anthropicBashTool, append(msgs, `{"role":"user","content":"next"}`), `{"previous_message_id":"`+first.ID+`"}`, stream)
		cases := []struct {
			name, body, want string
		}{
			{"no opt-in", body("m", "sys", anthropicBashTool, msgs, "", stream), ""},
			{"grown", grown, "null"},
			{"unknown id", body("m", "sys", anthropicBashTool, msgs, `{"previous_message_id":"msg_nope"}`, stream),
				`{"cache_miss_reason":{"type":"previous_message_not_found"}}`},
			{"model", body("m2", "sys", anthropicBashTool, msgs, `{"previous_message_id":"`+first.ID+`"}`, stream), "model_changed"},
			{"tools", body("m", "sys2", "", msgs, `{"previous_message_id":"`+first.ID+`"}`, stream), "tools_changed"},
			{"system", body("m", "sys2", anthropicBashTool, msgs, `{"previous_message_id":"`+first.ID+`"}`, stream), "system_changed"},
			{"messages", body("m", "sys", anthropicBashTool, []string{`{"role":"user","content":"another question"}`}, `{"previous_message_id":"`+first.ID+`"}`, stream), "messages_changed"},
		}
		for _, tc := range cases {
			got := send(tc.body, stream).Diagnostics
			switch tc.want {
			case "", "null":
				if string(got) != tc.want {
					t.Errorf("stream=%v %s: diagnostics %s, want %q", stream, tc.name, got, tc.want)
				}
				continue
			}
			if strings.HasPrefix(tc.want, "{") {
				if string(got) != tc.want {
					t.Errorf("stream=%v %s: diagnostics %s, want %s", stream, tc.name, got, tc.want)
				}
				continue
			}
			var d struct {
				Reason struct {
					Type   string `json:"type"`
					Missed int    `json:"cache_missed_input_tokens"`
				} `json:"cache_miss_reason"`
			}
			decode(t, string(got), &d)
			if d.Reason.Type != tc.want || d.Reason.Missed <= 0 {
				t.Errorf("stream=%v %s: diagnostics %s, want %s with the missed tokens", stream, tc.name, got, tc.want)
			}
		}
	}
}

// ForgetCache empties the prompt cache: the same prompt is written again.
func TestForgetCache(t *testing.T) {
	f := New(Config{Now: fixedNow, CacheMinTokens: 1})
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	b := `{"model":"m","max_tokens":10,"system":[{"type":"text","text":"` + strings.Repeat("sys ", 50) + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}]}`
	postOK(t, srv.URL, "/v1/messages", b)
	postOK(t, srv.URL, "/v1/messages", b)
	f.ForgetCache()
	postOK(t, srv.URL, "/v1/messages", b)
	reqs := f.Requests()
	if reqs[1].CacheRead == 0 || reqs[2].CacheRead != 0 || reqs[2].CacheWrite == 0 {
		t.Errorf("reads %d, %d after forgetting: want a hit, then a write", reqs[1].CacheRead, reqs[2].CacheRead)
	}
}
