package extractive

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
	"github.com/compactkit/compact/summarize/facts"
)

// found is what one pass over the messages finds.
type found struct {
	users    []userMsg
	others   []otherMsg
	commands []command
	failures []*failure
	modified []*fileTouch
	read     []string

	// lastText is the text of the last assistant message that had any,
	// at index lastTextIdx (-1 when none).
	lastText    string
	lastTextIdx int
	// lastCall is the last tool call, at lastCallIdx (-1 when none).
	lastCall    *callInfo
	lastCallIdx int
	// lastUserIdx is the index of the last user message (-1 when none).
	lastUserIdx int

	// todos is the latest todo list, when hasTodos.
	todos    []todoItem
	hasTodos bool

	// decisions are the decision sentences of every assistant text, in
	// order; decisionIdx holds the index of each one's message.
	decisions   []string
	decisionIdx []int
}

type userMsg struct {
	idx    int
	text   string
	images int
	// asked is the assistant's text the message answers: the last one
	// between the previous user message and this one, when it asks a
	// question ("" otherwise).
	asked string
	// worked reports whether the assistant called a tool after the
	// message, before the next user message: the message set work going.
	worked bool
}

type otherMsg struct {
	label string
	text  string
}

// command is a shell command and how it ended.
type command struct {
	idx    int
	text   string
	status string // "exit 0", "exit 2", "aborted", "timed out", "cancelled", "error", "no result"
	ok     bool
	byUser bool
	// shell is the command line as the shell reads it: its file
	// operations and whether it only reads. Commands with the same line
	// share it (commandCache).
	shell *facts.Shell
}

// failure is an error seen in the conversation.
type failure struct {
	idx      int
	tool     string // tool name, "" for a user's shell command, "model" for a failed model call
	target   string // command or path, may be empty
	status   string // exit status for commands
	text     string // the error, shortened to a line
	key      string
	resolved bool
}

type fileTouch struct {
	path          string
	writes, edits int
	// changes are what the edits changed, one line each (editChange),
	// oldest first, at most maxChangesPerFile.
	changes []string
}

// maxChangesPerFile bounds the edits described per file.
const maxChangesPerFile = 3

// setStatus records how the call ended; a nil call (a result without
// its call) has nowhere to record it.
func (ci *callInfo) setStatus(s string) {
	if ci != nil {
		ci.status = s
	}
}

type callInfo struct {
	call   *compact.ToolCall
	idx    int
	args   json.RawMessage // the call's arguments, read with argString
	bash   bool
	status string
	done   bool // a result was seen
	todo   int  // index into todo candidates, -1 when not a todo call
}

type todoCandidate struct {
	items  []todoItem
	failed bool
}

