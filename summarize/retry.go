package summarize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/compactkit/compact"
)

// Retry timing.
const (
	// BaseDelay is the wait after the first failed try; each further
	// failure doubles it (1, 2, 4, 8, 16 s).
	BaseDelay = time.Second
	// MaxDelay caps the doubling.
	MaxDelay = 16 * time.Second
	// JitterFraction is the most random extra wait, as a share of the
	// delay: a delay d becomes a wait in [d, 1.25·d).
	JitterFraction = 0.25
	// MaxRetryAfter is the longest Retry-After honoured. A provider asking
	// for a longer wait (a spent quota, say) ends the retries at once with
	// its error rather than blocking the compaction for that long.
	MaxRetryAfter = 2 * time.Minute
)

// Retryable reports whether a failed Complete may succeed if sent again:
//
//   - provider errors that say so (429, 5xx, see
//     compact.ProviderError.Retryable) and 408 Request Timeout, but never
//     a context overflow, which needs a smaller request instead;
//   - timeouts: a net.Error whose Timeout() is true, or
//     context.DeadlineExceeded from a per-request deadline;
//   - broken connections: ECONNRESET, ECONNABORTED, EPIPE,
//     io.ErrUnexpectedEOF, io.EOF (the server closed the connection before
//     answering) and errors whose text says "connection reset" or
//     "broken pipe".
//
// context.Canceled is never retryable. Whether the caller's own context
// ended is checked separately by the retry loop, before this function:
// an expired parent deadline also looks like a timeout.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pe *compact.ProviderError
	if errors.As(err, &pe) {
		if compact.IsContextOverflow(err) {
			return false
		}
		return pe.Retryable() || pe.StatusCode == 408
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, target := range []error{syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE, io.ErrUnexpectedEOF, io.EOF} {
		if errors.Is(err, target) {
			return true
		}
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "connection reset") || strings.Contains(msg, "broken pipe")
}

// complete sends one request, retrying what Retryable allows with
// exponential backoff, up to MaxTries tries in all. A context overflow is
// returned at once for the caller to split the request.
func (s *Summarizer) complete(ctx context.Context, req *Request) (*Response, error) {
	return s.retry(ctx, func(ctx context.Context) (*Response, error) { return s.opts.Completer.Complete(ctx, req) })
}

// retry makes one call with complete's retries: what Retryable allows,
// with exponential backoff, up to MaxTries tries in all.
func (s *Summarizer) retry(ctx context.Context, call func(context.Context) (*Response, error)) (*Response, error) {
	for try := 1; ; try++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		resp, err := call(ctx)
		if err == nil {
			if resp == nil {
				return nil, fmt.Errorf("completer returned no response and no error")
			}
			return resp, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if !Retryable(err) {
			return nil, err
		}
		if try >= s.opts.MaxTries {
			return nil, fmt.Errorf("gave up after %d tries: %w", try, err)
		}
		wait, ok := s.backoff(try, err)
		if !ok {
			return nil, fmt.Errorf("provider asked to wait %s before retrying: %w", wait, err)
		}
		if serr := s.opts.Sleep(ctx, wait); serr != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			return nil, serr
		}
	}
}

// backoff returns the wait before try+1: the provider's Retry-After when
// it gave one, else BaseDelay·2^(try−1) capped at MaxDelay, plus jitter.
// ok is false when the provider asked for more than MaxRetryAfter.
func (s *Summarizer) backoff(try int, err error) (wait time.Duration, ok bool) {
	var pe *compact.ProviderError
	if errors.As(err, &pe) && pe.RetryAfter > 0 {
		return pe.RetryAfter, pe.RetryAfter <= MaxRetryAfter
	}
	d := MaxDelay
	if try-1 < 5 {
		d = min(BaseDelay<<(try-1), MaxDelay)
	}
	r := s.opts.Rand()
	if r < 0 || r >= 1 {
		r = 0
	}
	return d + time.Duration(JitterFraction*r*float64(d)), true
}

// sleepContext waits for d or until ctx ends, whichever comes first.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
