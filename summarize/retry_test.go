package summarize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compactkit/compact"
)

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func status(code int) error {
	return &compact.ProviderError{Provider: "fake", StatusCode: code, Body: fmt.Sprintf(`{"error":"status %d"}`, code)}
}

var connReset = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}

func TestRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"429", status(429), true},
		{"500", status(500), true},
		{"503 wrapped", fmt.Errorf("call: %w", status(503)), true},
		{"529 overloaded", status(529), true},
		{"408", status(408), true},
		{"400", status(400), false},
		{"401", status(401), false},
		{"413 overflow", status(413), false},
		{"overflow body", &compact.ProviderError{StatusCode: 400, Body: "maximum context length exceeded"}, false},
		{"net timeout", fmt.Errorf("post: %w", timeoutErr{}), true},
		{"inner deadline", fmt.Errorf("post: %w", context.DeadlineExceeded), true},
		{"canceled", fmt.Errorf("post: %w", context.Canceled), false},
		{"ECONNRESET", connReset, true},
		{"EPIPE", os.NewSyscallError("write", syscall.EPIPE), true},
		{"unexpected EOF", fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), true},
		{"EOF", fmt.Errorf(`Post "https://x": %w`, io.EOF), true},
		{"reset by text", errors.New("read tcp 1.2.3.4:443: connection reset by peer"), true},
		{"other", errors.New("bad api key"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Retryable(tt.err); got != tt.want {
				t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	const j = 1.125 // jitter at Rand() = 0.5: 1 + 0.25 × 0.5
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	ok := &Response{Text: handover("done", ""), Usage: compact.Usage{Input: 7}}
	tests := []struct {
		name      string
		errs      []error // the first tries fail with these, the next succeeds
		maxTries  int
		wantSleep []time.Duration
		wantTries int
		wantErr   string // "" for success
		is        error
	}{
		{"429 with Retry-After", []error{&compact.ProviderError{Provider: "fake", StatusCode: 429, RetryAfter: 7 * time.Second}},
			0, []time.Duration{7 * time.Second}, 2, "", nil},
		{"500s then success", []error{status(500), status(502), status(500)},
			0, []time.Duration{sec(1 * j), sec(2 * j), sec(4 * j)}, 4, "", nil},
		{"five tries at most", []error{status(503), status(503), status(503), status(503), status(503), status(503)},
			0, []time.Duration{sec(1 * j), sec(2 * j), sec(4 * j), sec(8 * j)}, 5, "gave up after 5 tries", nil},
		{"six tries reach 16 s", []error{status(503), status(503), status(503), status(503), status(503), status(503)},
			6, []time.Duration{sec(1 * j), sec(2 * j), sec(4 * j), sec(8 * j), sec(16 * j)}, 6, "gave up after 6 tries", nil},
		{"connection reset", []error{connReset}, 0, []time.Duration{sec(j)}, 2, "", nil},
		{"timeout", []error{timeoutErr{}, fmt.Errorf("request: %w", context.DeadlineExceeded)}, 0,
			[]time.Duration{sec(j), sec(2 * j)}, 3, "", nil},
		{"client error not retried", []error{status(400)}, 0, nil, 1, "HTTP 400", nil},
		{"inner cancel not retried", []error{fmt.Errorf("x: %w", context.Canceled)}, 0, nil, 1, "canceled", context.Canceled},
		{"Retry-After too long", []error{&compact.ProviderError{Provider: "fake", StatusCode: 429, RetryAfter: time.Hour}},
			0, nil, 1, "asked to wait 1h0m0s", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{respond: func(n int, req *Request) (*Response, error) {
				if n <= len(tt.errs) {
					return nil, tt.errs[n-1]
				}
				return ok, nil
			}}
			s, clk := newTest(t, f, model200k, func(o *Options) { o.MaxTries = tt.maxTries })
			sum, err := s.Summarize(context.Background(), &compact.SummaryRequest{Messages: []*compact.Message{user("hi")}})
			if got := len(f.requests()); got != tt.wantTries {
				t.Errorf("%d tries, want %d", got, tt.wantTries)
			}
			if got := clk.recorded(); fmt.Sprint(got) != fmt.Sprint(tt.wantSleep) {
				t.Errorf("sleeps %v, want %v", got, tt.wantSleep)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if sum.Text != ok.Text || sum.Usage.Input != 7 {
					t.Errorf("summary %+v", sum)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err %v is not %v", err, tt.is)
			}
			var pe *compact.ProviderError
			if errors.As(tt.errs[0], &pe) && !errors.As(err, &pe) {
				t.Errorf("provider error lost: %v", err)
			}
		})
	}
}

func TestJitterBounded(t *testing.T) {
	for _, r := range []float64{0, 0.25, 0.5, 0.999999, 1, -3} {
		s, _ := newTest(t, &fake{}, model200k, func(o *Options) { o.Rand = func() float64 { return r } })
		for try := 1; try <= 8; try++ {
			d := min(BaseDelay<<(try-1), MaxDelay)
			got, ok := s.backoff(try, status(500))
			if !ok || got < d || float64(got) >= float64(d)*(1+JitterFraction) {
				t.Errorf("rand %v, try %d: wait %v outside [%v, %v)", r, try, got, d, time.Duration(float64(d)*(1+JitterFraction)))
			}
		}
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fake{respond: func(n int, req *Request) (*Response, error) {
		if n == 1 {
			time.AfterFunc(20*time.Millisecond, cancel)
		}
		return nil, status(503)
	}}
	// The real timer: the first backoff is over a second.
	s, _ := newTest(t, f, model200k, func(o *Options) { o.Sleep = nil })
	start := time.Now()
	_, err := s.Summarize(ctx, &compact.SummaryRequest{Messages: []*compact.Message{user("hi")}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("returned after %v", el)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d tries after cancel", n)
	}
}

func TestCancelledContext(t *testing.T) {
	tests := []struct {
		name string
		// cancelAt is the try during which the parent context is
		// cancelled; 0 cancels before Summarize.
		cancelAt int
	}{
		{"before the call", 0},
		{"during the call", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := &fake{respond: func(n int, req *Request) (*Response, error) {
				if n == tt.cancelAt {
					cancel()
					// A client reports the cancellation as a transport
					// error; the parent's state decides.
					return nil, &net.OpError{Op: "read", Err: timeoutErr{}}
				}
				return &Response{Text: handover("x", req.Prompt)}, nil
			}}
			if tt.cancelAt == 0 {
				cancel()
			}
			s, clk := newTest(t, f, model200k, nil)
			_, err := s.Summarize(ctx, &compact.SummaryRequest{Messages: []*compact.Message{user("hi")}})
			if err != context.Canceled {
				t.Errorf("err = %v, want ctx.Err() itself", err)
			}
			if got := len(f.requests()); got != tt.cancelAt {
				t.Errorf("%d calls, want %d", got, tt.cancelAt)
			}
			if len(clk.recorded()) != 0 {
				t.Errorf("slept %v", clk.recorded())
			}
		})
	}
}
