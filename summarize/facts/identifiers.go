package facts

import (
	"iter"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/compactkit/compact"
)

// IdentKind is the kind of an identifier.
type IdentKind string

// The kinds of identifier Identifiers finds.
const (
	IdentURL    IdentKind = "url"
	IdentHash   IdentKind = "hash"   // a hex hash of 7 to 64 digits (commit ids), a UUID
	IdentID     IdentKind = "id"     // a token mixing letters and digits (TS2304, v1.2.3, #123)
	IdentNumber IdentKind = "number" // a number of three digits or more (20000, 1,018, 12.5%)
	IdentName   IdentKind = "name"   // a backticked name (`--keep-recent`, `Engine.Compact`)
)

// MaxNameRunes is the longest backticked span counted as a name; longer
// ones are code, not names.
const MaxNameRunes = 80

// Identifier is a token the user or the assistant wrote that a later
// turn may need exactly: an id, a hash, a number, a URL or a backticked
// name.
type Identifier struct {
	Text string
	Kind IdentKind
	// ByUser is set when a user message holds it.
	ByUser bool
	// Count is the number of messages that hold it; First and Last are
	// the indexes of the first and last of them.
	Count       int
	First, Last int
}

var (
	urlRe    = regexp.MustCompile("https?://[^\\s<>\"'`]+")
	uuidRe   = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	hexRe    = regexp.MustCompile(`^[0-9a-f]{7,64}$|^[0-9A-F]{7,64}$`)
	issueRe  = regexp.MustCompile(`^#\d+$`)
	numberRe = regexp.MustCompile(`^[-+]?\d[\d,_]*(?:\.\d+)?(?:%|ms|s|x|k|K|KB|MB|GB|KiB|MiB|GiB)?$`)
	idRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/@+-]*[A-Za-z0-9]$`)
	unitRe   = regexp.MustCompile(`^\d{1,2}[a-zA-Z]{1,3}$`)
)

// Identifiers returns the identifiers written in the text of the user
// messages and of the assistant's messages (tool output, tool arguments
// and reasoning excluded), each once, in order of first appearance. Text
// inside fenced code blocks does not count: it is code, not a mention.
func Identifiers(msgs []*compact.Message) []Identifier {
	var out []Identifier
	at := make(map[string]int)
	seen := make(map[string]bool)
	var ids []Identifier // one buffer for every message's identifiers
	for i, m := range msgs {
		if m == nil || (m.Role != compact.RoleUser && m.Role != compact.RoleAssistant) {
			continue
		}
		clear(seen)
		ids = appendIdentifiers(ids[:0], m.Text())
		for _, id := range ids {
			if seen[id.Text] {
				continue
			}
			seen[id.Text] = true
			k, ok := at[id.Text]
			if !ok {
				k = len(out)
				at[id.Text] = k
				out = append(out, Identifier{Text: id.Text, Kind: id.Kind, First: i})
			}
			out[k].Count++
			out[k].Last = i
			out[k].ByUser = out[k].ByUser || m.Role == compact.RoleUser
		}
	}
	return out
}

// IdentifiersIn returns the identifiers of one text, repeats included:
// the backticked names first, then the URLs, then the other tokens, each
// in the order of the text. Only Text and Kind are set.
func IdentifiersIn(text string) []Identifier {
	return appendIdentifiers(nil, text)
}

// appendIdentifiers appends the identifiers of text to out (see
// IdentifiersIn) and returns the extended slice.
func appendIdentifiers(out []Identifier, text string) []Identifier {
	// segs are the pieces of a block between its backticked spans, which
	// the URLs and the other tokens are looked for in: a span counts as
	// a blank between them, without a copy of the block made to blank it.
	var segs []string
	for block := range prose(text) {
		segs = append(segs[:0], block)
		if strings.Contains(block, "`") {
			segs = backtickSegments(block, segs[:0], func(s string) {
				name := strings.TrimSpace(s)
				if n := utf8.RuneCountInString(name); n >= 2 && n <= MaxNameRunes && strings.IndexFunc(name, isAlnum) >= 0 {
					out = append(out, Identifier{Text: Normalize(name), Kind: IdentName})
				}
			})
		}
		for k, seg := range segs {
			if strings.Contains(seg, "://") {
				segs[k] = urlRe.ReplaceAllStringFunc(seg, func(s string) string {
					s = strings.TrimRightFunc(s, urlTrailer)
					if len(s) > len("https://x") {
						out = append(out, Identifier{Text: s, Kind: IdentURL})
					}
					return " "
				})
			}
		}
		for _, seg := range segs {
			for tok := range digitFields(seg) {
				tok = strings.TrimFunc(tok, tokenPunct)
				tok = strings.TrimRight(tok, ".")
				if kind, ok := classify(tok); ok {
					out = append(out, Identifier{Text: tok, Kind: kind})
				}
			}
		}
	}
	return out
}

