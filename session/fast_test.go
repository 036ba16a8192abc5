package session

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/deepdiff"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// checkFast decodes line on both paths. It fails the test when the fast
// path accepts a line the reference path rejects or decodes differently,
// and reports whether the fast path handled the line.
func checkFast(t *testing.T, line []byte) bool {
	t.Helper()
	var d fastDecoder
	got, ok := d.fast(bytes.Clone(line))
	if !ok {
		return false
	}
	want := decodeLine(bytes.Clone(line))
	if want.err != nil {
		t.Fatalf("the fast path accepts a line the reference path rejects (%v):\n%.500q", want.err, line)
	}
	if diff := deepdiff.Of("decoded", got, want); diff != "" {
		t.Fatalf("fast vs reference: %s\nline %.500q", diff, line)
	}
	checkInPlace(t, line, want, false)
	checkInPlace(t, line, want, true)
	return true
}

// checkInPlace decodes line with strings unescaped into the line itself,
// all of them as Open does or, with rebuild, the canonical ones as Read
// does: the entry must be the reference path's and a line the fast path
// gives up on must be put back byte for byte before the reference path
// reads it. Open's checksum must be the stored line's; for Read,
// escaping each span's text again must give back the stored line.
func checkInPlace(t *testing.T, line []byte, want decodedLine, rebuild bool) {
	t.Helper()
	d := fastDecoder{inPlace: !rebuild, rebuild: rebuild}
	buf := bytes.Clone(line)
	got, ok := d.fast(buf)
	if !ok {
		d.restore()
		if !bytes.Equal(buf, line) {
			t.Fatalf("rebuild=%v: a line given up on in place is not restored:\nline %.500q\nnow  %.500q", rebuild, line, buf)
		}
		return
	}
	// (A line marked may still read the same: "a\\\\" unescaped over
	// itself leaves it as it was.)
	if !got.inPlace && !bytes.Equal(buf, line) {
		t.Fatalf("rebuild=%v: the line changed but is not marked\nline %.500q", rebuild, line)
	}
	if !rebuild && got.inPlace && got.crc != crc32.ChecksumIEEE(line) {
		t.Fatalf("checksum %08x, the stored line's %08x", got.crc, crc32.ChecksumIEEE(line))
	}
	got.inPlace, got.crc = false, 0
	if diff := deepdiff.Of("decoded", got, want); diff != "" {
		t.Fatalf("rebuild=%v: in place vs reference: %s\nline %.500q", rebuild, diff, line)
	}
	if !rebuild {
		return
	}
	stored := bytes.Clone(buf)
	for _, sp := range d.spans {
		restoreStored(stored[sp.start:], buf[sp.start:sp.start+sp.n], nil)
	}
	if !bytes.Equal(stored, line) {
		t.Fatalf("the line rebuilt differs from the stored one: %s", deepdiff.Strings(string(stored), string(line)))
	}
}

