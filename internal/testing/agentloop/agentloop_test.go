package agentloop

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// TestLoopAgainstTheFake: the agent runs the fake model's whole script on
// every API, streamed and not, with thinking on for Anthropic; the fake
// accepts every request (tool pairing, signed thinking sent back
// unchanged), and the cache marks make most of each request a cache read.
func TestLoopAgainstTheFake(t *testing.T) {
	for _, tc := range []struct {
		api      API
		thinking string
	}{{Anthropic, "adaptive"}, {Anthropic, "enabled"}, {Chat, ""}, {Responses, ""}} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%s/stream=%v", tc.api, tc.thinking, stream), func(t *testing.T) {
				fake := fakeupstream.New(fakeupstream.Config{Steps: 12, OutputLines: 400})
				srv := httptest.NewServer(fake)
				defer srv.Close()
				res, err := Run(context.Background(), Options{API: tc.api, BaseURL: srv.URL, Stream: stream, Thinking: tc.thinking, Turns: 20})
				if err != nil {
					t.Fatal(err)
				}
				if res.Final != "DONE after 12 steps" || len(res.Turns) != 13 {
					t.Fatalf("final %q after %d turns", res.Final, len(res.Turns))
				}
				for _, r := range fake.Requests() {
					for _, p := range fake.Check(r) {
						t.Error(p)
					}
				}
				if tc.thinking != "" {
					verified := 0
					for _, r := range fake.Requests() {
						verified += r.ThinkingVerified
					}
					if verified == 0 {
						t.Error("no thinking block came back to the model")
					}
				}
				t.Logf("cache read share %.2f", fake.Cache().ReadShare())
				if share := fake.Cache().ReadShare(); share < 0.5 {
					t.Errorf("cache read share %.2f, want most of the input read from the cache", share)
				}
			})
		}
	}
}

// TestChatMessage: a streamed Chat answer's chunks make one message (text,
// or tool calls put together by index); a stream cut before [DONE] is
// ErrTruncated.
func TestChatMessage(t *testing.T) {
	stream := "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"comm\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"and\\\":\\\"ls\\\"}\"}}]}}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5}}\n\n"
	if _, err := ChatMessage([]byte(stream)); !errors.Is(err, ErrTruncated) {
		t.Fatalf("a stream without [DONE]: %v, want ErrTruncated", err)
	}
	msg, err := ChatMessage([]byte(stream + "data: [DONE]\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"command\":\"ls\"}","name":"bash"},"id":"c1","type":"function"}]}`
	if string(msg) != want {
		t.Errorf("message %s, want %s", msg, want)
	}
}
