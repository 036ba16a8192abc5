package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// testBody is a request body like the ones the proxy reads: JSON with
// repetitive text, so it compresses well.
var testBody = []byte(`{"model":"m","messages":[` + strings.Repeat(`{"role":"user","content":"hello – ünïcode"},`, 200) + `{"role":"user","content":"end"}]}`)

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstded(t testing.TB, b []byte) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll(b, nil)
}

// zstdStream encodes b as a stream, without the content size in the
// frame header, as a streaming client does.
func zstdStream(t testing.TB, b []byte, opts ...zstd.EOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	e, err := zstd.NewWriter(&buf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(e, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zstdWindow encodes b as a stream that declares the given window size
// and no content size.
func zstdWindow(t testing.TB, b []byte, window int) []byte {
	t.Helper()
	out := zstdStream(t, b, zstd.WithWindowSize(window), zstd.WithSingleSegment(false))
	var h zstd.Header
	if err := h.Decode(out); err != nil || h.WindowSize != uint64(window) {
		t.Fatalf("zstd header %+v, %v: window is not %d", h, err, window)
	}
	return out
}

// request builds a POST with the body and Content-Encoding given; a
// negative contentLength leaves the length unknown (chunked).
func request(body []byte, encoding string, unknownLength bool) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/messages", bytes.NewReader(body))
	if encoding != "" {
		r.Header.Set("Content-Encoding", encoding)
	}
	if unknownLength {
		r.ContentLength = -1
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return r
}

func TestReadBodyEncodings(t *testing.T) {
	var twoMembers []byte
	twoMembers = append(twoMembers, gzipped(t, testBody[:100])...)
	twoMembers = append(twoMembers, gzipped(t, testBody[100:])...)
	var twoFrames []byte
	twoFrames = append(twoFrames, zstded(t, testBody[:100])...)
	twoFrames = append(twoFrames, zstded(t, testBody[100:])...)

	for _, tc := range []struct {
		name, encoding string
		raw            []byte
	}{
		{"none", "", testBody},
		{"identity", "identity", testBody},
		{"gzip", "gzip", gzipped(t, testBody)},
		{"x-gzip", "x-gzip", gzipped(t, testBody)},
		{"gzip two members", "gzip", twoMembers},
		{"zstd", "zstd", zstded(t, testBody)},
		{"zstd upper case, spaces", " ZSTD ", zstded(t, testBody)},
		{"zstd stream", "zstd", zstdStream(t, testBody)},
		{"zstd two frames", "zstd", twoFrames},
	} {
		for _, unknownLength := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/unknownLength=%v", tc.name, unknownLength), func(t *testing.T) {
				raw, decoded, err := readBody(request(tc.raw, tc.encoding, unknownLength), int64(len(testBody)))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(raw, tc.raw) {
					t.Error("raw differs from the bytes sent")
				}
				if !bytes.Equal(decoded, testBody) {
					t.Errorf("decoded body differs: %.80q", decoded)
				}
			})
		}
	}
}

func TestReadBodyWindowLargerThanLimit(t *testing.T) {
	// A streaming encoder declares an 8 MiB window however small the body
	// turns out to be (once it is over one block); such a body decodes
	// under a far smaller limit, and is still refused above the limit.
	body := bytes.Repeat(testBody, 20)
	sent := zstdWindow(t, body, 8<<20)
	_, decoded, err := readBody(request(sent, "zstd", false), int64(len(body)))
	if err != nil || !bytes.Equal(decoded, body) {
		t.Fatalf("readBody = %v; want the body", err)
	}
	if _, _, err := readBody(request(sent, "zstd", false), int64(len(body))-1); !errors.Is(err, errTooLarge) {
		t.Fatalf("readBody one byte under = %v; want errTooLarge", err)
	}
}

func TestReadBodyEmpty(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	raw, decoded, err := readBody(r, 10)
	if err != nil || len(raw) != 0 || len(decoded) != 0 {
		t.Fatalf("readBody of an empty body = %q, %q, %v", raw, decoded, err)
	}
}

func TestReadBodyTooLarge(t *testing.T) {
	// A body that decodes to 64 MiB of zeros: a few kilobytes sent.
	bomb := bytes.Repeat([]byte{0}, 64<<20)
	gzBomb, zstdBomb, zstdStreamBomb := gzipped(t, bomb), zstded(t, bomb), zstdWindow(t, bomb, 64<<10)
	for _, tc := range []struct {
		name, encoding string
		raw            []byte
		limit          int64
		unknownLength  bool
	}{
		{"raw with Content-Length", "", testBody, int64(len(testBody)) - 1, false},
		{"raw chunked", "", testBody, int64(len(testBody)) - 1, true},
		{"gzip raw", "gzip", gzipped(t, testBody), 10, true},
		{"gzip decoded", "gzip", gzipped(t, testBody), int64(len(testBody)) - 1, false},
		{"zstd decoded", "zstd", zstded(t, testBody), int64(len(testBody)) - 1, false},
		{"zstd stream decoded", "zstd", zstdWindow(t, testBody, 1<<10), int64(len(testBody)) - 1, false},
		{"gzip bomb", "gzip", gzBomb, 1 << 20, false},
		{"zstd bomb", "zstd", zstdBomb, 1 << 20, false},
		{"zstd stream bomb", "zstd", zstdStreamBomb, 1 << 20, false},
		{"zstd 8 MiB window bomb", "zstd", zstdWindow(t, bomb, 8<<20), 1 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, decoded, err := readBody(request(tc.raw, tc.encoding, tc.unknownLength), tc.limit)
			if !errors.Is(err, errTooLarge) {
				t.Fatalf("readBody = %v; want errTooLarge", err)
			}
			if raw != nil || decoded != nil {
				t.Fatal("readBody returned bytes with errTooLarge")
			}
		})
	}
	// Exactly at the limit is fine.
	if _, _, err := readBody(request(gzipped(t, testBody), "gzip", false), int64(len(testBody))); err != nil {
		t.Fatalf("a body of exactly the limit: %v", err)
	}
}