// fixtureLines returns the entry lines of a fixture (the header left out).
func fixtureLines(tb testing.TB, name string) [][]byte {
	tb.Helper()
	data, err := os.ReadFile(fixture(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	return lines[1:]
}

// Every line of the fixtures decodes the same on both paths, and none of
// them needs the reference path: they are what pi writes.
func TestFastDecodeFixtures(t *testing.T) {
	sharedtest.EachPiSession(t, func(t *testing.T, name string) {
		fallbacks := 0
		for i, line := range fixtureLines(t, name) {
			if !checkFast(t, line) {
				fallbacks++
				t.Errorf("line %d goes through the reference path: %.300s", i+2, line)
			}
		}
		t.Logf("%d fallbacks", fallbacks)
	})
}

// fastCases are lines the fast path must either decode exactly like the
// reference path or leave to it. handled says which is expected; the
// comparison runs either way.
var fastCases = []struct {
	line    string
	handled bool
}{
	// Plain lines of each kind.
	{`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}`, true},
	{`{"type":"message","id":"a","parentId":"p","timestamp":"t","message":{"role":"user","content":"as a string","timestamp":1}}`, true},
	{`{"type":"message","message":{"role":"user","content":""}}`, true},
	{`{"type":"message","message":{"role":"user","content":[]}}`, true},
	{`{"type":"message","message":{"role":"user","content":null}}`, true},
	{`{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s"},{"type":"toolCall","id":"c","name":"n","arguments":{"a":[1,{"b":null}]},"partialJson":"x"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0.1,"total":1e-3}},"stopReason":"toolUse","timestamp":1763681581544}}`, true},
	{`{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10}}}`, true},
	{`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n"}],"usage":null}}`, true},
	{`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":null}]}}`, true},
	{`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":"str"}]}}`, true},
	{`{"type":"message","message":{"role":"user","usage":{"input":1},"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"odd","text":""},{"type":"odd2","text":"x","y":1}]}}`, true},
	{`{"type":"message","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"x"}],"details":{"diff":"--- a\n+++ b"},"isError":false,"timestamp":1}}`, true},
	{`{"type":"message","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false,"truncated":false,"fullOutputPath":"/tmp/x","timestamp":1}}`, true},
	{`{"type":"message","message":{"role":"bashExecution","command":"ls","output":"","exitCode":null,"cancelled":true,"truncated":true,"excludeFromContext":true,"content":[{"type":"text","text":"x","e":1}]}}`, true},
	{`{"type":"message","message":{"role":"hookMessage","customType":"h","content":"s","display":true}}`, true},
	{`{"type":"message","message":{"role":"custom","customType":"h","content":[{"type":"text","text":"s"}],"display":false,"details":{}}}`, true},
	{`{"type":"message","message":{"content":[{"text":"first","type":"text"}],"timestamp":5,"role":"user","zz":[]}}`, true},
	{`{"type":"compaction","id":"c","parentId":"a","timestamp":"t","summary":"s","firstKeptEntryId":"a","tokensBefore":100,"details":{"readFiles":["a"],"modifiedFiles":[],"reason":"auto","n":1.5}}`, true},
	{`{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":3,"tokensBefore":100,"fromHook":true}`, true},
	{`{"type":"compaction","summary":"s","firstKeptEntryIndex":null,"tokensBefore":null,"details":null}`, true},
	{`{"type":"branch_summary","id":"b","parentId":"a","timestamp":"t","fromId":"x","summary":"gone"}`, true},
	{`{"type":"branch_summary","fromId":"x","summary":""}`, true},
	{`{"type":"custom_message","customType":"ext","content":"hello","display":true}`, true},
	{`{"type":"custom_message","customType":"ext","content":[{"type":"text","text":"a"},{"type":"image","data":"d","mimeType":"m"}]}`, true},
	{`{"type":"custom_message","customType":"ext","content":5}`, false},
	{`{"type":"model_change","provider":"p","modelId":"m"}`, true},
	{`{"type":"thinking_level_change","thinkingLevel":"high"}`, true},
	{`{"type":"label","targetId":"a","label":"l"}`, true},
	{`{"type":"label","targetId":"a","label":null}`, true},
	{`{"type":"session_info","name":"n"}`, true},
	{`{"type":"custom","customType":"c","data":{"x":1}}`, true},
	{`{"type":"zzz","id":"1","parentId":null,"timestamp":"t","other":[1,2]}`, true},
	{"  {\"type\":\"model_change\" , \"provider\" : \"p\"\t}\r", true},

	// Strings.
	{`{"type":"message","message":{"role":"user","content":"a\"b\\c\/d\be\ff\ng\rh\ti"}}`, true},
	{`{"type":"message","message":{"role":"user","content":"\u0000\u00e9\u20ac\ud83d\ude00"}}`, true},
	{`{"type":"message","message":{"role":"user","content":"\ud800 \udc00 \ud800\ud800\udc00 \udc00\ud800 \ud800\u0041 \ud800"}}`, true},
	{"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff utf8 \xe2\x82 \xed\xa0\x80 \xc0\xaf\"}}", true},
	{"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff and \\n escaped \xe2\x82\\u00e9\"}}", true},
	{"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"ok é € 😀\"}}", true},
	{"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"ctl \x01\"}}", false},
	{"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"x\",\"zz\":\"\xff\"}}", true},
	{`{"type":"message","message":{"role":"user","content":"\x"}}`, false},
	{`{"type":"message","message":{"role":"user","content":"\u12"}}`, false},
	{`{"type":"message","message":{"role":"user","content":"\'"}}`, false},

	// Numbers.
	{`{"type":"message","message":{"role":"assistant","usage":{"input":1e3}}}`, false},
	{`{"type":"message","message":{"role":"assistant","usage":{"input":-0,"output":-5}}}`, true},
	{`{"type":"message","message":{"role":"assistant","usage":{"input":1.5}}}`, false},
	{`{"type":"message","message":{"role":"assistant","usage":{"input":99999999999999999999}}}`, false},
	{`{"type":"message","message":{"role":"assistant","usage":{"input":"1"}}}`, false},
	{`{"type":"message","message":{"role":"user","timestamp":1.5}}`, false},
	{`{"type":"message","message":{"role":"user","timestamp":-0}}`, true},
	{`{"type":"message","message":{"role":"user","timestamp":null}}`, true},
	{`{"type":"message","message":{"role":"user","timestamp":123456789012345678}}`, false},
	{`{"type":"message","message":{"role":"user","timestamp":01}}`, false},
	{`{"type":"compaction","summary":"s","tokensBefore":1E2}`, false},

	// Names: repeated, in another case, escaped, not ASCII.
	{`{"type":"message","type":"message","message":{"role":"user"}}`, false},
	{`{"type":"message","message":{"role":"user","role":"assistant"}}`, false},
	{`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}}`, false},
	{`{"type":"message","message":{"role":"user","x":1,"x":2}}`, true},
	{`{"type":"message","ID":"a","message":{"role":"user"}}`, false},
	{`{"type":"message","message":{"Role":"user"}}`, false},
	{`{"type":"message","message":{"role":"user","content":[{"Type":"text"}]}}`, false},
	{`{"type":"message","message":{"role":"assistant","usage":{"Input":1}}}`, false},
	{`{"type":"message","\u0069d":"a","message":{"role":"user"}}`, false},
	{"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"\xc3\xa9\":1}}", false},
	{`{"type":"message","message":{"role":"user","":1}}`, false},

	// Types that do not fit, and lines that are not entries.
	{`{"type":"message","message":{"role":"user","content":5}}`, false},
	{`{"type":"message","message":{"role":"user","content":[null]}}`, false},
	{`{"type":"message","message":{"role":"user","content":[5]}}`, false},
	{`{"type":"message","message":{"role":"user","isError":"yes"}}`, false},
	{`{"type":"message","message":null}`, false},
	{`{"type":"message"}`, false},
	{`{"type":"message","message":{"content":"x"}}`, false},
	{`{"type":"message","message":{"role":""}}`, false},
	{`{"type":"model_change","message":{"role":"user"}}`, false},
	{`{"type":"session","id":"x"}`, false},
	{`{"id":"x"}`, false},
	{`{"type":5}`, false},
	{`[]`, false},
	{`{"type":"label"} x`, false},
	{`{"type":"label","id":"1"}{"type":"label","id":"2"}`, false},
	{`{"type":"label",}`, false},
	{`{"type":"label","x":[1,]}`, false},
	{`{"type":"label","x":tru}`, false},
	{`{"type":"label","x":1.}`, false},
	{`{"type":"label","x":-}`, false},
	{`{"type":"lab`, false},
	{`{"type":"label","x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`, false},
}

func TestFastDecodeCases(t *testing.T) {
	for _, c := range fastCases {
		if handled := checkFast(t, []byte(c.line)); handled != c.handled {
			t.Errorf("handled = %v, want %v: %s", handled, c.handled, c.line)
		}
	}
}

// FuzzFastDecode checks the fast path against the reference path on any
// line: when the fast path takes a line, the reference path must accept
// it and decode it to the same entry, message, parts, extras and facts.
func FuzzFastDecode(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c.line))
	}
	for _, sn := range stringSnippets {
		body := `\n` + strings.Repeat("a", 60) + sn.text + strings.Repeat(`b\"`, 30)
		f.Add([]byte(`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"` + body + `"}],"details":"` + body + `"}}`))
	}
	dir, _, _ := sharedtest.Lookup() // seeds only when the files are there
	for _, name := range sharedtest.PiSessions() {
		data, err := os.ReadFile(dir + "/sessions/pi/" + name)
		if err != nil {
			continue
		}
		// A sample of the fixture lines: the short ones of each sort and
		// every 50th line.
		for i, line := range bytes.Split(data, []byte("\n")) {
			if i > 0 && (len(line) < 1500 || i%50 == 0) && i%7 == 0 {
				f.Add(line)
			}
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFast(t, line)
	})
}

