package jsontext

import (
	"testing"
	"unicode/utf16"
)

func TestUTF16Len(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é😀é", 4},
		{"\xff", 1}, // an invalid byte is one replacement character
		{"abcdefghijklmnopqrstuvwxyz0123456789é", 37}, // the 32-byte run, then one rune
	} {
		if got := UTF16Len(tt.s); got != tt.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", tt.s, got, tt.want)
		}
		if got := UTF16LenBytes([]byte(tt.s)); got != tt.want {
			t.Errorf("UTF16LenBytes(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func FuzzUTF16Len(f *testing.F) {
	for _, s := range []string{"", "plain ascii text, long enough", "é😀x", "\x83\xff", "abcdefg\xe2\x82"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// []rune turns each invalid byte into U+FFFD, one unit.
		want := len(utf16.Encode([]rune(s)))
		if got := UTF16Len(s); got != want {
			t.Fatalf("%q: %d, want %d", s, got, want)
		}
	})
}

func TestCutUTF16(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"abcdef", 3, "abc"},
		{"abc", 10, "abc"},
		{"a😀b", 2, "a"}, // the emoji is two units: it does not fit in one
		{"a😀b", 3, "a😀"},
		{"é", 0, ""},
	} {
		if got := CutUTF16(tt.s, tt.n); got != tt.want {
			t.Errorf("CutUTF16(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestRuneOffset(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want int
	}{
		{"abc", 0, 0},
		{"abc", 2, 2},
		{"abc", 3, 3},
		{"abc", 10, 3},
		{"héllo", 2, 3}, // é is two bytes
		{"a😀b", 2, 5},   // the emoji is four bytes
		{"", 1, 0},
	} {
		if got := RuneOffset(tt.s, tt.n); got != tt.want {
			t.Errorf("RuneOffset(%q, %d) = %d, want %d", tt.s, tt.n, got, tt.want)
		}
	}
}
