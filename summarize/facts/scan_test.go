package facts

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The hand-written scanners must find what the expressions they stand
// for find.

func TestBacktickSegments(t *testing.T) {
	ref := regexp.MustCompile("`([^`\n]+)`")
	for _, block := range []string{
		"", "no ticks", "`a`", "use `x` and `y z`.", "``", "```", "`` `a`", "`a\nb` `c`", "`open", "a `b` `",
		"`a``b`", "x`\n`y`", "`é` `\t`", "``a``", strings.Repeat("`k` ", 3) + "`\n",
	} {
		var got []string
		out := strings.Join(backtickSegments(block, nil, func(s string) { got = append(got, s) }), " ")
		var want []string
		wantOut := ref.ReplaceAllStringFunc(block, func(s string) string {
			want = append(want, s[1:len(s)-1])
			return " "
		})
		if out != wantOut || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("backtickSegments(%q) = %q %q, want %q %q", block, out, got, wantOut, want)
		}
	}
}

func TestMayHoldExit(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"Command exited with code 1", true},
		{"EXIT STATUS: 2", true},
		{"eXiT", true},
		{"xi", false},
		{"exi t", false},
		{"", false},
		{"no status here", false},
	} {
		if got := mayHoldExit(tt.s); got != tt.want {
			t.Errorf("mayHoldExit(%q) = %v", tt.s, got)
		}
		if tt.want == false && exitCodeRe.MatchString(tt.s) {
			t.Errorf("exitCodeRe matches %q, which mayHoldExit rules out", tt.s)
		}
	}
}

func TestNoOutput(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"", true},
		{"(no output)\n\nCommand exited with code 1", true},
		{"  \n", true},
		{"found\nCommand exited with code 1", false},
		{"exit code: 1", true},
		{"something", false},
	} {
		if got := NoOutput(tt.s); got != tt.want {
			t.Errorf("NoOutput(%q) = %v", tt.s, got)
		}
	}
}

func TestNormalizeKeepsNormalText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"a b c", "a b c"},
		{" a", "a"},
		{"a ", "a"},
		{"a  b", "a b"},
		{"a\tb", "a b"},
		{"a\vb", "a b"},
		{"a\u00a0b", "a b"},
		{"é  ü", "é ü"},
		{"x\xffy", "x\uFFFDy"},
	} {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestColonDigit(t *testing.T) {
	for _, tt := range []struct {
		l    string
		want bool
	}{
		{"a.go:3: x", true},
		{"key: value", false},
		{"ends with:", false},
		{"a: b :9", true},
		{"", false},
	} {
		if got := colonDigit(tt.l); got != tt.want {
			t.Errorf("colonDigit(%q) = %v", tt.l, got)
		}
		if !tt.want && locationRe.MatchString(tt.l) {
			t.Errorf("locationRe matches %q, which colonDigit rules out", tt.l)
		}
	}
}

func TestDigitFields(t *testing.T) {
	for _, s := range []string{
		"", "no digits here", "port 8080, v1.2\tand\u00a0x9\u2003y7 z", " 1 ", "a1\n\nb2\v3c", "\xff1 \xe2\x80\x80 2\xe2\x80",
		"é3 ü", "trailing4",
	} {
		var want []string
		for _, f := range strings.Fields(s) {
			if strings.ContainsAny(f, "0123456789") {
				want = append(want, f)
			}
		}
		var got []string
		for f := range digitFields(s) {
			got = append(got, f)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Errorf("digitFields(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestLastExitCode(t *testing.T) {
	ref := func(text string) (int, bool) {
		all := exitCodeRe.FindAllStringSubmatch(text, -1)
		if len(all) == 0 {
			return 0, false
		}
		code, err := strconv.Atoi(all[len(all)-1][1])
		return code, err == nil
	}
	for _, text := range []string{
		"", "ok\n", "out\nCommand exited with code 2", "out\n\n  \nCommand exited with code 2\n", "exit code: 1\nexit status 3",
		"Exit Code:\n  4\n", "text exit code 5", "line\nEXITED WITH CODE -1  ", "exit code 99999999999999999999",
		"a\nexit\ncode 1", "exit code 1\nmore", "\n\nexit code 7", "prefix exit\nexit code 8",
	} {
		code, ok := lastExitCode(text)
		wantCode, wantOK := ref(text)
		if code != wantCode || ok != wantOK {
			t.Errorf("lastExitCode(%q) = %d, %v; the expression gives %d, %v", text, code, ok, wantCode, wantOK)
		}
	}
}

// identifiersRef is IdentifiersIn as it was written first: each block
// copied with its backticked spans blanked out by the expression, then
// its URLs blanked, then its tokens read.
func identifiersRef(text string) []Identifier {
	ticks := regexp.MustCompile("`([^`\n]+)`")
	var out []Identifier
	for block := range prose(text) {
		block = ticks.ReplaceAllStringFunc(block, func(s string) string {
			name := strings.TrimSpace(s[1 : len(s)-1])
			if n := utf8.RuneCountInString(name); n >= 2 && n <= MaxNameRunes && strings.IndexFunc(name, isAlnum) >= 0 {
				out = append(out, Identifier{Text: Normalize(name), Kind: IdentName})
			}
			return " "
		})
		block = urlRe.ReplaceAllStringFunc(block, func(s string) string {
			s = strings.TrimRightFunc(s, urlTrailer)
			if len(s) > len("https://x") {
				out = append(out, Identifier{Text: s, Kind: IdentURL})
			}
			return " "
		})
		for _, tok := range strings.Fields(block) {
			tok = strings.TrimFunc(tok, tokenPunct)
			tok = strings.TrimRight(tok, ".")
			if kind, ok := classify(tok); ok {
				out = append(out, Identifier{Text: tok, Kind: kind})
			}
		}
	}
	return out
}

// IdentifiersIn, which reads the pieces between backticked spans in
// place, finds what the copying reference finds, in the same order.
func FuzzIdentifiersInMatchesRef(f *testing.F) {
	for _, s := range []string{"`a` https://x.y/z 12345 #1 9f3c2a1d", "see `pkg/x.go`https://a.b/c`d` v1.2.3",
		"```\n`x` 42\n```\nafter `y2` 7f3e2d1c0b", "``a`` `b c` x`1`y 10.0.0.1", "http://e.com/`x`/p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, want := IdentifiersIn(text), identifiersRef(text)
		if len(got) != len(want) {
			t.Fatalf("%q: %d identifiers %v, want %d %v", text, len(got), got, len(want), want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: identifier %d is %+v, want %+v", text, i, got[i], want[i])
			}
		}
	})
}