// derivedIDOld is derivedID as first written, with hash/fnv and fmt: the
// ids of version 1 entries must not change, since appended entries refer
// to them.
func derivedIDOld(sessionID string, fileIndex int, taken map[string]bool) string {
	for salt := 0; ; salt++ {
		h := fnv.New64a()
		h.Write([]byte(sessionID))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(fileIndex)))
		if salt > 0 {
			h.Write([]byte{0})
			h.Write([]byte(strconv.Itoa(salt)))
		}
		id := fmt.Sprintf("%08x", uint32(h.Sum64()))
		if !taken[id] {
			return id
		}
	}
}

func TestDerivedIDUnchanged(t *testing.T) {
	for _, sid := range []string{"", "x", "aaaaaaaa-2222-4333-8444-555555555555", "é\x00\xff"} {
		taken := map[string]bool{}
		set := idSet{derived: newSet32(0)}
		check := func(what string, i int) {
			t.Helper()
			want := derivedIDOld(sid, i, taken)
			got, v := derivedID(idPrefix(sid), i, &set)
			if string(got[:]) != want || fmt.Sprintf("%08x", v) != want {
				t.Fatalf("%sderivedID(%q, %d) = %s (%08x), want %s", what, sid, i, got[:], v, want)
			}
			// Taking the id forces the next call for the same index to
			// salt it. Odd indexes take it as a stored id, even ones as
			// a derived one.
			taken[want] = true
			if i%2 == 1 {
				if set.stored == nil {
					set.stored = map[string]bool{}
				}
				set.stored[want] = true
			} else {
				set.derived.add(v)
			}
		}
		for i := 0; i < 2000; i += 7 {
			check("", i)
			check("salted ", i)
			check("twice salted ", i)
		}
	}
}