func TestReadBodyUnknownEncoding(t *testing.T) {
	for _, enc := range []string{"br", "deflate", "gzip, zstd"} {
		sent := []byte("\x8b\x00some brotli bytes")
		r := request(sent, enc, false)
		if enc == "gzip, zstd" {
			r.Header.Set("Content-Encoding", "gzip")
			r.Header.Add("Content-Encoding", "zstd")
		}
		raw, decoded, err := readBody(r, 1<<20)
		if !errors.Is(err, errUnknownEncoding) {
			t.Fatalf("%s: err = %v; want errUnknownEncoding", enc, err)
		}
		if !bytes.Equal(raw, sent) || decoded != nil {
			t.Fatalf("%s: raw = %q, decoded = %q; want the bytes sent and nil", enc, raw, decoded)
		}
	}
}

func TestReadBodyBadEncoding(t *testing.T) {
	for _, enc := range []string{"gzip", "zstd"} {
		sent := []byte("this is not compressed at all")
		raw, decoded, err := readBody(request(sent, enc, false), 1<<20)
		if !errors.Is(err, errBadEncoding) || errors.Is(err, errTooLarge) {
			t.Fatalf("%s: err = %v; want errBadEncoding", enc, err)
		}
		if !bytes.Equal(raw, sent) || decoded != nil {
			t.Fatalf("%s: raw = %q, decoded = %q; want the bytes sent and nil", enc, raw, decoded)
		}
	}
	// A truncated gzip body.
	gz := gzipped(t, testBody)
	if _, _, err := readBody(request(gz[:len(gz)/2], "gzip", false), 1<<20); !errors.Is(err, errBadEncoding) {
		t.Fatalf("truncated gzip: err = %v; want errBadEncoding", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestReadBodyReadError(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(failingReader{}))
	r.ContentLength = -1
	if _, _, err := readBody(r, 100); err == nil || errors.Is(err, errTooLarge) || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("readBody = %v; want the read error", err)
	}
}

func TestEncodeBodyRoundTrip(t *testing.T) {
	for _, enc := range []string{"", "identity", "gzip", "x-gzip", "zstd", "ZSTD"} {
		body, err := encodeBody(enc, testBody)
		if err != nil {
			t.Fatalf("%q: %v", enc, err)
		}
		if enc != "" && enc != "identity" && len(body) >= len(testBody)/2 {
			t.Errorf("%q: %d bytes for %d; not compressed", enc, len(body), len(testBody))
		}
		raw, decoded, err := readBody(request(body, enc, false), int64(len(testBody)))
		if err != nil {
			t.Fatalf("%q: %v", enc, err)
		}
		if !bytes.Equal(raw, body) || !bytes.Equal(decoded, testBody) {
			t.Fatalf("%q: round trip changed the body", enc)
		}
	}
	// zstd frames carry the content size, which lets the upstream size
	// its buffer.
	body, _ := encodeBody("zstd", testBody)
	var h zstd.Header
	if err := h.Decode(body); err != nil || !h.HasFCS || h.FrameContentSize != uint64(len(testBody)) {
		t.Fatalf("zstd header = %+v, %v; want the content size", h, err)
	}
	if _, err := encodeBody("br", testBody); !errors.Is(err, errUnknownEncoding) {
		t.Fatalf("encodeBody(br) = %v; want errUnknownEncoding", err)
	}
}

func TestBodyCodecsConcurrent(t *testing.T) {
	// Pooled decoders and encoders serve concurrent requests.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			enc := []string{"gzip", "zstd"}[i%2]
			for j := range 20 {
				body := append([]byte(fmt.Sprintf("%d-%d:", i, j)), testBody...)
				sent, err := encodeBody(enc, body)
				if err != nil {
					t.Error(err)
					return
				}
				_, decoded, err := readBody(request(sent, enc, j%2 == 0), 1<<20)
				if err != nil || !bytes.Equal(decoded, body) {
					t.Errorf("%s: round trip failed: %v", enc, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkReadBodyZstd(b *testing.B) {
	sent := zstded(b, testBody)
	b.SetBytes(int64(len(testBody)))
	for b.Loop() {
		if _, _, err := readBody(request(sent, "zstd", false), 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
