package fakeupstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fixedNow keeps created fields stable.
func fixedNow() time.Time { return time.Unix(1767225600, 0) }

// post sends body to url+path and returns the status and the whole body.
func post(t *testing.T, url, path, body string) (int, []byte) {
	t.Helper()
	return postWith(t, url, path, body)
}

// postWith is post with headers (name, value pairs).
func postWith(t *testing.T, url, path, body string, headers ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// isAnthropicError reports whether out is an Anthropic error body of
// type invalid_request_error.
func isAnthropicError(t *testing.T, out []byte) bool {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	decode(t, string(out), &e)
	return e.Type == "error" && e.Error.Type == "invalid_request_error"
}

// postOK is post for a request that must succeed: a status other than
// 200 fails the test, naming the status and the body.
func postOK(t *testing.T, url, path, body string) []byte {
	t.Helper()
	status, out := post(t, url, path, body)
	if status != http.StatusOK {
		t.Fatalf("POST %s: status %d: %s", path, status, out)
	}
	return out
}

// event is one SSE event: its name ("" when the stream sends data lines
// only) and its data.
type event struct {
	name string
	data string
}

// parseSSE splits a stream into events and fails on a malformed frame.
func parseSSE(t *testing.T, raw []byte) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data == "" {
				t.Fatalf("event %q without data", cur.name)
			}
			out = append(out, cur)
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if cur.name != "" || cur.data != "" {
		t.Fatalf("stream ends inside an event: %+v", cur)
	}
	return out
}

// decode unmarshals s into v, failing the test on error.
func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
}

// Tool definitions as the agents send them.
const (
	anthropicBashTool = `{"name":"Bash","description":"run","input_schema":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command"]}}`
	chatBashTool      = `{"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"},"timeout":{"type":"number"}},"required":["command","description"]}}}`
	codexExecTool     = `{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"}},"required":["cmd"]}}`
)