// BenchmarkDecode decodes every entry line of a fixture on one goroutine,
// through the fast path and through the reference path: the CPU cost per
// load that decodeLines spreads over the available cores.
func BenchmarkDecode(b *testing.B) {
	for _, name := range sharedtest.PiSessions() {
		lines := fixtureLines(b, name)
		size := 0
		for _, l := range lines {
			size += len(l)
		}
		b.Run("fast/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				var d fastDecoder
				for _, l := range lines {
					if _, ok := d.fast(l); !ok {
						b.Fatal("fallback")
					}
				}
			}
		})
		b.Run("reference/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, l := range lines {
					if d := decodeLine(l); d.err != nil {
						b.Fatal(d.err)
					}
				}
			}
		})
	}
}

// stringSnippets are pieces of string literals (as they appear between
// the quotes) that stress the string scanner: escapes of every kind,
// surrogates whole and halved, bytes that are not valid UTF-8, runs of
// backslashes before quotes. The bad ones make the line invalid.
var stringSnippets = []struct {
	text string
	bad  bool
}{
	{`\"`, false}, {`\\`, false}, {`\\\"`, false}, {`\\\\`, false}, {`\/`, false},
	{`\b\f\n\r\t`, false}, {`\u0041`, false}, {`\u00e9`, false}, {`\u20AC`, false},
	{`\ud83d\ude00`, false}, {`\ud83d`, false}, {`\ude00`, false}, {`\ud83dx`, false},
	{`\ud83d\u0041`, false}, {`\ud83d\ud83d\ude00`, false},
	// Control characters as JSON.stringify writes them (canonical: Read
	// unescapes them in place) and as it does not (copied out).
	{`\u001b\u0000\u001f`, false}, {`\u001B`, false}, {`\u000a`, false}, {`\u0022`, false},
	{"é€😀", false}, {"\xff", false}, {"\xe2\x82", false}, {"\xed\xa0\x80", false}, {"\xf0\x9f\x98", false},
	{`\x`, true}, {`\u12`, true}, {`\u12g4`, true}, {`\ud83d\u12`, true}, {"\x01", true}, {"\x1f", true},
	{"\t", true},
}

