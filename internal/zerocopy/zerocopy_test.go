package zerocopy

import "testing"

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a", "é😀 text"} {
		b := Bytes(s)
		if string(b) != s || len(b) != len(s) {
			t.Errorf("Bytes(%q) = %q", s, b)
		}
		if got := String([]byte(s)); got != s {
			t.Errorf("String(%q) = %q", s, got)
		}
	}
	buf := []byte("abc")
	s := String(buf)
	buf[0] = 'x' // the string shares the buffer: the caller's promise, shown
	if s != "xbc" {
		t.Errorf("String does not share its bytes: %q", s)
	}
}
