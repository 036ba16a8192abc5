package facts

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
)

// MaxLineRunes is the length a distinctive line is cut to.
const MaxLineRunes = 200

// Failure is a tool output that failed: a tool result flagged as an
// error, a shell command that exited non-zero or timed out, or one that
// exited 0 but printed compiler or test errors (ExitZero).
type Failure struct {
	// Index is the index of the result message (or of the user's bash
	// execution) in the messages given.
	Index int
	// Tool is the tool's name, "" for a command the user ran.
	Tool string
	// Target is the command line of a shell call, else the call's path,
	// pattern or URL argument; "" when unknown.
	Target string
	// Status is how a shell command ended ("exit 2", "timed out",
	// "error", "exit 0"), "error" for other tools.
	Status string
	// ExitZero is set for a command that exited 0 while printing errors.
	ExitZero bool
	// Line is the distinctive line of the output (see DistinctiveLine).
	Line string
}

var (
	// exitCodeRe finds the status line agents append to a shell
	// command's output.
	exitCodeRe = regexp.MustCompile(`(?mi)^\s*(?:command exited with code|exit code:?|exit status:?|exited with code)\s*(-?\d+)\s*$`)
	abortedRe  = regexp.MustCompile(`(?mi)^\s*command (?:was )?aborted\b`)
	timeoutRe  = regexp.MustCompile(`(?mi)^\s*command timed out\b`)
	ansiRe     = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

	// errorWords mark a line as an error message when no line matches
	// strongRes.
	errorWords = []string{"error", "fail", "cannot", "can't", "could not", "couldn't", "not found", "no such",
		"exception", "panic", "fatal", "denied", "invalid", "undefined", "missing", "unexpected", "refused",
		"traceback"}
)