// Strings of many lengths with each snippet at every offset around the
// 64-byte blocks the scanner reads, in a decoded string (a text part) and
// in a skipped one (inside a tool call's arguments and an extra member).
func TestFastStrings(t *testing.T) {
	for _, sn := range stringSnippets {
		for pre := 0; pre < 150; pre++ {
			for _, post := range []int{0, 1, 7, 8, 70, 80} {
				// An escape first, so that long strings go to blocks.
				body := `\n` + strings.Repeat("a", pre) + sn.text + strings.Repeat(`b\"`, post/3) + strings.Repeat("c", post%3)
				lines := []string{
					`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"` + body + `"}]}}`,
					`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{"x":"` + body + `"}}],"details":"` + body + `"}}`,
					`{"type":"message","message":{"role":"user","content":"` + body + `","x":1}}`,
				}
				for _, line := range lines {
					if handled := checkFast(t, []byte(line)); handled == sn.bad {
						t.Fatalf("handled = %v for the snippet %q at %d: %q", handled, sn.text, pre, line)
					}
				}
			}
		}
	}
}

// lineGen writes random entry lines from a grammar of what pi writes,
// bent at random: members missing, repeated, renamed in another case or
// given values of another type, numbers and strings of every form, white
// space between tokens. It complements FuzzFastDecode, whose mutations
// seldom keep a long line valid.
type lineGen struct {
	r   *rand.Rand
	buf []byte
}

func (g *lineGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *lineGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *lineGen) ws() {
	if g.chance(0.05) {
		g.buf = append(g.buf, g.pick(" ", "\t", "\r\n", "  ")...)
	}
}

// str writes a string literal.
func (g *lineGen) str() {
	g.buf = append(g.buf, '"')
	n := g.r.IntN(6)
	if g.chance(0.2) {
		n += g.r.IntN(60)
	}
	for range n {
		switch k := g.r.IntN(20); {
		case k < 10:
			g.buf = append(g.buf, strings.Repeat(g.pick("a", "xyz ", "Hello, world. "), 1+g.r.IntN(8))...)
		case k < 17:
			sn := stringSnippets[g.r.IntN(len(stringSnippets))]
			if sn.bad && !g.chance(0.1) {
				continue
			}
			g.buf = append(g.buf, sn.text...)
		default:
			g.buf = append(g.buf, byte(g.r.IntN(256)))
		}
	}
	g.buf = append(g.buf, '"')
}

func (g *lineGen) number() {
	g.buf = append(g.buf, g.pick("0", "1", "-0", "42", "1763681581544", "-7", "1.5", "1e3", "1E2", "0.0",
		"99999999999999999999", "123456789012345678", "9007199254740993", "-9007199254740992")...)
}

// value writes a value of the given sort ("string", "int", "bool", "raw")
// or, now and then, of another.
func (g *lineGen) value(sort string, depth int) {
	if g.chance(0.02) {
		sort = g.pick("string", "int", "bool", "null", "object", "array")
	}
	switch sort {
	case "string":
		g.str()
	case "int":
		g.number()
	case "bool":
		g.buf = append(g.buf, g.pick("true", "false")...)
	case "null":
		g.buf = append(g.buf, "null"...)
	case "object", "raw":
		if depth > 3 || sort == "raw" && g.chance(0.3) {
			g.value(g.pick("string", "int", "bool", "null"), depth)
			return
		}
		g.object(depth+1, nil, []string{"a", "path", "b", "cost", "x"}, func(string) string { return "raw" })
	case "array":
		g.buf = append(g.buf, '[')
		for i := range g.r.IntN(4) {
			if i > 0 {
				g.buf = append(g.buf, ',')
			}
			g.value("raw", depth+1)
		}
		g.buf = append(g.buf, ']')
	}
}

