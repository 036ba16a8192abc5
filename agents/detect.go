package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/compactkit/compact/agents/cline"
	"github.com/compactkit/compact/agents/geminicli"
	"github.com/compactkit/compact/internal/jsonrec"
)

// HeadSize is how much of a file detection reads.
const HeadSize = 64 << 10

// IsPiHeader reports whether head starts with a pi session header line
// (a JSON object whose type is "session").
func IsPiHeader(head []byte) bool {
	line := bytes.TrimLeft(head, " \t\r\n")
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	var h struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &h); err == nil {
		return h.Type == "session"
	}
	// A header cut by the end of head: look for its type at the start.
	return bytes.HasPrefix(line, []byte(`{"type":"session"`))
}

// Detect finds the format of the file or folder at path: "pi" for a pi
// session, else the first format that recognises it. When none does, it
// fails with an *UnknownError (wrapping ErrUnknownFormat) that describes
// what the file holds and what is read instead; it fails with the file's
// own error when it cannot be read. This is the one place where the
// format of a file is decided: every command asks it.
func Detect(path string) (Format, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Format{}, err
	}
	if fi.IsDir() {
		for _, f := range Formats() {
			if f.DetectDir != nil && f.DetectDir(path) {
				return f, nil
			}
		}
		return Format{}, unknownDir(path)
	}
	head, err := readHead(path)
	if err != nil {
		return Format{}, err
	}
	if f, ok := detectHead(head); ok {
		return f, nil
	}
	if f, ok := uiMessagesTask(path, head); ok {
		return f, nil
	}
	return Format{}, unknownFile(path, head, func() (io.ReadCloser, error) { return os.Open(path) })
}

// DetectHead is Detect for the first bytes of a file (at most HeadSize);
// name is used in the error. A JSON array longer than head is described
// by the elements head holds.
func DetectHead(head []byte, name string) (Format, error) {
	if f, ok := detectHead(head); ok {
		return f, nil
	}
	return Format{}, unknownFile(name, head, nil)
}

// detectHead asks pi's header check, then each format in turn.
func detectHead(head []byte) (Format, bool) {
	if IsPiHeader(head) {
		return Format{Name: Pi, Agent: "pi"}, true
	}
	for _, f := range Formats() {
		if f.Detect(head) {
			return f, true
		}
	}
	return Format{}, false
}

// readHead returns up to HeadSize bytes from the start of the file.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, HeadSize)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return buf[:n], nil
}

// clineDir reports whether path is a Cline task folder.
func clineDir(path string) bool {
	fi, err := os.Stat(filepath.Join(path, cline.APIHistoryFile))
	return err == nil && !fi.IsDir()
}

// UnknownError is the error Detect returns for a file or folder that no
// format reads. Its text is one line, "PATH: SEEN: HINT":
//
//	ui.json: JSON array of 183 objects with keys ts, type, say: looks like Cline ui_messages.json; import needs api_conversation_history.json beside it
//
// It wraps ErrUnknownFormat. It never quotes the content, which may hold
// secrets: it names its shape and the first keys of its first object.
type UnknownError struct {
	// Path is the file or folder.
	Path string
	// Seen describes the content: "empty file", "binary data",
	// "JSON object with keys a, b, c", ...
	Seen string
	// Hint says what the content looks like, when it looks like a file
	// of some agent that cannot be read on its own, and what is read
	// instead; else which formats are read.
	Hint string
	// MaybePi reports content that starts like a pi session whose header
	// line is missing or damaged: a first line that starts a JSON object
	// but does not parse, a pi entry (one with a parentId), or a header
	// IsPiHeader does not take (after a byte order mark, say). The session
	// reader's error, which names the line, says more about such a file.
	MaybePi bool
}

// Error returns "PATH: SEEN: HINT".
func (e *UnknownError) Error() string {
	return e.Path + ": " + e.Seen + ": " + e.Hint
}

// Unwrap returns ErrUnknownFormat.
func (e *UnknownError) Unwrap() error { return ErrUnknownFormat }

// keysShown is how many keys of an object the description names.
const keysShown = 3

// readsWhat names the formats read: "compact reads pi, claude-code, ...".
func readsWhat() string {
	return "compact reads " + strings.Join(Names(), ", ")
}

// unknownHint is the hint for content that looks like no agent's file.
func unknownHint() string {
	return "not a format compact reads (" + readsWhat()[len("compact reads "):] + ")"
}

// lookalike is content that looks like a file of some agent that no
// format reads on its own.
type lookalike struct {
	detect func(head []byte) bool
	hint   string
}

// lookalikes are checked, in order, on a file no format recognises.
var lookalikes = [...]lookalike{
	{cline.DetectUIMessages, "looks like Cline ui_messages.json; import needs " + cline.APIHistoryFile + " beside it"},
	{geminicli.DetectStreamJSON, "looks like Gemini CLI --output-format stream-json output, which compact does not read; import the run's chat recording instead (~/.gemini/tmp/<project>/chats/session-*.jsonl)"},
}

// unknownDir describes a folder no format reads.
func unknownDir(path string) *UnknownError {
	return &UnknownError{Path: path, Seen: "a folder",
		Hint: "neither a Cline task (" + cline.APIHistoryFile + ") nor an OpenHands session (events/<n>.json); name a session file (" + readsWhat() + ")"}
}