// Failures returns the failing tool outputs of the messages, oldest
// first: tool results flagged as errors, shell commands (agent's or
// user's) that exited non-zero or timed out, and shell commands that
// exited 0 but printed compiler or test errors (PrintsErrors), unless
// the command only reads (Inspection: a grep that finds "error" in a
// file is no failure). A search that found nothing (exit 1 without
// output) and a command the user aborted are not failures.
func Failures(msgs []*compact.Message) []Failure {
	calls := make(map[string]*compact.ToolCall)
	var out []Failure
	for i, m := range msgs {
		if m == nil {
			continue
		}
		switch m.Role {
		case compact.RoleAssistant:
			for _, c := range m.ToolCalls() {
				if c.ID != "" {
					calls[c.ID] = c
				}
			}
		case compact.RoleToolResult:
			call := calls[m.ToolCallID]
			name := m.ToolName
			if name == "" && call != nil {
				name = call.Name
			}
			text := m.Text()
			if compact.IsShellTool(name) {
				cmd := ""
				if call != nil {
					cmd = compact.ShellCommand(call)
				}
				if f, ok := shellFailure(i, name, cmd, ShellStatus(m, text), text); ok {
					out = append(out, f)
				}
				continue
			}
			if !m.IsError {
				continue
			}
			target := ""
			if call != nil {
				target = call.FilePath()
				for _, k := range []string{"notebook_path", "pattern", "query", "url"} {
					if target == "" {
						target, _ = jsontext.TopLevelString(call.Arguments, k)
					}
				}
			}
			out = append(out, Failure{Index: i, Tool: name, Target: target, Status: "error", Line: DistinctiveLine(text)})
		case compact.RoleBash:
			run := m.Metadata()
			st := "no result"
			switch {
			case run.Cancelled:
				st = "cancelled"
			case run.ExitCode != nil:
				st = "exit " + strconv.Itoa(*run.ExitCode)
			}
			if f, ok := shellFailure(i, "", strings.TrimSpace(run.Command), st, run.Output); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// shellFailure decides whether a shell command with this status and
// output failed.
func shellFailure(i int, tool, cmd, status, output string) (Failure, bool) {
	f := Failure{Index: i, Tool: tool, Target: cmd, Status: status}
	switch {
	case status == "aborted" || status == "cancelled" || status == "no result":
		return f, false
	case status == "exit 0":
		if Inspection(cmd) || !PrintsErrors(output) {
			return f, false
		}
		f.ExitZero = true
	case status == "exit 1" && NoOutput(output) && Inspection(cmd):
		return f, false // grep and friends say "nothing found" this way
	}
	f.Line = DistinctiveLine(output)
	return f, true
}

// ShellStatus reads how a shell tool call ended: "exit N" from the
// result's details when they carry an exit code, else from the status
// line agents append to the output ("Command exited with code 2"), else
// "aborted", "timed out" or "error" from the error flag and the output,
// else "exit 0".
func ShellStatus(m *compact.Message, text string) string {
	raw := m.Metadata().Details
	if raw == nil {
		raw = m.Extra["details"] // messages built before MessageMeta.Details
	}
	if raw != nil {
		var d struct {
			ExitCode *int `json:"exitCode"`
		}
		if json.Unmarshal(raw, &d) == nil && d.ExitCode != nil {
			if *d.ExitCode == 0 && m.IsError {
				return "error"
			}
			return "exit " + strconv.Itoa(*d.ExitCode)
		}
	}
	tail := text
	if len(tail) > 1024 {
		tail = tail[len(tail)-1024:] // the status line ends the output
	}
	if code, ok := lastExitCode(tail); ok {
		if code == 0 && m.IsError {
			return "error"
		}
		return "exit " + strconv.Itoa(code)
	}
	switch {
	case m.IsError && abortedRe.MatchString(tail):
		return "aborted"
	case m.IsError && timeoutRe.MatchString(tail):
		return "timed out"
	case m.IsError:
		return "error"
	}
	return "exit 0"
}

// lastExitCode returns the code of the last status line of an output
// (exitCodeRe).
//
// A match is a line start, blanks, then words that hold "xit": no
// match has its words before the first line holding "xit", so the
// expression runs from that line's start only, not over the whole
// output (cutting there drops at most blank lines a match began with).
func lastExitCode(text string) (int, bool) {
	i := indexExit(text)
	if i < 0 {
		return 0, false
	}
	text = text[strings.LastIndexByte(text[:i], '\n')+1:]
	all := exitCodeRe.FindAllStringSubmatch(text, -1)
	if len(all) == 0 {
		return 0, false
	}
	code, err := strconv.Atoi(all[len(all)-1][1])
	return code, err == nil
}

// NoOutput reports whether a shell output holds nothing but its status
// line (pi writes "(no output)" for an empty output).
func NoOutput(text string) bool {
	t := text
	if mayHoldExit(t) {
		t = exitCodeRe.ReplaceAllString(t, "")
	}
	t = strings.TrimSpace(t)
	return t == "" || t == "(no output)"
}

// mayHoldExit reports whether s holds "xit" in any case, as every text
// exitCodeRe matches does ("exit", "exited"): the expression, costly on
// long text, runs only on those. Unicode case folding gives none of these
// three letters a non-ASCII form, so comparing bytes is enough.
func mayHoldExit(s string) bool { return indexExit(s) >= 0 }

// indexExit is the index of the first "xit" in s in any case, -1 when
// none.
func indexExit(s string) int {
	for i := 0; i+2 < len(s); i++ {
		// c|0x20 lower-cases an ASCII letter; only 'X' and 'x' give 'x'.
		if s[i]|0x20 == 'x' && s[i+1]|0x20 == 'i' && s[i+2]|0x20 == 't' {
			return i
		}
	}
	return -1
}

// PrintsErrors reports whether an output has a line that compilers,
// linters and test runners print for an error ("x.go:3:1: undefined: y",
// "error TS2304", "--- FAIL:", "panic:", "Traceback", "3 failed", ...).
func PrintsErrors(output string) bool {
	for _, l := range outputLines(output) {
		if strong(l) {
			return true
		}
	}
	return false
}

// errorPattern is a kind of line that compilers, linters and test
// runners print for an error: a cheap test on the line and its first word
// that every match passes, then the expression.
type errorPattern struct {
	may func(line, word string) bool
	re  *regexp.Regexp
}

func prefix(p string) func(string, string) bool {
	return func(l, _ string) bool { return strings.HasPrefix(l, p) }
}

// errorPatterns are the lines that make a command that exited 0 a
// failure, and that are preferred as the distinctive line.
var errorPatterns = []errorPattern{
	// Go, gcc, clang: file:line:col: message
	{func(_, w string) bool { return strings.HasSuffix(w, ":") && strings.Contains(w, ".") }, regexp.MustCompile(`^\S+\.\w+:\d+:\d+: \S`)},
	// tsc: file(line,col): error TS...
	{func(_, w string) bool { return strings.HasSuffix(w, "):") }, regexp.MustCompile(`^\S+\.\w+\(\d+,\d+\): (?i:error|warning)`)},
	// tsc in any layout
	{func(l, _ string) bool { return strings.Contains(l, "error TS") }, regexp.MustCompile(`\berror TS\d+\b`)},
	// rustc, cargo, many CLIs: error: ..., error[E0308]: ...
	{func(l, _ string) bool { return len(l) >= 5 && strings.EqualFold(l[:5], "error") }, regexp.MustCompile(`^(?i:error)(?:\[\w+\])?:\s*\S`)},
	// git, gcc
	{func(l, _ string) bool { return strings.HasPrefix(l, "fatal") || strings.HasPrefix(l, "FATAL") }, regexp.MustCompile(`^(?:fatal|FATAL)(?: error)?:\s*\S`)},
	{prefix("--- FAIL: "), regexp.MustCompile(`^--- FAIL: `)},                         // go test
	{prefix("FAIL"), regexp.MustCompile(`^FAIL(?:ED)?\b`)},                            // go test, pytest, vitest
	{prefix("panic: "), regexp.MustCompile(`^panic: `)},                               // Go
	{prefix("Traceback"), regexp.MustCompile(`^Traceback \(most recent call last\)`)}, // Python
	// TypeError: ..., java.lang.FooException
	{func(_, w string) bool { return strings.Contains(w, "Error") || strings.Contains(w, "Exception") }, regexp.MustCompile(`^[\w.$]*(?:Error|Exception)(?::\s|\s*$)`)},
	{prefix("npm ERR! "), regexp.MustCompile(`^npm ERR! `)}, // npm
	// jest, vitest, mocha: 3 failed
	{func(l, _ string) bool { return strings.Contains(l, "fail") }, regexp.MustCompile(`^(?:Tests?:?\s+)?[1-9]\d* (?:failed|failing)\b`)},
	{prefix("Found "), regexp.MustCompile(`^Found [1-9]\d* errors?\b`)},                                               // biome, tsc --build
	{func(l, _ string) bool { return strings.ContainsAny(l[:min(len(l), 4)], "✖×✗") }, regexp.MustCompile(`^[✖×✗] `)}, // eslint, vitest
}

// strong reports whether a line is one a compiler or test runner prints
// for an error. Only the line's first 256 bytes are read: such lines say
// what they are at their start.
func strong(l string) bool {
	if len(l) > 256 {
		l = l[:256]
	}
	w := l
	if i := strings.IndexByte(l, ' '); i >= 0 {
		w = l[:i]
	}
	for _, p := range errorPatterns {
		if p.may(l, w) && p.re.MatchString(l) {
			return true
		}
	}
	return false
}

// locationRe finds the file:line of compiler and test messages
// ("report_test.go:31: map order differs").
var locationRe = regexp.MustCompile(`[\w/.-]+\.\w+:\d+(?::\d+)?:?\s+\S`)

// errorish reports whether a line holds an error word or a file:line
// location.
func errorish(l string) bool {
	lower := strings.ToLower(l)
	for _, w := range errorWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return colonDigit(l) && locationRe.MatchString(l)
}

// colonDigit reports whether a ':' followed by a digit occurs in l, as in
// every location locationRe finds: most lines have none, and the test is
// much cheaper than the expression.
func colonDigit(l string) bool {
	for i := 0; ; {
		j := strings.IndexByte(l[i:], ':')
		if j < 0 {
			return false
		}
		i += j + 1
		if i < len(l) && l[i] >= '0' && l[i] <= '9' {
			return true
		}
	}
}

// DistinctiveLine picks the line that identifies the error in a failed
// output: the first line a compiler or test runner prints for an error
// (see PrintsErrors), else the first line of at most 300 characters with
// an error word ("error", "fail", "not found", ...) or a file:line
// location, else the first line.
// Lines are trimmed, their blanks collapsed and terminal colour codes
// removed; status lines ("Command exited with code 1") do not count. The
// line is cut to MaxLineRunes runes. It returns "" for an empty output.
func DistinctiveLine(output string) string {
	return distinctiveLine(outputLines(output))
}

// distinctiveLine is DistinctiveLine of an output's lines (outputLines).
func distinctiveLine(lines []string) string {
	pick := ""
	for _, l := range lines {
		if strong(l) && utf8.RuneCountInString(l) >= 8 {
			pick = l
			break
		}
	}
	if pick == "" {
		for _, l := range lines {
			if errorish(l) && utf8.RuneCountInString(l) <= 300 {
				pick = l
				break
			}
		}
	}
	if pick == "" && len(lines) > 0 {
		pick = lines[0]
	}
	return cutRunes(pick, MaxLineRunes)
}

// outputLines returns the meaningful lines of an output, normalized.
func outputLines(output string) []string {
	var out []string
	for l := range strings.SplitSeq(output, "\n") {
		if strings.IndexByte(l, 0x1b) >= 0 {
			l = ansiRe.ReplaceAllString(l, "")
		}
		l = Normalize(l)
		if l == "" || l == "(no output)" || statusLine(l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// statusLine reports whether a line is the status line of a shell
// command ("Command exited with code 1", "Command aborted", "Command timed
// out"); the expressions run only on lines that may be one.
func statusLine(l string) bool {
	switch {
	case strings.Contains(l, "xit") || strings.Contains(l, "XIT"):
		return exitCodeRe.MatchString(l)
	case strings.Contains(l, "bort") || strings.Contains(l, "BORT"):
		return abortedRe.MatchString(l)
	case strings.Contains(l, "imed") || strings.Contains(l, "IMED"):
		return timeoutRe.MatchString(l)
	}
	return false
}

// cutRunes cuts s to at most n runes, at a rune boundary.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimSpace(s[:jsontext.RuneOffset(s, n)])
}

// ErrorLines returns up to n lines that describe the error of a failed
// output: its DistinctiveLine first, then the next lines, in order, that
// a compiler or test runner prints for an error or that hold an error
// word (at most 300 characters each), normalized and cut like it. It
// returns nil for an empty output.
func ErrorLines(output string, n int) []string {
	lines := outputLines(output) // read once for both passes
	first := distinctiveLine(lines)
	if first == "" || n <= 0 {
		return nil
	}
	out := []string{first}
	for _, l := range lines {
		if len(out) >= n {
			break
		}
		l = cutRunes(l, MaxLineRunes)
		if l == first || utf8.RuneCountInString(l) > 300 || !(strong(l) || errorish(l)) {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o == l
		}
		if !dup {
			out = append(out, l)
		}
	}
	return out
}
