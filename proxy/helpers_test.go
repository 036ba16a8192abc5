package proxy

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// roundTrip sends req with the default client and returns the response
// with its body read and closed, and that body. An error sending or
// reading fails the test.
func roundTrip(t testing.TB, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the answer to %s %s: %v", req.Method, req.URL.Path, err)
	}
	return resp, b
}

// lastOf returns the last of reqs, failing the test when there is none.
func lastOf(t testing.TB, reqs []seen) seen {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("the upstream received no request")
	}
	return reqs[len(reqs)-1]
}

// forwardedUnchanged reports whether the last model request the upstream
// received is the client's last request exactly as the client sent it.
func forwardedUnchanged(t testing.TB, up *fakeUpstream, c *client) bool {
	t.Helper()
	return bytes.Equal(lastOf(t, up.modelRequests()).Body, c.bodyBefore(len(c.items)-2))
}
