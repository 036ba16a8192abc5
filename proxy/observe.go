package proxy

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/openai"
)

// maxObservedBody bounds what a usage observer keeps: the whole of a
// non-streamed body, or one streamed event.
const maxObservedBody = 64 << 20

// usageObserver reads the usage numbers and the errors out of a copy of a
// response. For a stream it keeps only the event being received; for a
// plain body, the body (up to maxObservedBody), read when Observed is
// called.
type usageObserver struct {
	api    API
	stream bool
	buf    []byte // the current partial event, or the whole body
	over   bool   // buf outgrew maxObservedBody
	obs    Observed
	// scanned is where the search for the end of the event in buf
	// resumes: no event ends before it.
	scanned int
	// work counts the bytes of buf examined or moved, so that tests can
	// check that the work stays linear in the size of the stream.
	work int
}

func newUsageObserver(api API, stream bool) *usageObserver {
	return &usageObserver{api: api, stream: stream}
}

// Write takes the next bytes of the response.
func (o *usageObserver) Write(p []byte) (int, error) {
	if !o.stream {
		if !o.over {
			if len(o.buf)+len(p) > maxObservedBody {
				o.over, o.buf = true, nil
			} else {
				o.buf = append(o.buf, p...)
			}
		}
		return len(p), nil
	}
	o.buf = append(o.buf, p...)
	rest := o.buf
	from := o.scanned
	for {
		end, next := eventEnd(rest, from)
		if end < 0 {
			o.work += len(rest) - from
			// Resume at the first line end not yet decided: deciding
			// needs up to three bytes after it.
			from = max(from, len(rest))
			for i := max(0, len(rest)-3); i < len(rest); i++ {
				if rest[i] == '\r' || rest[i] == '\n' {
					from = i
					break
				}
			}
			break
		}
		o.work += next - from + end // the search, and event's reading
		o.event(rest[:end])
		rest, from = rest[next:], 0
	}
	if len(rest) < len(o.buf) {
		// Keep the partial event at the front, so that the buffer is
		// reused. A partial event is moved once, after the event before
		// it: it stays at the front until it is complete.
		o.work += len(rest)
		o.buf = append(o.buf[:0], rest...)
	}
	o.scanned = from
	if len(o.buf) > maxObservedBody {
		o.buf, o.scanned = nil, 0 // an event this large is not one we read
	}
	if len(o.buf) == 0 && cap(o.buf) > 1<<20 {
		o.buf = nil
	}
	return len(p), nil
}

// eventEnd finds the end of the first complete SSE event in b, searching
// from index from (no event ends before it): the index where its blank
// line starts and the index after it; -1 when b holds no complete event
// yet. Lines may end in \n, \r\n or \r.
func eventEnd(b []byte, from int) (end, next int) {
	for i := from; i < len(b); i++ {
		k := bytes.IndexAny(b[i:], "\r\n")
		if k < 0 {
			return -1, 0
		}
		i += k
		// A line ends at i; is the next line empty?
		j := i + 1
		if b[i] == '\r' && j < len(b) && b[j] == '\n' {
			j++
		}
		if j < len(b) && (b[j] == '\n' || b[j] == '\r') {
			k := j + 1
			if b[j] == '\r' {
				if k >= len(b) {
					return -1, 0 // a lone \r might still be followed by \n
				}
				if b[k] == '\n' {
					k++
				}
			}
			return i, k
		}
		if b[i] == '\r' && j >= len(b) {
			return -1, 0
		}
	}
	return -1, 0
}