// unknownFile describes the content of a file no format recognises:
// head is its start (at most HeadSize bytes), and all, when not nil,
// returns a reader of the whole file, for a description that needs more
// than the head (the number of elements of a JSON array).
func unknownFile(path string, head []byte, all func() (io.ReadCloser, error)) *UnknownError {
	e := &UnknownError{Path: path, Hint: unknownHint()}
	for _, l := range lookalikes {
		if l.detect(head) {
			e.Hint = l.hint
			break
		}
	}
	body := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(head) == 0:
		e.Seen = "empty file"
	case len(body) == 0:
		e.Seen = "only white space"
	case binary(head, len(head) == HeadSize):
		e.Seen = "binary data, not text"
	case body[0] == '[':
		e.Seen = describeArray(head, all)
	case body[0] == '{':
		e.Seen, e.MaybePi = describeObject(head, all)
	default:
		e.Seen = "text, not JSON"
	}
	if e.MaybePi {
		e.Hint = `starts like a pi session without a valid "session" header line (compact inspect names the line at fault)`
	}
	return e
}

// binary reports whether head holds a NUL byte or is not UTF-8; cut says
// that head may end inside a character.
func binary(head []byte, cut bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if cut {
		for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

// describeArray describes a file that starts with "[": how many
// elements, objects or not, and the first keys of the first object.
func describeArray(head []byte, all func() (io.ReadCloser, error)) string {
	r := io.Reader(bytes.NewReader(head))
	whole := all != nil && len(head) == HeadSize
	if whole {
		rc, err := all()
		if err != nil {
			return "JSON array"
		}
		defer rc.Close()
		r = rc
	}
	dec := json.NewDecoder(r)
	if _, err := dec.Token(); err != nil {
		return "JSON array"
	}
	n, objects := 0, 0
	var keys []string
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if !whole && len(head) == HeadSize && errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Sprintf("JSON array of more than %s%s", elements(n, objects), withKeys(keys))
			}
			return fmt.Sprintf("JSON array that does not parse after %s", elements(n, objects))
		}
		if n == 0 {
			keys = firstKeys(raw)
		}
		n++
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
			objects++
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Sprintf("JSON array that does not parse after %s", elements(n, objects))
	}
	if n == 0 {
		return "empty JSON array"
	}
	return "JSON array of " + elements(n, objects) + withKeys(keys)
}

// elements says "1 object", "3 objects" or "3 values" (not all objects).
func elements(n, objects int) string {
	what := "object"
	if objects < n {
		what = "value"
	}
	if n != 1 {
		what += "s"
	}
	return fmt.Sprintf("%d %s", n, what)
}

// withKeys is " with keys a, b, c" for the first keys of an object, ""
// for none.
func withKeys(keys []string) string {
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return " with key " + keys[0]
	}
	return " with keys " + strings.Join(keys, ", ")
}

// firstKeys returns the first keysShown keys of the object raw starts
// with, each cut to 40 bytes; nil when raw is no object.
func firstKeys(raw []byte) []string {
	var keys []string
	jsonrec.Keys(raw, func(key string, _ byte) bool {
		if len(key) > 40 {
			key = strings.ToValidUTF8(key[:40], "") + "…"
		}
		keys = append(keys, strings.Map(printable, key))
		return len(keys) < keysShown
	})
	return keys
}

// printable maps the characters that would break a one-line message to
// "?".
func printable(r rune) rune {
	if unicode.IsPrint(r) {
		return r
	}
	return '?'
}

// describeObject describes a file that starts with "{": one JSON object,
// or JSON Lines. maybePi reports a first line that may be a damaged pi
// session header or a pi entry.
func describeObject(head []byte, all func() (io.ReadCloser, error)) (seen string, maybePi bool) {
	obj, line, cut := jsonrec.FirstObject(head)
	if obj != nil {
		var typ string
		_ = json.Unmarshal(obj["type"], &typ)
		_, entry := obj["parentId"]
		entry = entry || typ == "session"
		rest := bytes.TrimSpace(head[bytes.Index(head, line)+len(line):])
		if len(rest) == 0 {
			return "JSON object" + withKeys(firstKeys(line)), entry
		}
		return "JSON Lines, the first line an object" + withKeys(firstKeys(line)), entry
	}
	if cut {
		return "JSON Lines whose first line is longer than " + fmt.Sprint(HeadSize>>10) + " KiB", true
	}
	// A first line that is not an object on its own: a document spread
	// over several lines, or a damaged first line.
	r := io.Reader(bytes.NewReader(head))
	if all != nil && len(head) == HeadSize {
		if rc, err := all(); err == nil {
			defer rc.Close()
			r = rc
		}
	}
	dec := json.NewDecoder(r)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return "JSON that does not parse on its first line", true
	}
	return "JSON object over several lines" + withKeys(firstKeys(raw)), false
}

// regular reports whether path is a regular file.
func regular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// uiMessagesTask returns the Cline format when path is a ui_messages.json
// with its api_conversation_history.json beside it, which ReadFile reads
// together.
func uiMessagesTask(path string, head []byte) (Format, bool) {
	if filepath.Base(path) != cline.UIMessagesFile || !cline.DetectUIMessages(head) ||
		!regular(filepath.Join(filepath.Dir(path), cline.APIHistoryFile)) {
		return Format{}, false
	}
	f, err := ByName(cline.Format)
	return f, err == nil
}
