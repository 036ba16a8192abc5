package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/compactkit/compact"
)

// hopHeaders are the hop-by-hop headers (RFC 9110 section 7.6.1 and the
// ones net/http/httputil removes); they describe one connection and are
// never forwarded. Every other header goes through as it came, in both
// directions, and the proxy adds none (no X-Forwarded-*, no Via).
var hopHeaders = []string{
	"Connection",
	"Proxy-Connection",
	"Keep-Alive",
	"Proxy-Authenticate",
	"Proxy-Authorization",
	"Te",
	"Trailer",
	"Transfer-Encoding",
	"Upgrade",
}

// forwardHeader copies the client's request header h for the upstream:
// without its hop-by-hop headers (see endToEnd), and with an empty
// User-Agent when the client sent none, so that net/http does not send
// its own.
func forwardHeader(h http.Header) http.Header {
	out := endToEnd(h)
	if _, ok := out["User-Agent"]; !ok {
		// net/http would send its own; an empty value sends none.
		out["User-Agent"] = []string{""}
	}
	return out
}

// endToEnd copies h without its hop-by-hop headers, including those the
// Connection header names.
func endToEnd(h http.Header) http.Header {
	out := h.Clone()
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				out.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		out.Del(name)
	}
	return out
}

// upstreamURL joins the upstream base and the request's path and query.
// A base that already ends in /v1 is not doubled for a /v1/... path, so
// both "https://api.openai.com" and "https://api.openai.com/v1" work.
func upstreamURL(base *url.URL, r *http.Request) *url.URL {
	u := *base
	p := r.URL.Path
	bp := strings.TrimSuffix(base.Path, "/")
	if strings.HasSuffix(bp, "/v1") && (p == "/v1" || strings.HasPrefix(p, "/v1/")) {
		p = strings.TrimPrefix(p, "/v1")
	}
	u.Path = bp + p
	u.RawPath = ""
	u.RawQuery = r.URL.RawQuery
	return &u
}

// newUpstreamRequest builds the request sent upstream: the client's
// method, path, query and headers (minus hop-by-hop ones), with body. A
// body that differs from what the client sent gets its Content-Length
// from the new bytes; Host is the upstream's.
func newUpstreamRequest(ctx context.Context, base *url.URL, r *http.Request, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, upstreamURL(base, r).String(), rd)
	if err != nil {
		return nil, err
	}
	out.Header = forwardHeader(r.Header)
	out.Header.Del("Content-Length")
	if body != nil {
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	} else {
		out.Body = nil
		out.ContentLength = 0
	}
	return out, nil
}

// errorBodyLimit bounds how much of an upstream error response is read to
// classify it before it is passed on.
const errorBodyLimit = 1 << 20

// peekError reads a failed upstream response's body, up to errorBodyLimit
// of it, to classify it. whole reports that head is all of the body (it is
// then closed); otherwise the rest is still in resp.Body, and relayError
// sends it on. err is a failure to read (the upstream cut the body short).
func peekError(resp *http.Response) (head []byte, whole bool, err error) {
	head, err = io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit+1))
	if err != nil || len(head) <= errorBodyLimit {
		resp.Body.Close()
		return head, err == nil, err
	}
	return head, false, nil
}

// relayError sends a failed upstream response to the client as it came:
// its headers, head (what peekError read) and the rest of the body, so
// that the client gets every byte its Content-Length promises however
// large the body. It closes the body and returns the first error.
func relayError(w http.ResponseWriter, resp *http.Response, head []byte) error {
	defer resp.Body.Close()
	copyHeader(w, resp.Header)
	w.WriteHeader(resp.StatusCode)
	if _, err := w.Write(head); err != nil {
		return err
	}
	_, err := io.Copy(w, resp.Body)
	return err
}

// isOverflow reports whether a failed upstream response says the context
// did not fit, using the engine's classifier.
func isOverflow(api API, status int, body []byte, header http.Header) bool {
	if enc := contentEncoding(header); enc != "" {
		if dec, err := decodeAll(enc, body, errorBodyLimit); err == nil {
			body = dec
		}
	}
	provider := "openai"
	if api == Anthropic {
		provider = "anthropic"
	}
	return compact.IsContextOverflow(&compact.ProviderError{Provider: provider, StatusCode: status, Body: string(body)})
}

// copyHeader writes the upstream's response header h into w, without
// hop-by-hop headers and adding none.
func copyHeader(w http.ResponseWriter, h http.Header) {
	dst := w.Header()
	for k, vs := range endToEnd(h) {
		dst[k] = append(dst[k][:0:0], vs...)
	}
}

