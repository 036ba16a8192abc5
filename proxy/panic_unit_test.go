package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/compactkit/compact"
)

// TestPanicAnswered: once the answer has started
// nothing can be sent instead; a panic then ends the connection quietly
// (http.ErrAbortHandler), and nothing else is written.
func TestPanicAnswered(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write bool
		want  int
	}{
		{"nothing written", false, http.StatusBadGateway},
		{"answer started", true, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			aw := &answerWriter{ResponseWriter: rec}
			r := httptest.NewRequest("POST", "/v1/messages", nil)
			r.Header.Set("X-Api-Key", "sk-ant-canary-0123456789")
			aborted := func() (aborted bool) {
				defer func() { aborted = recover() == http.ErrAbortHandler }()
				defer s.recoverRequest(aw, r, Anthropic)
				if tc.write {
					aw.WriteHeader(http.StatusOK)
				}
				panic(canaryPanic)
			}()
			if aborted != tc.write {
				t.Errorf("connection cut = %v, want %v", aborted, tc.write)
			}
			if rec.Code != tc.want {
				t.Errorf("status %d, want %d", rec.Code, tc.want)
			}
			if strings.Contains(rec.Body.String(), "canary") {
				t.Errorf("answer quotes the credential: %s", rec.Body)
			}
		})
	}
}

// TestObserverPanicKeepsRelay: an observer that panics on a response costs
// its usage, never the answer: the client gets every byte.
func TestObserverPanicKeepsRelay(t *testing.T) {
	for _, at := range []string{"write", "observed"} {
		t.Run(at, func(t *testing.T) {
			s, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			body := strings.Repeat("data: {}\n\n", 5000)
			resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
			obs := &safeObserver{obs: panickyObserver{at: at}, s: s}
			rec := httptest.NewRecorder()
			if _, err := relay(&answerWriter{ResponseWriter: rec}, resp, obs, nil); err != nil {
				t.Fatal(err)
			}
			if rec.Body.String() != body {
				t.Errorf("client got %d of %d bytes", rec.Body.Len(), len(body))
			}
			if o := obs.Observed(); o.Usage != nil || o.Complete {
				t.Errorf("observed %+v from a failed observer", o)
			}
			if n := testutil.ToFloat64(s.metrics.failOpenTotal.WithLabelValues(stageObserve)); n != 1 {
				t.Errorf(`fail_open_total{stage="observe"} = %v, want 1`, n)
			}
		})
	}
}

// panickyObserver panics in Write or in Observed.
type panickyObserver struct{ at string }

func (p panickyObserver) Write(b []byte) (int, error) {
	if p.at == "write" {
		panic(canaryPanic)
	}
	return len(b), nil
}

func (p panickyObserver) Observed() Observed {
	if p.at == "observed" {
		panic(canaryPanic)
	}
	return Observed{Usage: &compact.Usage{Input: 1}, Complete: true}
}
