package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	// klauspost/compress provides zstd, which the standard library lacks
	// and Codex uses for its request bodies, and a gzip that reads and
	// writes several times faster than compress/gzip with the same API.
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/compactkit/compact/internal/jsontext"
)

// errTooLarge is wrapped by readBody when the body, as sent or once
// decoded, is larger than the limit. The proxy answers 413.
var errTooLarge = errors.New("request body too large")

// errUnknownEncoding is returned by readBody for a Content-Encoding it
// cannot decode. The raw body is still returned: the proxy forwards it
// untouched, without compacting.
var errUnknownEncoding = errors.New("request body has an unknown content encoding")

// errBadEncoding is wrapped by readBody when the body does not decode as
// its Content-Encoding says. The raw body is still returned, so the proxy
// can forward it untouched and let the upstream answer.
var errBadEncoding = errors.New("request body does not decode")

// The decoders and encoders are pooled: a zstd decoder or encoder costs
// hundreds of kilobytes to set up, and a gzip writer tens. The pools hold
// no state a caller can observe; they are package-level only so that
// readBody and encodeBody stay plain functions.
var (
	zstdDecoders = sync.Pool{New: func() any {
		// Concurrency 1 decodes on the caller's goroutine, so a pooled
		// decoder holds no goroutines. The memory cap is set per call.
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			panic(fmt.Sprintf("proxy: zstd decoder options: %v", err))
		}
		return d
	}}
	zstdEncoders = sync.Pool{New: func() any {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(fmt.Sprintf("proxy: zstd encoder options: %v", err))
		}
		return e
	}}
	gzipReaders sync.Pool // *gzip.Reader
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}
)

// contentEncoding returns the Content-Encoding of h in lower case, ""
// for none or identity. The proxy passes it to encodeBody.
func contentEncoding(h http.Header) string {
	enc := strings.ToLower(strings.TrimSpace(strings.Join(h.Values("Content-Encoding"), ",")))
	if enc == "identity" {
		return ""
	}
	return enc
}

// readBody reads r's body, at most limit bytes of it as sent, and decodes
// it according to its Content-Encoding (none, identity, gzip or zstd),
// again at most limit bytes. It returns the bytes as sent and the decoded
// body (the same slice when there is no encoding).
//
// A body over the limit, as sent or decoded, gives an error wrapping
// errTooLarge, and nothing else: a decoding stops at the limit, so a small
// body that inflates enormously costs no more than limit bytes of memory.
// An encoding other than those gives raw, nil and errUnknownEncoding; a
// body that fails to decode gives raw, nil and an error wrapping
// errBadEncoding. A failure to read gives the read error.
func readBody(r *http.Request, limit int64) (raw, decoded []byte, err error) {
	return readBodyCharged(r, limit, nil)
}

// readBodyCharged is readBody with the decoding of a compressed body
// charged to c (nil for none) as it goes, so that a small body that
// decodes to a large one waits for room under the admission budget before
// it is decoded, and fails with errBusy when none comes, rather than
// being held uncounted.
func readBodyCharged(r *http.Request, limit int64, c *charge) (raw, decoded []byte, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil, nil
	}
	if r.ContentLength > limit {
		return nil, nil, fmt.Errorf("%w: Content-Length %d is over the limit of %d bytes", errTooLarge, r.ContentLength, limit)
	}
	raw, err = readAtMost(r.Body, limit)
	if err != nil {
		return nil, nil, err
	}
	meter := func(d io.Reader) io.Reader {
		if c == nil {
			return d
		}
		// What c holds already covers raw.
		return &chargedReader{ctx: r.Context(), r: d, c: c, read: int64(len(raw))}
	}
	enc := contentEncoding(r.Header)
	switch enc {
	case "":
		return raw, raw, nil
	case "gzip", "x-gzip":
		decoded, err = gunzip(raw, limit, meter)
	case "zstd":
		decoded, err = unzstd(raw, limit, meter)
	default:
		return raw, nil, fmt.Errorf("%w: %q", errUnknownEncoding, enc)
	}
	if errors.Is(err, errTooLarge) || errors.Is(err, errBusy) {
		return nil, nil, err
	}
	if err != nil {
		return raw, nil, fmt.Errorf("%w: %s: %w", errBadEncoding, enc, err)
	}
	return raw, decoded, nil
}

