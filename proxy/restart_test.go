package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/proxy"
	"github.com/compactkit/compact/proxy/store/bolt"
)

// TestCompactionSurvivesRestart: a compaction stored in the file store is
// applied, with the same bytes, by a proxy started afterwards on the same
// file, and that proxy does not compact again.
func TestCompactionSurvivesRestart(t *testing.T) {
	fake, base := fakeupstream.Start(t, fakeupstream.Config{})
	path := filepath.Join(t.TempDir(), "state.db")
	start := func() (*proxy.Server, *httptest.Server) {
		st, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := proxy.New(proxy.Config{OpenAIUpstream: base, Window: 12000, Policy: compact.Reserve{Tokens: 3000},
			Summarizer: proxy.SummarizerExtractive, Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return srv, httptest.NewServer(srv)
	}
	var items []string
	items = append(items, `{"role":"user","content":"Show me the files."}`)
	send := func(url string, step int) {
		body := `{"model":"gpt-test","messages":[` + strings.Join(items, ",") + `],"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}]}`
		req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("X-Session-Id", "restart-1")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("step %d: %d %s", step, resp.StatusCode, b)
		}
		var out struct {
			Choices []struct {
				Message json.RawMessage `json:"message"`
			} `json:"choices"`
		}
		json.Unmarshal(b, &out)
		var m struct {
			ToolCalls []struct{ ID string } `json:"tool_calls"`
		}
		json.Unmarshal(out.Choices[0].Message, &m)
		items = append(items, string(out.Choices[0].Message))
		if len(m.ToolCalls) > 0 {
			q, _ := json.Marshal(fmt.Sprintf("STEP-%d\n%s", step, strings.Repeat("output line of the tool\n", 260)))
			items = append(items, `{"role":"tool","tool_call_id":"`+m.ToolCalls[0].ID+`","content":`+string(q)+`}`)
		}
	}
	srv1, ts1 := start()
	step := 1
	for ; step <= 8; step++ {
		send(ts1.URL, step)
	}
	if n := metricSum(t, srv1, "compact_proxy_compactions_total"); n == 0 {
		t.Fatal("the first proxy never compacted")
	}
	ts1.Close()
	srv1.Close()
	reqs := fake.Requests()
	last := reqs[len(reqs)-1].Body
	summaryBefore := summaryOf(t, last)
	if summaryBefore == nil {
		t.Fatal("no compaction before the restart")
	}
	srv2, ts2 := start()
	defer func() { ts2.Close(); srv2.Close() }()
	send(ts2.URL, step)
	reqs = fake.Requests()
	after := summaryOf(t, reqs[len(reqs)-1].Body)
	if n := metricSum(t, srv2, "compact_proxy_compactions_total"); n != 0 {
		t.Errorf("the restarted proxy compacted %v times; the stored compaction should have served", n)
	}
	if !bytes.Equal(after, summaryBefore) {
		t.Errorf("after the restart the summary bytes changed (or vanished):\n%.200s\n%.200s", summaryBefore, after)
	}
}

// summaryOf returns the summary element of a Chat body, nil when none.
func summaryOf(t *testing.T, body []byte) []byte {
	var doc struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, m := range doc.Messages {
		if bytes.Contains(m, []byte("condensed into the summary below")) {
			return m
		}
	}
	return nil
}