// extract walks the messages once, oldest first.
func extract(msgs []*compact.Message) *found {
	f := &found{lastTextIdx: -1, lastCallIdx: -1, lastUserIdx: -1}
	// The lists below are sized from a count of the calls first: a long
	// history holds hundreds of thousands, and growing the lists left as
	// much again behind. infos holds the calls' records, one allocation
	// for all of them.
	nCalls, nShellCalls, nBash := 0, 0, 0
	for _, m := range msgs {
		if m == nil {
			continue
		}
		switch m.Role {
		case compact.RoleAssistant:
			for k := range m.Content {
				if call := m.Content[k].ToolCall; m.Content[k].Type == compact.PartToolCall && call != nil {
					nCalls++
					if compact.IsShellTool(call.Name) {
						nShellCalls++
					}
				}
			}
		case compact.RoleBash:
			nBash++
		}
	}
	infos := make([]callInfo, 0, nCalls)
	f.commands = make([]command, 0, nShellCalls+nBash)
	calls := make(map[string]*callInfo)
	order := make([]*callInfo, 0, nCalls)
	var todos []todoCandidate
	successes := make(map[string]int)
	toolOK := make([]toolSuccess, 0, nCalls-nShellCalls)
	files := newFileRecorder()
	cmds := make(commandCache)
	var refs refState
	// ask is the assistant's last text since the last user message.
	ask := ""

	for i, m := range msgs {
		if m == nil {
			continue
		}
		switch m.Role {
		case compact.RoleUser:
			// Claude Code's reminders in the user's text are not the
			// user's words (readers split them out; the proxy sees them).
			text := strings.TrimSpace(normalizeNewlines(compact.WithoutReminders(messageText(m))))
			images := 0
			for _, p := range m.Content {
				if p.Type == compact.PartImage {
					images++
				}
			}
			if (text == "" || compact.IsInterruptionNotice(text)) && images == 0 {
				continue
			}
			u := userMsg{idx: i, text: refs.resolve(text), images: images}
			if openQuestion(ask) {
				u.asked = ask
			}
			f.users = append(f.users, u)
			f.lastUserIdx = i
			ask = ""

		case compact.RoleAssistant:
			switch m.StopReason {
			case compact.StopError:
				msg := strings.TrimSpace(m.Metadata().ErrorMessage)
				if msg == "" {
					msg = "the model call failed without a message"
				}
				f.failures = append(f.failures, &failure{idx: i, tool: "model", text: firstLines(msg, 1, 300), key: "model"})
			case compact.StopAborted:
			default:
				successes["model"] = i
			}
			if text := strings.TrimSpace(normalizeNewlines(messageText(m))); text != "" {
				f.lastText, f.lastTextIdx = text, i
				ask = text
				refs.note(text)
				for _, d := range matchSentences(text, decisionWords) {
					if isDecision(d) {
						f.decisions = append(f.decisions, d)
						f.decisionIdx = append(f.decisionIdx, i)
					}
				}
			}
			for k := range m.Content {
				// m.ToolCalls() without its slice.
				call := m.Content[k].ToolCall
				if m.Content[k].Type != compact.PartToolCall || call == nil {
					continue
				}
				var ci *callInfo
				if len(infos) < cap(infos) {
					infos = append(infos, callInfo{call: call, idx: i, todo: -1})
					ci = &infos[len(infos)-1]
				} else {
					ci = &callInfo{call: call, idx: i, todo: -1}
				}
				ci.args = call.Arguments
				ci.bash = compact.IsShellTool(call.Name)
				if isTodoTool(call.Name) {
					if items, ok := parseTodos(call.Arguments); ok {
						ci.todo = len(todos)
						todos = append(todos, todoCandidate{items: items})
					}
				}
				if call.ID != "" {
					calls[call.ID] = ci
				}
				order = append(order, ci)
				f.lastCall, f.lastCallIdx = ci, i
				if n := len(f.users); n > 0 {
					f.users[n-1].worked = true
				}
				if p := call.FilePath(); p != "" {
					refs.file = p
				}
			}

		case compact.RoleToolResult:
			ci := calls[m.ToolCallID]
			name := m.ToolName
			if name == "" && ci != nil {
				name = ci.call.Name
			}
			text := normalizeNewlines(messageText(m))
			if ci != nil {
				if ci.done {
					continue // a second result for the same call
				}
				ci.done = true
				if ci.todo >= 0 && m.IsError {
					todos[ci.todo].failed = true
				}
			}
			idx := i
			if ci != nil {
				idx = ci.idx
			}
			if compact.IsShellTool(name) || (ci != nil && ci.bash) {
				cmd := ""
				if ci != nil {
					cmd = compact.ShellCommand(ci.call)
				}
				rc := cmds.read(cmd)
				sh := &rc.shell
				status := facts.ShellStatus(m, text)
				ok := status == "exit 0"
				if ci != nil {
					ci.status = status
				}
				key := rc.bashKey
				switch {
				case ok && !sh.ReadOnly && facts.PrintsErrors(text):
					// Exit 0, but the compiler or the tests printed errors
					// (a pipe into tail or grep hides the status).
					status, ok = "exit 0, errors printed", false
					ci.setStatus(status)
					f.failures = append(f.failures, &failure{idx: idx, tool: name, target: cmd, status: status,
						text: failureText(text), key: key})
				case ok:
					successes[key] = i
				case status == "aborted" || status == "cancelled":
				case status == "exit 1" && sh.ReadOnly && facts.NoOutput(text):
					// grep and friends report "nothing found" this way.
				default:
					f.failures = append(f.failures, &failure{idx: idx, tool: name, target: cmd, status: status,
						text: failureText(text), key: key})
				}
				f.commands = append(f.commands, command{idx: idx, text: cmd, status: status, ok: ok, shell: sh})
				continue
			}
			if m.IsError {
				target := callTarget(ci)
				if ci != nil {
					ci.status = "error"
				}
				f.failures = append(f.failures, &failure{idx: idx, tool: name, target: target, text: failureText(text),
					key: name + "\x00" + target})
				continue
			}
			toolOK = append(toolOK, toolSuccess{name: name, ci: ci, idx: i})
			if ci != nil {
				ci.status = "ok"
				files.record(ci.call, f)
			}

		case compact.RoleBash:
			run := m.Metadata()
			status, ok := "no result", false
			switch {
			case run.Cancelled:
				status = "cancelled"
			case run.ExitCode != nil:
				status = "exit " + strconv.Itoa(*run.ExitCode)
				ok = *run.ExitCode == 0
			}
			cmd := strings.TrimSpace(run.Command)
			rc := cmds.read(cmd)
			sh, key := &rc.shell, rc.userKey
			if ok && !sh.ReadOnly && facts.PrintsErrors(run.Output) {
				status, ok = "exit 0, errors printed", false
			}
			f.commands = append(f.commands, command{idx: i, text: cmd, status: status, ok: ok, byUser: true, shell: sh})
			if ok {
				successes[key] = i
			} else if run.ExitCode != nil {
				f.failures = append(f.failures, &failure{idx: i, target: cmd, status: status,
					text: failureText(normalizeNewlines(run.Output)), key: key})
			}

		case compact.RoleBranchSummary, compact.RoleCompactionSummary:
			if text := strings.TrimSpace(normalizeNewlines(messageText(m))); text != "" {
				label := "Summary of an abandoned branch"
				if m.Role == compact.RoleCompactionSummary {
					label = "Earlier compaction summary"
				}
				f.others = append(f.others, otherMsg{label: label, text: text})
			}

		case compact.RoleCustom:
			if compact.IsHarnessNote(m) {
				// The agent's own boilerplate: neither the user's words nor
				// worth a summary's room.
				continue
			}
			if text := strings.TrimSpace(normalizeNewlines(messageText(m))); text != "" {
				label := "Injected message"
				if ct := m.Metadata().CustomType; ct != "" {
					label += " (" + ct + ")"
				}
				f.others = append(f.others, otherMsg{label: label, text: text})
			}
		}
	}

	// Bash calls whose result never came still count as commands run.
	for _, ci := range order {
		if ci.bash && !ci.done {
			ci.status = "no result"
			cmd := compact.ShellCommand(ci.call)
			f.commands = append(f.commands, command{idx: ci.idx, text: cmd, status: "no result", shell: &cmds.read(cmd).shell})
		}
	}
	sort.SliceStable(f.commands, func(a, b int) bool { return f.commands[a].idx < f.commands[b].idx })

	addToolSuccesses(successes, toolOK, f.failures)
	for _, fl := range f.failures {
		if s, ok := successes[fl.key]; ok && s > fl.idx {
			fl.resolved = true
		}
	}
	sort.SliceStable(f.failures, func(a, b int) bool { return f.failures[a].idx < f.failures[b].idx })

	for i := len(todos) - 1; i >= 0; i-- {
		if !todos[i].failed {
			f.todos, f.hasTodos = todos[i].items, true
			break
		}
	}
	return f
}

