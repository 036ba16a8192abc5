package fakeupstream

import (
	"encoding/json"
	"net/http"
)

// sse writes a Server-Sent Events stream, flushing after every event.
type sse struct {
	w http.ResponseWriter
}

// startSSE sends the stream's headers with status 200.
func startSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

// event writes "event: name" and "data: <json of v>" (the Anthropic and
// Responses framing); an empty name writes the data line alone (the Chat
// framing).
func (s *sse) event(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	var buf []byte
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, '\n', '\n')
	s.raw(buf)
}

// raw writes bytes as they are and flushes.
func (s *sse) raw(b []byte) {
	_, _ = s.w.Write(b)
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// chunks splits s into pieces of at most n bytes, as providers stream
// text and arguments in small deltas. The scripted texts are ASCII, so no
// rune is split.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

// outputTokens counts an answer's tokens for usage, at least 1.
func outputTokens(a answer) int {
	n := CountTokens([]byte(a.text + a.tool + a.args))
	if n == 0 {
		n = 1
	}
	return n
}