// relayBuffers holds relay's copy buffers: one per response would be most
// of what a streamed request allocates, and the collector's work.
var relayBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// relay sends resp to the client as it comes: status, headers and the body,
// each read flushed at once so that an SSE stream reaches the client event by
// event. A copy of the body goes to obs (when not nil); a compressed body is
// decoded for obs at the end. It returns the number of bytes written and the
// first error (a client gone, an upstream cut off).
func relay(w http.ResponseWriter, resp *http.Response, obs observer, firstByte func()) (int64, error) {
	defer resp.Body.Close()
	copyHeader(w, resp.Header)
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	_ = rc.Flush()

	enc := contentEncoding(resp.Header)
	var compressed *bytes.Buffer
	tee := io.Writer(nil)
	if obs != nil {
		if enc == "" {
			tee = obs
		} else {
			compressed = new(bytes.Buffer)
			tee = &cappedWriter{buf: compressed, limit: 64 << 20}
		}
	}

	bp := relayBuffers.Get().(*[]byte)
	defer relayBuffers.Put(bp)
	buf := *bp
	var n int64
	first := true
	for {
		k, rerr := resp.Body.Read(buf)
		if k > 0 {
			if first && firstByte != nil {
				firstByte()
				first = false
			}
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, werr
			}
			n += int64(k)
			// The client gets the bytes first; reading them for the
			// usage happens while it reads.
			_ = rc.Flush()
			if tee != nil {
				_, _ = tee.Write(buf[:k])
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return n, rerr
		}
	}
	if compressed != nil {
		if dec, err := decodeAll(enc, compressed.Bytes(), 64<<20); err == nil {
			_, _ = obs.Write(dec)
		}
	}
	return n, nil
}

// cappedWriter buffers up to limit bytes and drops the rest.
type cappedWriter struct {
	buf   *bytes.Buffer
	limit int
}

// Write keeps what fits under the limit and reports p as written.
func (c *cappedWriter) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

// writeError answers the client with an error body in the API's own
// format, so that its SDK shows the message.
func writeError(w http.ResponseWriter, api API, status int, typ, msg string) {
	var body string
	q := strconv.Quote(msg)
	if api == Anthropic {
		body = `{"type":"error","error":{"type":` + strconv.Quote(typ) + `,"message":` + q + `}}`
	} else {
		body = `{"error":{"message":` + q + `,"type":` + strconv.Quote(typ) + `,"param":null,"code":null}}`
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// since returns the time elapsed from t by clock now.
func since(now func() time.Time, t time.Time) time.Duration { return now().Sub(t) }

// decodeAll decodes a whole response body of Content-Encoding enc (gzip
// or zstd), at most limit bytes of it, for reading only.
func decodeAll(enc string, b []byte, limit int64) ([]byte, error) {
	switch enc {
	case "gzip", "x-gzip":
		return gunzip(b, limit, nil)
	case "zstd":
		return unzstd(b, limit, nil)
	}
	return nil, errUnknownEncoding
}

// passthrough forwards a request it does not read: body streamed as it
// comes, response relayed as it comes.
func (s *Server) passthrough(w http.ResponseWriter, r *http.Request, api API) {
	start := s.now()
	out, err := http.NewRequestWithContext(r.Context(), r.Method, upstreamURL(s.upstreamFor(api), r).String(), r.Body)
	if err != nil {
		writeError(w, api, http.StatusBadGateway, "api_error", "compact proxy: bad upstream request")
		return
	}
	out.Header = forwardHeader(r.Header)
	out.ContentLength = r.ContentLength
	if r.ContentLength == 0 {
		out.Body = nil
	}
	resp, err := s.client.Do(out)
	if err != nil {
		s.upstreamFailed(w, r, api, err)
		return
	}
	s.metrics.upstreamLatency(api, since(s.now, start))
	_, _ = relay(w, resp, nil, nil)
	s.metrics.request(api, resp.StatusCode)
}

// upstreamFailed answers a request whose upstream could not be reached.
func (s *Server) upstreamFailed(w http.ResponseWriter, r *http.Request, api API, err error) {
	if r.Context().Err() != nil {
		return // the client went away; nobody to answer
	}
	s.metrics.request(api, http.StatusBadGateway)
	s.log.Warn("upstream unreachable", "api", api, "path", r.URL.Path, "err", errorClass(err))
	writeError(w, api, http.StatusBadGateway, "api_error", "compact proxy: upstream unreachable: "+errorClass(err))
}

// errorClass describes a transport error without its URL or any header.
func errorClass(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return err.Error()
}