// toolSuccess is a successful call of a tool other than a shell, at the
// index of its result.
type toolSuccess struct {
	name string
	ci   *callInfo
	idx  int
}

// callTarget is the path, pattern or URL a call worked on, "" when unknown.
func callTarget(ci *callInfo) string {
	if ci == nil {
		return ""
	}
	return argString(ci.args, "path", "file_path", "filePath", "notebook_path", "pattern", "query", "url")
}

// addToolSuccesses records in successes, under the key of a failure of
// the same tool on the same target, the index of each successful tool
// call: the newest success of a key is what clears a failure before it.
// Reading a call's target costs a pass over its arguments (those of an
// edit or a write hold whole files), so only the calls of tools that
// failed somewhere are read.
func addToolSuccesses(successes map[string]int, calls []toolSuccess, failures []*failure) {
	if len(failures) == 0 {
		return
	}
	// failed tells, for each tool name, whether a failure's key starts
	// with the name and the separator: only then can a key match.
	failed := make(map[string]bool)
	for _, c := range calls {
		if _, seen := failed[c.name]; seen {
			continue
		}
		prefix := c.name + "\x00"
		failed[c.name] = false
		for _, fl := range failures {
			if strings.HasPrefix(fl.key, prefix) {
				failed[c.name] = true
				break
			}
		}
	}
	for _, c := range calls {
		if !failed[c.name] {
			continue
		}
		key := c.name + "\x00" + callTarget(c.ci)
		if s, ok := successes[key]; !ok || c.idx > s {
			successes[key] = c.idx
		}
	}
}