// readAtMost reads r to the end, failing with errTooLarge as soon as it
// has more than limit bytes.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	if n > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// gunzip decodes a gzip body (all its members) of at most limit bytes,
// reading the decoder through meter (nil for none).
func gunzip(raw []byte, limit int64, meter func(io.Reader) io.Reader) ([]byte, error) {
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(raw))
	} else {
		err = zr.Reset(bytes.NewReader(raw))
	}
	if err != nil {
		return nil, err
	}
	defer gzipReaders.Put(zr)
	out, err := readAtMost(metered(meter, zr), limit)
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("%w: decoded gzip body has more than %d bytes", errTooLarge, limit)
	}
	return out, err
}

// unzstd decodes a zstd body (all its frames) of at most limit bytes,
// reading the decoder through meter (nil for none).
func unzstd(raw []byte, limit int64, meter func(io.Reader) io.Reader) ([]byte, error) {
	d := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(d)
	// The decoder's memory cap bounds the window a frame may declare.
	// Streaming encoders declare windows of up to 8 MiB at the usual
	// levels whatever the body's size, so the cap is never below that;
	// readAtMost bounds the decoded size.
	if err := d.ResetWithOptions(bytes.NewReader(raw), zstd.WithDecoderMaxMemory(uint64(max(limit, zstdMinWindowCap)))); err != nil {
		return nil, err
	}
	defer d.Reset(nil) //nolint:errcheck // drops raw from the pooled decoder
	out, err := readAtMost(metered(meter, d), limit)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("%w: decoded zstd body has more than %d bytes", errTooLarge, limit)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// metered returns r read through meter, r itself when meter is nil.
func metered(meter func(io.Reader) io.Reader, r io.Reader) io.Reader {
	if meter == nil {
		return r
	}
	return meter(r)
}

// zstdMinWindowCap is the smallest memory cap given to the zstd decoder:
// the window of zstd levels up to 19.
const zstdMinWindowCap = 8 << 20

// encodeBody encodes a rewritten body for the Content-Encoding the client
// used, as the encoding returned by contentEncoding names it ("" for
// none): gzip at the default level, zstd at level 3 (SpeedDefault). The
// upstream then reads the body the way the request's headers say.
func encodeBody(encoding string, decoded []byte) ([]byte, error) {
	switch strings.ToLower(encoding) {
	case "", "identity":
		return decoded, nil
	case "gzip", "x-gzip":
		var buf bytes.Buffer
		zw := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(zw)
		zw.Reset(&buf)
		if _, err := zw.Write(decoded); err != nil {
			return nil, fmt.Errorf("gzip request body: %w", err)
		}
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("gzip request body: %w", err)
		}
		return buf.Bytes(), nil
	case "zstd":
		e := zstdEncoders.Get().(*zstd.Encoder)
		defer zstdEncoders.Put(e)
		return e.EncodeAll(decoded, make([]byte, 0, len(decoded)/4+64)), nil
	default:
		return nil, fmt.Errorf("%w: %q", errUnknownEncoding, encoding)
	}
}

