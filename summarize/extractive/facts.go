package extractive

import (
	"regexp"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize/facts"
)

// Section titles of the facts the retention benchmark checks (package
// facts finds them for both).
const (
	titleShellFiles  = "Files touched by shell commands"
	titleIdentifiers = "Identifiers"
)

// Sizes of the fact lists.
const (
	// MaxFirstRequestChars bounds the session's first request, quoted
	// word for word in the Goal; a longer one is shortened.
	MaxFirstRequestChars = 8000
	// identifiersPerLine is how many identifiers one list item holds:
	// the budget shrink drops whole items, the least important first.
	identifiersPerLine = 24
	// filesPerLine is how many files one list item of the shell files
	// holds.
	filesPerLine = 12
)

// addShellFiles lists, under s, the files that the shell commands
// touched and that the engine's file lists (known) do not hold: the
// engine appends those lists itself, from the file tools.
func addShellFiles(s *section, cmds []command, known ...[]string) {
	have := make(map[string]bool)
	for _, list := range known {
		for _, p := range list {
			have[p] = true
		}
	}
	var ops compact.FileOps
	for _, c := range cmds {
		facts.AddFileOps(&ops, c.shell.Files)
	}
	read, modified := ops.Lists()
	list := func(label string, paths []string) {
		var parts []string
		flush := func() {
			if len(parts) > 0 {
				s.add("- " + label + ": " + strings.Join(parts, ", ")).short = true
				parts = nil
			}
		}
		for _, p := range paths {
			if !have[p] {
				parts = append(parts, code(p))
			}
			if len(parts) == filesPerLine {
				flush()
			}
		}
		flush()
	}
	list("Changed", modified)
	list("Read", read)
}

// addIdentifiers lists, under s, the identifiers the user and the
// assistant wrote in the messages that the document does not already
// hold, the most important first (facts.ByPriority), a fixed number per
// item. s lists its most important item first, so the budget shrink
// drops the least important ones.
// maxIdentifiers bounds the identifiers considered for the section, the
// most important first: about 20,000 tokens of them, over the largest
// summary budget.
const maxIdentifiers = 4000

func addIdentifiers(d *document, s *section, msgs []*compact.Message) {
	ids := facts.Identifiers(msgs)
	if len(ids) == 0 {
		return
	}
	facts.ByPriority(ids)
	if len(ids) > maxIdentifiers {
		// More than any budget keeps: the shrink would drop them one
		// line at a time, re-rendering the summary each time.
		ids = ids[:maxIdentifiers]
	}
	text := facts.Normalize(d.render())
	var line []string
	flush := func() {
		if len(line) > 0 {
			b := s.add("- " + strings.Join(line, ", "))
			b.short = true
			line = nil
		}
	}
	for _, id := range ids {
		if strings.Contains(id.Text, "`") || facts.Contains(text, id.Text) {
			continue
		}
		line = append(line, code(id.Text))
		if len(line) == identifiersPerLine {
			flush()
		}
	}
	flush()
}

// firstRequest is the Goal item quoting the session's first request word
// for word (up to MaxFirstRequestChars). Only a budget too small for the
// rest of the summary shortens it.
func firstRequest(u userMsg, o Options, label string) *block {
	b := &block{text: bullet(label + shorten(userText(u), MaxFirstRequestChars))}
	b.alt = bullet(label + shorten(userText(u), o.ShortenedChars))
	if b.alt == b.text {
		b.alt, b.short = "", true
	}
	return b
}

var (
	stepMarkerRe = regexp.MustCompile(`^(?:[-*]\s+)?(?:\d+[.)]\s+)?(?:\[[ xX]\]\s+)?`)
	// latestRequestStep is how nextSteps words a step that is the user's
	// latest request.
	latestRequestStep = "Continue with the latest user request: "
	// pathRe finds the file names a step mentions.
	pathRe = regexp.MustCompile("[\\w./~-]*\\w\\.\\w{1,8}\\b")
)

// dropDoneSteps removes from the previous summary's next steps those the
// span shows done, and records them under done: a step that is an item
// the latest todo list marks done, a step that only named files the span
// then modified, and a step that was the user's latest request when the
// assistant has answered since.
func dropDoneSteps(next, done *section, f *found) {
	if len(next.prev) == 0 {
		return
	}
	doneTodos := make(map[string]bool)
	for _, t := range todosIn(f, todoDone) {
		doneTodos[strings.ToLower(t)] = true
	}
	modified := make(map[string]bool)
	for _, t := range f.modified {
		modified[t.path] = true
		modified[t.path[strings.LastIndexByte(t.path, '/')+1:]] = true
	}
	for _, p := range shellChanged(f) {
		modified[p] = true
		modified[p[strings.LastIndexByte(p, '/')+1:]] = true
	}
	var keep []*block
	for _, b := range next.prev {
		if b.pinned || !strings.HasPrefix(b.text, "- ") && !numbered(b.text) {
			keep = append(keep, b)
			continue
		}
		step := strings.TrimSpace(stepMarkerRe.ReplaceAllString(oneLineText(b.text), ""))
		step = strings.TrimSuffix(step, " (in progress)")
		isDone := doneTodos[strings.ToLower(step)]
		if !isDone && strings.HasPrefix(step, latestRequestStep) {
			isDone = f.lastTextIdx >= 0
		}
		if !isDone {
			paths := pathRe.FindAllString(step, -1)
			isDone = len(paths) > 0
			for _, p := range paths {
				isDone = isDone && modified[strings.TrimPrefix(p, "./")]
			}
		}
		if !isDone {
			keep = append(keep, b)
			continue
		}
		done.add(bullet("Next step of the previous summary, done since: " + strings.TrimPrefix(strings.TrimPrefix(b.text, "- "), latestRequestStep)))
	}
	next.prev = keep
}

// shellChanged is the files the span's shell commands changed.
func shellChanged(f *found) []string {
	var ops compact.FileOps
	for _, c := range f.commands {
		if c.ok {
			facts.AddFileOps(&ops, c.shell.Files)
		}
	}
	_, modified := ops.Lists()
	return modified
}