// commandCache holds the reading of each distinct command line of one
// summary: agents run the same commands (go test, git status) again and
// again, and the shell parser is the costliest step of reading one. The
// Shell values are shared, so their Files are only read.
type commandCache map[string]*readCommand

// readCommand is what a summary reads of a command line.
type readCommand struct {
	shell facts.Shell
	// bashKey and userKey are the keys (commandKey) of the line's
	// successes and failures as a tool call and as a command the user
	// ran, made once per distinct line rather than once per run.
	bashKey, userKey string
}

// read returns what a summary reads of the command line cmd, parsed once
// per distinct line.
func (c commandCache) read(cmd string) *readCommand {
	r, ok := c[cmd]
	if !ok {
		key := commandKey(cmd)
		r = &readCommand{shell: facts.ParseShell(cmd), bashKey: "bash\x00" + key, userKey: "\x00user\x00" + key}
		c[cmd] = r
	}
	return r
}

// messageText is m.Text() without the copy Text makes when the message
// has a single text part, the usual case: tool outputs can be large.
func messageText(m *compact.Message) string {
	if m.Role != compact.RoleBash {
		n, at := 0, 0
		for i := range m.Content {
			if m.Content[i].Type == compact.PartText {
				n, at = n+1, i
			}
		}
		switch n {
		case 0:
			return ""
		case 1:
			return m.Content[at].Text
		}
	}
	return m.Text()
}

// fileRecorder notes the files successful tool calls read or changed,
// using the root package's knowledge of tool names and arguments
// (compact.FileOps). It reuses its maps and buffers from call to call.
type fileRecorder struct {
	touched  map[string]*fileTouch
	readSeen map[string]bool
	ops      compact.FileOps
	part     [1]compact.Part
	msg      compact.Message
	keys     []string
}

func newFileRecorder() *fileRecorder {
	return &fileRecorder{touched: make(map[string]*fileTouch), readSeen: make(map[string]bool)}
}

