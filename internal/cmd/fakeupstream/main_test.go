package main

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// TestStats: /fake/stats sums what the fake billed as the answers'
// usage reported it, prices the calls of a model in the registry at its
// list prices and counts the others as unpriced.
func TestStats(t *testing.T) {
	registry, err := compact.LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeupstream.New(fakeupstream.Config{})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	type usage struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
	}
	var sum usage
	want := 0.0
	for _, model := range []string{"claude-sonnet-4-5", "claude-sonnet-4-5", "no-such-model"} {
		body := `{"model":"` + model + `","max_tokens":100,"messages":[{"role":"user","content":"a title"}]}`
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m struct{ Usage usage }
		if err := json.Unmarshal(raw, &m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("HTTP %d: %s", resp.StatusCode, raw)
		}
		sum.Input += m.Usage.Input
		sum.Output += m.Usage.Output
		if info, ok := registry.Lookup(model); ok {
			c, _ := info.Cost(compact.Usage{Input: m.Usage.Input, Output: m.Usage.Output})
			want += c.Total()
		}
	}
	s := statsOf(fake, registry)
	got := s.Requests
	if got.Calls != 3 || got.Input != sum.Input || got.Output != sum.Output || got.CacheRead != 0 || got.Unpriced != 1 {
		t.Errorf("requests billed %+v; want 3 calls, input %d, output %d, no cache read, 1 unpriced", got, sum.Input, sum.Output)
	}
	if want == 0 || math.Abs(got.CostUSD-want) > 1e-12 {
		t.Errorf("cost %v, want %v", got.CostUSD, want)
	}
	if s.Summaries.Calls != 0 || len(s.Problems) != 0 {
		t.Errorf("summaries %+v, problems %q; want none", s.Summaries, s.Problems)
	}
}