// event reads one complete SSE event.
func (o *usageObserver) event(ev []byte) {
	var name string
	var data []byte
	multi := false // data is a copy (several data lines)
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexAny(ev, "\r\n"); i >= 0 {
			// After \r\n the \n makes an empty line, which is skipped.
			line, ev = ev[:i], ev[i+1:]
		} else {
			ev = nil
		}
		switch {
		case bytes.HasPrefix(line, []byte("event:")):
			name = string(bytes.TrimSpace(line[6:]))
		case bytes.HasPrefix(line, []byte("data:")):
			d := line[5:]
			if len(d) > 0 && d[0] == ' ' {
				d = d[1:]
			}
			switch {
			case data == nil:
				data = d // most events have one data line: no copy
			case multi:
				data = append(append(data, '\n'), d...)
			default:
				data = append(append(append([]byte(nil), data...), '\n'), d...)
				multi = true
			}
		}
	}
	if data == nil {
		return
	}
	if bytes.Equal(data, []byte("[DONE]")) {
		o.obs.Complete = true
		return
	}
	o.data(name, data)
}

// interesting reports whether a streamed event's data can carry usage, an
// error or the end: the others (deltas, mostly) are not decoded.
func interesting(data []byte) bool {
	for _, k := range [][]byte{[]byte(`"usage"`), []byte(`error`), []byte(`_stop"`), []byte(`response.completed`), []byte(`response.failed`), []byte(`response.incomplete`)} {
		if bytes.Contains(data, k) {
			return true
		}
	}
	return false
}

// data reads one streamed event's JSON.
func (o *usageObserver) data(name string, data []byte) {
	if !interesting(data) {
		return
	}
	var ev struct {
		Type    string `json:"type"`
		Message *struct {
			Usage       *anthropic.Usage      `json:"usage"`
			Diagnostics *anthropicDiagnostics `json:"diagnostics"`
		} `json:"message"`
		Usage    json.RawMessage `json:"usage"`
		Error    json.RawMessage `json:"error"`
		Response *struct {
			Usage      *openai.ResponsesUsage `json:"usage"`
			Error      json.RawMessage        `json:"error"`
			Incomplete json.RawMessage        `json:"incomplete_details"`
			Status     string                 `json:"status"`
		} `json:"response"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Type == "" {
		ev.Type = name
	}
	switch o.api {
	case Anthropic:
		switch ev.Type {
		case "message_start":
			if ev.Message != nil && ev.Message.Usage != nil {
				o.obs.Usage = anthropicUsage(*ev.Message.Usage, nil)
			}
			if ev.Message != nil {
				o.obs.Diagnostics = ev.Message.Diagnostics.observed()
			}
		case "message_delta":
			var u anthropic.Usage
			if len(ev.Usage) > 0 && json.Unmarshal(ev.Usage, &u) == nil {
				o.obs.Usage = anthropicUsage(u, o.obs.Usage)
			}
		case "message_stop":
			o.obs.Complete = true
		case "error":
			o.fail(data)
		}
	case Chat:
		if len(ev.Usage) > 0 && !bytes.Equal(ev.Usage, []byte("null")) {
			var u openai.ChatUsage
			if json.Unmarshal(ev.Usage, &u) == nil {
				o.obs.Usage = openaiUsage(u)
			}
		}
		if len(ev.Error) > 0 && !bytes.Equal(ev.Error, []byte("null")) {
			o.fail(data)
		}
	case Responses:
		switch ev.Type {
		case "response.completed":
			o.obs.Complete = true
			if ev.Response != nil && ev.Response.Usage != nil {
				o.obs.Usage = openaiUsage(ev.Response.Usage)
			}
		case "response.failed", "response.incomplete":
			o.obs.Complete = true
			if ev.Response != nil {
				if ev.Response.Usage != nil {
					o.obs.Usage = openaiUsage(ev.Response.Usage)
				}
				// Only the error itself: the response also echoes the
				// model's output, which may quote any error text.
				if len(ev.Response.Error) > 0 && !bytes.Equal(ev.Response.Error, []byte("null")) {
					o.fail(ev.Response.Error)
				} else if len(ev.Response.Incomplete) > 0 {
					o.fail(ev.Response.Incomplete)
				}
			}
		case "error":
			o.fail(data)
		}
	}
}

// fail records an error reported inside a successful response.
func (o *usageObserver) fail(data []byte) {
	o.obs.ErrorBody = string(data)
	provider := "openai"
	if o.api == Anthropic {
		provider = "anthropic"
	}
	if compact.IsContextOverflow(&compact.ProviderError{Provider: provider, Body: string(data)}) {
		o.obs.Overflow = true
	}
}

// Observed returns what was read.
func (o *usageObserver) Observed() Observed {
	if o.stream {
		if len(o.buf) > 0 {
			// A last event without its blank line (a stream cut short).
			o.event(o.buf)
			o.buf = nil
		}
		return o.obs
	}
	if o.over || len(o.buf) == 0 {
		return o.obs
	}
	body := o.buf
	o.buf = nil
	var doc struct {
		Usage       json.RawMessage       `json:"usage"`
		Error       json.RawMessage       `json:"error"`
		Status      string                `json:"status"`
		Diagnostics *anthropicDiagnostics `json:"diagnostics"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return o.obs
	}
	o.obs.Complete = true
	if len(doc.Usage) > 0 && !bytes.Equal(doc.Usage, []byte("null")) {
		switch o.api {
		case Anthropic:
			var u anthropic.Usage
			if json.Unmarshal(doc.Usage, &u) == nil {
				o.obs.Usage = anthropicUsage(u, nil)
			}
			o.obs.Diagnostics = doc.Diagnostics.observed()
		case Chat:
			var u openai.ChatUsage
			if json.Unmarshal(doc.Usage, &u) == nil {
				o.obs.Usage = openaiUsage(u)
			}
		case Responses:
			var u openai.ResponsesUsage
			if json.Unmarshal(doc.Usage, &u) == nil {
				o.obs.Usage = openaiUsage(u)
			}
		}
	}
	if len(doc.Error) > 0 && !bytes.Equal(doc.Error, []byte("null")) {
		o.fail(doc.Error)
	}
	return o.obs
}

