package jsontext

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
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
		{"", 0, 0},
		{"abc", -1, 3},      // a negative count never starts a character
		{"a\xffb", 2, 2},    // an invalid byte is one character
		{"\xe2\x82b", 2, 2}, // so is each byte of a cut-off sequence
		{strings.Repeat("x", 40) + "é" + strings.Repeat("y", 40), 41, 42},
		{strings.Repeat("x", 40) + "é" + strings.Repeat("y", 40), 81, 82},
		{strings.Repeat("x", 40) + "é" + strings.Repeat("y", 40), 82, 82},
	} {
		if got := RuneOffset(tt.s, tt.n); got != tt.want {
			t.Errorf("RuneOffset(%q, %d) = %d, want %d", tt.s, tt.n, got, tt.want)
		}
	}
}

// TestRuneOffsetRange checks RuneOffset against a range loop, which is
// what it means, at every count, and RuneCount against
// utf8.RuneCountInString, for texts that mix long ASCII runs with
// multi-byte and invalid characters at each alignment.
func TestRuneOffsetRange(t *testing.T) {
	byRange := func(s string, n int) int {
		for off := range s {
			if n == 0 {
				return off
			}
			n--
		}
		return len(s)
	}
	pieces := []string{"a", "é", "😀", "\xff", "\xe2\x82", "\xf0\x80\x80\x80", strings.Repeat("z", 33)}
	for _, p := range pieces {
		for _, q := range pieces {
			for pad := range 40 {
				s := strings.Repeat("-", pad) + p + strings.Repeat(".", 40-pad) + q + strings.Repeat("+", pad)
				if got, want := RuneCount(s), utf8.RuneCountInString(s); got != want {
					t.Fatalf("RuneCount(%q) = %d, utf8.RuneCountInString says %d", s, got, want)
				}
				for n := -1; n <= len(s)+1; n++ {
					if got, want := RuneOffset(s, n), byRange(s, n); got != want {
						t.Fatalf("RuneOffset(%q, %d) = %d, a range loop says %d", s, n, got, want)
					}
				}
			}
		}
	}
}

func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"longer", 5, "long…"},
		{"héllo wörld", 7, "héllo …"},
		{"日本語のテキスト", 4, "日本語…"},
		{"", 1, ""},
	} {
		if got := Shorten(tt.s, tt.n); got != tt.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