// receiveBody reads x's body into x.raw and, without its Content-Encoding,
// x.decoded (nil when the encoding is unknown or does not decode: the
// request then goes through unread). Its bytes are charged to ch as they
// come. A body too slow, too large or unreadable is answered here (408,
// 413, 503 or 400), and ok is false.
func (s *Server) receiveBody(w http.ResponseWriter, x *exchange, ch *charge) (ok bool) {
	r, api := x.r, x.api
	body := r.Body
	if r.ContentLength < 0 && body != nil {
		// Length unknown (chunked): reserve as it comes.
		r2 := new(http.Request)
		*r2 = *r
		r2.Body = struct {
			io.Reader
			io.Closer
		}{&chargedReader{ctx: r.Context(), r: body, c: ch}, body}
		r = r2
	}
	// A compressed body is held twice, as sent and decoded: its decoding
	// is charged as it goes.
	raw, decoded, err := readBodyCharged(r, s.cfg.MaxBodyBytes, ch)
	switch {
	case errors.Is(err, errBusy):
		s.refuseBusy(w, api)
		return false
	case errors.Is(err, errBodyTimeout):
		s.metrics.request(api, http.StatusRequestTimeout)
		s.warnEvery("bodytimeout", "request body not received in time; connection closed", "body_timeout", s.cfg.BodyTimeout.String())
		w.Header().Set("Connection", "close")
		writeError(w, api, http.StatusRequestTimeout, "invalid_request_error",
			fmt.Sprintf("compact proxy: request body not received within %s", s.cfg.BodyTimeout))
		return false
	case errors.Is(err, errTooLarge):
		s.tooLarge(w, api)
		return false
	case errors.Is(err, errUnknownEncoding), errors.Is(err, errBadEncoding):
		s.failOpen(stageBody, err)
		decoded = nil
	case err != nil:
		if r.Context().Err() != nil {
			return false
		}
		s.metrics.request(api, http.StatusBadRequest)
		writeError(w, api, http.StatusBadRequest, "invalid_request_error", "compact proxy: could not read the request body")
		return false
	}
	x.raw, x.decoded = raw, decoded
	return true
}

// parseBody parses x's decoded body with the API's codec into a view of
// the request, with its model's limits. It reports false, x.decision
// saying why, for a request the proxy does not read further: more
// messages than Config.MaxMessages, an unreadable body, a client that
// manages its own context (a stand-down, previous_response_id), a model
// whose window is unknown.
func (s *Server) parseBody(x *exchange) (v *view, ok bool) {
	if s.tooManyMessages(x.api, x.decoded) {
		s.passTooMany(x)
		return nil, false
	}
	p, err := s.codec(x.api).parse(x.decoded)
	if err != nil {
		s.failOpen(stageParse, err)
		x.decision = "pass (unreadable body)"
		return nil, false
	}
	if p.StandDown == "" && x.api == Responses {
		// The history lives on the provider's side: the request only
		// carries what is new, and there is nothing here to compact.
		if id, ok := jsontext.TopLevelString(x.decoded, "previous_response_id"); ok && id != "" {
			p.StandDown = "previous_response_id"
		}
	}
	if p.StandDown != "" {
		x.decision = "pass (" + p.StandDown + ")"
		return nil, false
	}
	if len(p.Items) > s.cfg.MaxMessages {
		s.passTooMany(x)
		return nil, false
	}
	info, ok := s.modelInfo(s.learnScope(x.api, x.r), p.Model)
	if !ok {
		s.warnOnce("window:"+p.Model, "model window unknown: passing its requests through uncompacted until an overflow error names it", "model", p.Model)
		x.decision = "pass (window unknown)"
		x.unknownWindow = true
		return nil, false
	}
	return &view{api: x.api, p: p, info: info}, true
}

// tooLarge answers a request whose body is over Config.MaxBodyBytes.
func (s *Server) tooLarge(w http.ResponseWriter, api API) {
	s.metrics.request(api, http.StatusRequestEntityTooLarge)
	writeError(w, api, http.StatusRequestEntityTooLarge, "request_too_large",
		fmt.Sprintf("compact proxy: request body larger than %d bytes", s.cfg.MaxBodyBytes))
}

// passTooMany notes that x has more messages than Config.MaxMessages
// and goes through unread.
func (s *Server) passTooMany(x *exchange) {
	x.decision = fmt.Sprintf("pass (more than %d messages)", s.cfg.MaxMessages)
	s.warnEvery("maxmessages", "request passed through unread: more messages than --max-messages", "max_messages", s.cfg.MaxMessages)
}