// plausible returns o without its usage when the usage is impossible for
// the request's model (see compact.PlausibleUsage), and logs that: a
// broken or hostile upstream's numbers must not drive the conversation's
// accounting and force a compaction. A request that was not read is held
// to the largest window the proxy knows.
func (s *Server) plausible(x *exchange, o Observed) Observed {
	if o.Usage == nil {
		return o
	}
	var info compact.ModelInfo
	if x.v != nil {
		info = x.v.info
	} else {
		info.ContextWindow = s.cfg.Window
		if info.ContextWindow == 0 {
			for _, m := range s.registry.Models() {
				info.ContextWindow = max(info.ContextWindow, m.ContextWindow)
			}
		}
	}
	if compact.PlausibleUsage(*o.Usage, info) {
		return o
	}
	u := *o.Usage
	args := []any{"api", x.api, "input", u.Input, "cache_read", u.CacheRead, "cache_write", u.CacheWrite, "output", u.Output,
		"window", info.ContextWindow, "input_limit", info.InputLimit}
	if x.v != nil {
		args = append(args, "conversation", x.v.id.short, "model", x.v.p.Model)
	} else if x.light.key != "" {
		args = append(args, "conversation", x.light.short)
	}
	s.log.Warn("upstream reported usage impossible for the model; ignored", args...)
	o.Usage = nil
	return o
}

// anthropicUsage applies a Messages API usage object over prev (nil for
// none), as a stream's cumulative counts are (anthropic.Usage.Over).
func anthropicUsage(u anthropic.Usage, prev *compact.Usage) *compact.Usage {
	var out compact.Usage
	if prev != nil {
		out = *prev
	}
	out = u.Over(out)
	return &out
}

// openaiUsage maps an OpenAI usage object (openai.ChatUsage or
// openai.ResponsesUsage) onto a usage to observe.
func openaiUsage(u interface{ Usage() compact.Usage }) *compact.Usage {
	out := u.Usage()
	return &out
}