// object writes an object with some of the known members, in any order,
// and some others. sortOf tells a member's sort, or writes it itself and
// returns "".
func (g *lineGen) object(depth int, known, others []string, sortOf func(key string) string) {
	var keys []string
	for _, k := range known {
		if g.chance(0.85) {
			keys = append(keys, k)
		}
	}
	for _, k := range others {
		if g.chance(0.15) {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 && g.chance(0.03) {
		keys = append(keys, keys[g.r.IntN(len(keys))]) // repeated
	}
	if len(keys) > 1 && g.chance(0.3) {
		i, j := g.r.IntN(len(keys)), g.r.IntN(len(keys))
		keys[i], keys[j] = keys[j], keys[i]
	}
	g.buf = append(g.buf, '{')
	for i, k := range keys {
		if i > 0 {
			g.buf = append(g.buf, ',')
		}
		g.ws()
		name := k
		if g.chance(0.01) {
			name = strings.ToUpper(k[:1]) + k[1:]
		}
		g.buf = append(g.buf, '"')
		g.buf = append(g.buf, name...)
		g.buf = append(g.buf, '"')
		g.ws()
		g.buf = append(g.buf, ':')
		g.ws()
		if s := sortOf(k); s != "" {
			g.value(s, depth)
		}
	}
	g.buf = append(g.buf, '}')
}

func (g *lineGen) block() {
	typ := g.pick("text", "thinking", "toolCall", "image", "odd", "")
	g.object(3, []string{"type", "text", "thinking", "id", "name", "arguments", "data", "mimeType"}[:2+g.r.IntN(7)],
		[]string{"thinkingSignature", "partialJson", "textSignature", "z"}, func(k string) string {
			switch k {
			case "type":
				if g.chance(0.95) {
					g.buf = strconv.AppendQuote(g.buf, typ)
					return ""
				}
				return "string"
			case "arguments":
				return "object"
			case "z", "textSignature":
				return "raw"
			}
			return "string"
		})
}

func (g *lineGen) message() {
	role := g.pick("user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage", "branchSummary", "odd", "")
	g.object(2, []string{"role", "content", "timestamp", "usage", "stopReason", "provider", "model", "api", "toolCallId",
		"toolName", "isError", "details"}[:3+g.r.IntN(10)],
		[]string{"errorMessage", "command", "output", "exitCode", "cancelled", "truncated", "excludeFromContext",
			"customType", "display", "fullOutputPath", "x"}, func(k string) string {
			switch k {
			case "role":
				if g.chance(0.97) {
					g.buf = strconv.AppendQuote(g.buf, role)
					return ""
				}
				return "string"
			case "content":
				switch g.r.IntN(10) {
				case 0:
					return "string"
				case 1:
					return "null"
				}
				g.buf = append(g.buf, '[')
				for i := range g.r.IntN(4) {
					if i > 0 {
						g.buf = append(g.buf, ',')
					}
					g.ws()
					if g.chance(0.03) {
						g.value("raw", 3)
					} else {
						g.block()
					}
				}
				g.buf = append(g.buf, ']')
				return ""
			case "usage":
				if g.chance(0.05) {
					return "null"
				}
				g.object(3, []string{"input", "output", "cacheRead", "cacheWrite", "totalTokens"}, []string{"cost", "other"},
					func(k string) string {
						if k == "cost" || k == "other" {
							return "raw"
						}
						return "int"
					})
				return ""
			case "timestamp", "exitCode":
				return "int"
			case "isError", "cancelled", "truncated", "excludeFromContext", "display":
				return "bool"
			case "details", "x":
				return "raw"
			}
			return "string"
		})
}

func (g *lineGen) line() []byte {
	g.buf = g.buf[:0]
	g.ws()
	kind := g.pick("message", "message", "message", "compaction", "branch_summary", "custom_message", "model_change",
		"thinking_level_change", "label", "session_info", "custom", "zzz", "session", "")
	known := []string{"type", "id", "parentId", "timestamp"}
	switch kind {
	case "message":
		known = append(known, "message")
	case "compaction":
		known = append(known, "summary", "firstKeptEntryId", "firstKeptEntryIndex", "tokensBefore", "tokensAfter", "details", "fromHook")
	case "branch_summary":
		known = append(known, "fromId", "summary")
	case "custom_message":
		known = append(known, "customType", "content", "display")
	case "model_change":
		known = append(known, "provider", "modelId")
	case "thinking_level_change":
		known = append(known, "thinkingLevel")
	case "label":
		known = append(known, "targetId", "label")
	case "session_info":
		known = append(known, "name")
	case "custom":
		known = append(known, "customType", "data")
	}
	g.object(1, known, []string{"version", "cwd", "extra", "message", "label"}, func(k string) string {
		switch k {
		case "type":
			if g.chance(0.97) {
				g.buf = strconv.AppendQuote(g.buf, kind)
				return ""
			}
			return "string"
		case "parentId", "label":
			if g.chance(0.2) {
				return "null"
			}
			return "string"
		case "message":
			if g.chance(0.95) {
				g.message()
				return ""
			}
			return "raw"
		case "firstKeptEntryIndex", "tokensBefore", "tokensAfter", "version":
			return "int"
		case "fromHook", "display":
			return "bool"
		case "details", "data", "extra":
			return "raw"
		case "content":
			if g.chance(0.5) {
				return "string"
			}
			g.buf = append(g.buf, '[')
			g.block()
			g.buf = append(g.buf, ']')
			return ""
		}
		return "string"
	})
	g.ws()
	return g.buf
}

// Random lines decode the same on both paths, and the fast path takes
// most of the valid ones.
func TestFastDecodeRandom(t *testing.T) {
	n := 50000
	if testing.Short() {
		n = 5000
	}
	g := &lineGen{r: rand.New(rand.NewPCG(1, 2))}
	handled, valid := 0, 0
	for range n {
		line := g.line()
		if checkFast(t, line) {
			handled++
		}
		if decodeLine(line).err == nil {
			valid++
		}
	}
	t.Logf("%d lines, %d decoded by the reference path, %d by the fast path", n, valid, handled)
	if handled < valid/3 {
		t.Errorf("the fast path takes only %d of %d valid lines", handled, valid)
	}
}

// set32 holds exactly the values added, 0 among them, through growth
// from an empty set and with values that collide in the table.
func TestSet32(t *testing.T) {
	for _, n := range []int{0, 3, 100} {
		s := newSet32(n)
		ref := map[uint32]bool{}
		r := rand.New(rand.NewPCG(1, uint64(n)))
		for i := range 3000 {
			var v uint32
			switch i % 4 {
			case 0:
				v = r.Uint32()
			case 1:
				v = uint32(i) << 20 // the same low bits: collisions
			case 2:
				v = 0
			default:
				v = uint32(r.IntN(64))
			}
			if s.has(v) != ref[v] {
				t.Fatalf("n %d: has(%#x) = %v before adding, want %v", n, v, s.has(v), ref[v])
			}
			s.add(v)
			ref[v] = true
		}
		for v := range ref {
			if !s.has(v) {
				t.Fatalf("n %d: %#x lost", n, v)
			}
		}
		for range 3000 {
			if v := r.Uint32(); s.has(v) != ref[v] {
				t.Fatalf("n %d: has(%#x) = %v, want %v", n, v, s.has(v), ref[v])
			}
		}
		if s.n+btoi(s.zero) != len(ref) {
			t.Errorf("n %d: %d values counted, want %d", n, s.n+btoi(s.zero), len(ref))
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