// backtickSegments calls name with the text inside each backticked span
// of block, in order, as backtickRe finds them (on one line, not empty),
// and appends to segs the pieces of block around the spans: joined with a
// blank for each span, they give block with the spans blanked out. It
// reads the block once with IndexByte instead of running the expression.
func backtickSegments(block string, segs []string, name func(string)) []string {
	last := 0
	for i := 0; ; {
		j := strings.IndexByte(block[i:], '`')
		if j < 0 {
			break
		}
		start := i + j
		k := strings.IndexAny(block[start+1:], "`\n")
		if k < 0 {
			break // no closing backtick, nor any later span
		}
		end := start + 1 + k
		switch {
		case block[end] == '\n':
			i = end + 1 // a span does not cross a line
		case k == 0:
			i = end // "``": the second backtick may open a span
		default:
			name(block[start+1 : end])
			segs = append(segs, block[last:start])
			last, i = end+1, end+1
		}
	}
	return append(segs, block[last:])
}

// digitFields yields the fields of s that hold an ASCII digit, split at
// blanks as strings.Fields splits them: every kind of bare token has a
// digit (classify), and most words have none.
func digitFields(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start, digit := -1, false // the current field's start, -1 between fields
		for i := 0; i < len(s); {
			c, size := s[i], 1
			space := c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
			if c >= utf8.RuneSelf {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				space = unicode.IsSpace(r)
			}
			switch {
			case space:
				if start >= 0 && digit && !yield(s[start:i]) {
					return
				}
				start, digit = -1, false
			case start < 0:
				start, digit = i, c >= '0' && c <= '9'
			case c >= '0' && c <= '9':
				digit = true
			}
			i += size
		}
		if start >= 0 && digit {
			yield(s[start:])
		}
	}
}

// tokenPunct is the punctuation trimmed from both ends of a token.
func tokenPunct(r rune) bool {
	switch r {
	case '(', ')', '[', ']', '{', '}', '<', '>', '"', '\'', ',', ';', ':', '!', '?', '*':
		return true
	}
	return false
}

// urlTrailer is the punctuation trimmed from the end of a URL.
func urlTrailer(r rune) bool {
	switch r {
	case '.', ',', ';', ':', '!', '?', ')', ']', '}', '*':
		return true
	}
	return false
}

// classify says which kind of identifier a bare token is, if any.
func classify(tok string) (IdentKind, bool) {
	if len(tok) < 3 || len(tok) > 64 {
		return "", false
	}
	digits, letters := 0, 0
	for _, r := range tok {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case unicode.IsLetter(r):
			letters++
		}
	}
	if digits == 0 {
		return "", false // every kind below has a digit
	}
	switch {
	case uuidRe.MatchString(tok):
		return IdentHash, true
	case hexRe.MatchString(tok) && digits > 0 && letters > 0:
		return IdentHash, true
	case issueRe.MatchString(tok):
		return IdentID, true
	case numberRe.MatchString(tok):
		return IdentNumber, digits >= 3
	case digits > 0 && letters > 0 && len(tok) >= 4 && idRe.MatchString(tok) && !unitRe.MatchString(tok):
		return IdentID, true
	}
	return "", false
}

// prose yields the parts of a text outside fenced code blocks.
func prose(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") {
			yield(text)
			return
		}
		var cur []string
		fence := ""
		for l := range strings.SplitSeq(text, "\n") {
			t := strings.TrimSpace(l)
			if fence != "" {
				if strings.HasPrefix(t, fence) {
					fence = ""
				}
				continue
			}
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				fence = t[:3]
				if !yield(strings.Join(cur, "\n")) {
					return
				}
				cur = nil
				continue
			}
			cur = append(cur, l)
		}
		yield(strings.Join(cur, "\n"))
	}
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// ByPriority sorts identifiers for a summary that cannot hold them all:
// the user's first, then those named in more messages, then the newest.
func ByPriority(ids []Identifier) {
	sort.SliceStable(ids, func(a, b int) bool {
		x, y := ids[a], ids[b]
		if x.ByUser != y.ByUser {
			return x.ByUser
		}
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.Last > y.Last
	})
}