// record adds the files of one call to f.modified and f.read.
func (r *fileRecorder) record(call *compact.ToolCall, f *found) {
	clear(r.ops.Read)
	clear(r.ops.Written)
	clear(r.ops.Edited)
	r.part[0] = compact.Part{Type: compact.PartToolCall, ToolCall: call}
	r.msg = compact.Message{Role: compact.RoleAssistant, Content: r.part[:]}
	r.ops.AddMessage(&r.msg)
	touch := func(set map[string]bool, write bool) {
		for _, p := range r.sortedKeys(set) {
			t := r.touched[p]
			if t == nil {
				t = &fileTouch{path: p}
				r.touched[p] = t
				f.modified = append(f.modified, t)
			}
			if write {
				t.writes++
			} else {
				t.edits++
			}
		}
	}
	touch(r.ops.Written, true)
	touch(r.ops.Edited, false)
	if len(r.ops.Edited) == 1 {
		for p := range r.ops.Edited {
			if t := r.touched[p]; len(t.changes) < maxChangesPerFile {
				if c, ok := editChange(call.Arguments); ok {
					t.changes = append(t.changes, c)
				}
			}
		}
	}
	for _, p := range r.sortedKeys(r.ops.Read) {
		if !r.readSeen[p] {
			r.readSeen[p] = true
			f.read = append(f.read, p)
		}
	}
}

// sortedKeys returns the keys of m, sorted, in a buffer the next call
// overwrites.
func (r *fileRecorder) sortedKeys(m map[string]bool) []string {
	r.keys = r.keys[:0]
	for k := range m {
		r.keys = append(r.keys, k)
	}
	sort.Strings(r.keys)
	return r.keys
}

// failureText is how a failure is quoted: the output's distinctive line
// (the one the retention benchmark looks for) and up to two more error
// lines, joined by " ⏎ ", never from a reminder Claude Code appended.
func failureText(output string) string {
	lines := facts.ErrorLines(compact.WithoutReminders(output), 3)
	if len(lines) == 0 {
		return "(no output)"
	}
	return strings.Join(lines, " ⏎ ")
}

// commandKey is what makes two shell commands "the same" when deciding
// whether a later success cleared a failure: the command before its first
// pipe, without "2>&1", with blanks collapsed. So a failing "make test"
// counts as fixed by a later "make test 2>&1 | tail -5" that exits 0.
func commandKey(cmd string) string {
	var quote byte
	end := len(cmd)
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\\':
			i++
		case c == '|':
			if i+1 < len(cmd) && cmd[i+1] == '|' {
				i++
				continue
			}
			end = i
		}
		if end != len(cmd) {
			break
		}
	}
	fields := strings.Fields(cmd[:end])
	out := fields[:0]
	for _, f := range fields {
		if f != "2>&1" {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

// editChange describes in one line what an edit call changed, from the
// old and new text its arguments hold (oldText/newText as pi writes them,
// old_string/new_string as Claude Code does, old_str/new_str as the
// str_replace tools do): the first line of each that differs, cut to 80
// characters ("`a := 1` replaced by `a := 2`"), or the line added or
// removed.
func editChange(args json.RawMessage) (string, bool) {
	for _, k := range [][2]string{{"oldText", "newText"}, {"old_string", "new_string"}, {"old_str", "new_str"}} {
		o, ok1 := jsontext.TopLevelString(args, k[0])
		n, ok2 := jsontext.TopLevelString(args, k[1])
		if !ok1 || !ok2 {
			continue
		}
		ol, nl := strings.Split(o, "\n"), strings.Split(n, "\n")
		i := 0
		for i < len(ol) && i < len(nl) && ol[i] == nl[i] {
			i++
		}
		line := func(ls []string) string {
			if i < len(ls) {
				if t := strings.TrimSpace(ls[i]); t != "" {
					return code(cutRunes(t, 80))
				}
			}
			return ""
		}
		switch a, b := line(ol), line(nl); {
		case a == "" && b == "":
			return "", false
		case a == "":
			return "added " + b, true
		case b == "":
			return "removed " + a, true
		default:
			return a + " replaced by " + b, true
		}
	}
	return "", false
}
