package extractive

import (
	"slices"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
)

// Section titles of a history summary.
const (
	titleGoal        = "Goal"
	titleConstraints = "Constraints & Preferences"
	titleProgress    = "Progress"
	titleDone        = "Done"
	titleActive      = "In Progress"
	titleBlocked     = "Blocked"
	titleDecisions   = "Key Decisions"
	titleNext        = "Next Steps"
	titleCritical    = "Critical Context"
	titleCommands    = "Commands run"
	titleResolved    = "Errors since resolved"
	titleUsers       = "User messages (newest first)"
	titleOthers      = "Other messages"
	titleEarlier     = "Earlier summary"
	titleRoles       = "Who does what"
)

// Section titles of a turn-prefix summary.
const (
	titleTurnRequest = "Turn Request"
	titleTurnWork    = "Work So Far in This Turn"
	titleTurnContext = "Context for the Kept Messages"
)

// buildHistory writes the summary of the history before the kept part,
// merging the previous summary.
func buildHistory(f *found, req *compact.SummaryRequest, o Options) *document {
	goal := newSection(2, titleGoal, true)
	constraints := newSection(2, titleConstraints, true)
	progress := newSection(2, titleProgress, true)
	done := progress.sub(3, titleDone, true)
	active := progress.sub(3, titleActive, true)
	blocked := progress.sub(3, titleBlocked, true)
	decisions := newSection(2, titleDecisions, true)
	next := newSection(2, titleNext, true)
	critical := newSection(2, titleCritical, true)
	commands := critical.sub(3, titleCommands, false)
	resolved := critical.sub(3, titleResolved, false)
	roles := critical.sub(3, titleRoles, false)
	users := critical.sub(3, titleUsers, false)
	users.newestFirst = true
	shellFiles := critical.sub(3, titleShellFiles, false)
	idents := critical.sub(3, titleIdentifiers, false)
	idents.newestFirst = true
	others := critical.sub(3, titleOthers, false)
	earlier := critical.sub(3, titleEarlier, false)
	d := &document{sections: []*section{goal, constraints, progress, decisions, next, critical}}
	h := decisionHistory(f)

	// Goal: where the span started and the latest request. The session's
	// first request is quoted word for word, marked when a later message
	// replaced it; the plan in force is named.
	if req.FirstRequest != nil {
		// The session's first request, summarized by an earlier
		// compaction, quoted again from the stored message.
		if t := req.FirstRequest.Text(); t != "" && !strings.Contains(previousSummary(req), t) {
			goal.blocks = append(goal.blocks, firstRequest(userMsg{text: t}, o, "Initially: "))
		}
	}
	if n := len(f.users); n > 0 {
		first := f.users[0]
		mark := ""
		if h.superseded(0) {
			mark = " (superseded by a later message, see Key Decisions)"
		}
		// With a previous summary the session's request is in its Goal
		// (the span's first message is quoted with the others).
		if previousSummary(req) == "" {
			goal.blocks = append(goal.blocks, firstRequest(first, o, "Initially"+mark+": "))
		}
		// The latest message that says something (not "ok"), and the
		// latest that set work going when that is an earlier one.
		said, task := latestSaid(f.users), latestTask(f.users)
		last := f.users[said]
		latest := "Most recently: "
		cur := h.current()
		if cur != 0 && cur != said {
			goal.add(bullet("Now, replacing the request above: " + requestText(f.users[cur], o.ShortenedChars)))
		} else if cur != 0 {
			latest = "Most recently, replacing the request above: "
		}
		if task > 0 && task != said && task != cur {
			goal.add(bullet(latestTaskLabel + requestText(f.users[task], o.ShortenedChars)))
		}
		if (n > 1 && last.text != first.text) || previousSummary(req) != "" {
			goal.add(bullet(latest + requestText(last, o.ShortenedChars)))
		}
	}

	rules := constraintSentences(h.inForce(f.users), o.MaxItems)
	for _, s := range incidents(h.inForce(f.users), o.MaxItems) {
		// A story of a past mishap, whole: the lesson is in it.
		rules = slices.DeleteFunc(rules, func(r string) bool { return strings.Contains(s, r) })
		rules = append(rules, "Learned the hard way: "+s)
	}
	for _, s := range rules {
		constraints.add("- " + s)
	}

	// Done: commands first, so that the budget shrink, which takes the
	// oldest items first, reaches the file summary last.
	addCommandList(done, successfulActions(f.commands), o.MaxCommands, "earlier successful commands", func(c command) string {
		return "- Ran " + code(oneLine(c.text)) + " (" + c.status + ")"
	})
	for _, t := range todosIn(f, todoDone) {
		done.add("- [x] " + t)
	}
	if len(f.modified) > 0 {
		done.add("- " + modifiedLine(f.modified))
		for _, l := range changeLines(f.modified) {
			done.add(l).short = true
		}
	}
	if n := len(req.ModifiedFiles); n > 0 {
		done.add("- " + plural(n, "file", "files") + " modified so far in the session (listed at the end)")
	}

	// In Progress.
	addWhereWorkStands(active, f, o)

	// Blocked: failures nothing later cleared.
	open, fixed := splitFailures(f.failures)
	addFailures(blocked, open, o.MaxErrors, "earlier unresolved errors", "", "")
	addFailures(resolved, fixed, o.MaxErrors, "earlier resolved errors", "", " (later succeeded)")

	for _, line := range h.decisionLines(f, o, "- ") {
		decisions.add(line)
	}

	for _, s := range nextSteps(f, o) {
		next.add("- " + s)
	}
	for _, s := range queuedItems(h.inForce(f.users), 3) {
		if !slices.ContainsFunc(next.blocks, func(b *block) bool { return strings.Contains(b.text, s) }) {
			next.add("- Queued by the user for later: " + s)
		}
	}

	// Critical Context.
	if in := strings.TrimSpace(req.Instructions); in != "" {
		b := critical.add(bullet("Requested focus: " + normalizeNewlines(in)))
		b.short = true
	}
	addCommandList(commands, f.commands, o.MaxCommands, "earlier commands", func(c command) string {
		return "- " + code(oneLine(c.text)) + " (" + statusText(c) + ")"
	})
	for _, l := range roleLines(h.inForce(f.users), o.MaxItems, h.handovers(f.users)) {
		roles.add("- " + l)
	}
	users.blocks = userBlocks(h.marked(f.users), o, focusWords(req.Instructions))
	addShellFiles(shellFiles, f.commands, req.ReadFiles, req.ModifiedFiles)
	for _, m := range f.others {
		b := others.add(bullet(m.label + ": " + shorten(m.text, o.MaxTextChars)))
		b.alt = bullet(m.label + ": " + shorten(m.text, o.ShortenedChars))
	}

	if prev := previousSummary(req); prev != "" {
		// The turn an earlier compaction split is history now: its
		// request joins the user messages, its work the Done items.
		prev, prefix := compact.SplitTurnPrefix(prev)
		mergePrevious(prev, mergeTarget{
			byKey: map[string]*section{
				keyGoal: goal, keyConstraints: constraints, keyProgress: progress, keyDone: done,
				keyActive: active, keyBlocked: blocked, keyDecisions: decisions, keyNext: next,
				keyCritical: critical, keyCommands: commands, keyResolved: resolved, keyUsers: users,
				keyOthers: others, keyEarlier: earlier, keyShellFiles: shellFiles, keyIdentifiers: idents, keyRoles: roles,
			},
			critical: critical,
			earlier:  earlier,
		})
		mergeTurnPrefix(prefix, users, done)
		// The previous summary's view of the latest request and of the
		// work under way is out of date once the span adds its own.
		goal.prev = slices.DeleteFunc(goal.prev, staleGoalLine)
		if len(active.blocks) > 0 {
			active.prev = slices.DeleteFunc(active.prev, staleActiveLine)
		}
		dropDoneSteps(next, done, f)
		// A long turn compacted before has its request only in the
		// earlier summary's turn-prefix part: make it the goal when the
		// span itself holds no user message.
		if len(goal.blocks) == 0 && len(goal.prev) == 0 {
			for _, line := range turnRequestLines(prefix) {
				goal.add(line)
			}
		}
		d.finish()
	}
	// Last, so that only the identifiers no other section quotes are
	// listed.
	addIdentifiers(d, idents, req.Messages)
	return d
}

// staleGoalLine reports whether a Goal item of a previous summary speaks
// of its latest request, which the new span's replaces.
func staleGoalLine(b *block) bool {
	for _, p := range []string{"- Most recently", "- First request since the previous summary", "- Now, replacing", "- " + latestTaskLabel} {
		if strings.HasPrefix(b.text, p) {
			return true
		}
	}
	return false
}

// staleActiveLine reports whether an In Progress item of a previous
// summary is where the work stood then, as this package words it (the
// last statement, the last action), which the span's own replaces.
func staleActiveLine(b *block) bool {
	return strings.HasPrefix(b.text, "- Last assistant statement") || strings.HasPrefix(b.text, "- Last action: ")
}

// mergeTurnPrefix merges the summary of a turn an earlier compaction split
// (the part after compact.TurnPrefixIntro): the quotes of its request
// join the user messages (before the history's, being newer), its work
// the Done items. What it said of
// the kept messages is left out: those messages are in the span now.
func mergeTurnPrefix(prefix string, users, done *section) {
	for _, p := range parsePrevious(prefix) {
		switch compact.SummaryHeadingKey(p.title) {
		case compact.SummaryHeadingKey(titleTurnRequest):
			// Newer than every message of the history before it.
			users.prev = append(slices.Clone(p.blocks), users.prev...)
		case compact.SummaryHeadingKey(titleTurnWork):
			for _, b := range p.blocks {
				if strings.TrimSpace(b.text) != "- (none)" {
					done.prev = append(done.prev, b)
				}
			}
		}
	}
}

// turnRequestLines returns the lines under a "## Turn Request" heading of
// a previous summary (the request of a turn that was cut), nil if none.
func turnRequestLines(prev string) []string {
	var out []string
	in := false
	for line := range strings.SplitSeq(prev, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			if in {
				break
			}
			in = strings.EqualFold(strings.TrimSpace(strings.TrimLeft(t, "#")), titleTurnRequest)
			continue
		}
		if in && t != "" {
			out = append(out, line)
		}
	}
	return out
}

// buildTurnPrefix writes the summary of the start of a turn that was cut
// in two.
func buildTurnPrefix(f *found, req *compact.SummaryRequest, o Options) *document {
	request := newSection(2, titleTurnRequest, true)
	request.newestFirst = true
	work := newSection(2, titleTurnWork, true)
	kept := newSection(2, titleTurnContext, true)
	d := &document{sections: []*section{request, work, kept}}
	h := decisionHistory(f)

	request.blocks = userBlocks(h.marked(f.users), o, focusWords(req.Instructions))
	if i := latestSaid(f.users); i >= 0 && isShortReply(f.users[i]) {
		// A short reply is the request only with the question it answers.
		request.add(bullet("In reply to the assistant: «" + replyContext(f.users[i].asked) + "»"))
	}
	if len(f.users) == 0 {
		for _, c := range f.commands {
			if c.byUser {
				request.add("- The turn began with the user running " + code(oneLine(c.text)) + " (" + c.status + ")")
				break
			}
		}
		for _, m := range f.others {
			b := request.add(bullet(m.label + ": " + shorten(m.text, o.MaxTextChars)))
			b.alt = bullet(m.label + ": " + shorten(m.text, o.ShortenedChars))
		}
	}

	addCommandList(work, f.commands, o.MaxCommands, "earlier commands", func(c command) string {
		return "- Ran " + code(oneLine(c.text)) + " (" + statusText(c) + ")"
	})
	open, fixed := splitFailures(f.failures)
	addFailures(work, fixed, o.MaxErrors, "earlier resolved errors", "Failed: ", " (later succeeded)")
	addFailures(work, open, o.MaxErrors, "earlier unresolved errors", "Failed: ", "")
	if len(f.modified) > 0 {
		work.add("- " + modifiedLine(f.modified))
		for _, l := range changeLines(f.modified) {
			work.add(l).short = true
		}
	}
	if len(f.read) > 0 {
		work.add("- " + readLine(f.read))
	}
	for _, t := range todosIn(f, todoDone) {
		work.add("- [x] " + t)
	}
	addWhereWorkStands(work, f, o)

	if in := strings.TrimSpace(req.Instructions); in != "" {
		b := kept.add(bullet("Requested focus: " + normalizeNewlines(in)))
		b.short = true
	}
	for _, line := range h.decisionLines(f, o, "- Decided: ") {
		kept.add(line)
	}
	for _, s := range nextSteps(f, o) {
		kept.add("- Next: " + s)
	}
	shellFiles := kept.sub(3, titleShellFiles, false)
	addShellFiles(shellFiles, f.commands, req.ReadFiles, req.ModifiedFiles)
	idents := kept.sub(3, titleIdentifiers, false)
	idents.newestFirst = true
	if prev := previousSummary(req); prev != "" {
		earlier := kept.sub(3, titleEarlier, false)
		earlier.blocks = flattenPrevious(prev)
	}
	addIdentifiers(d, idents, req.Messages)
	return d
}

// previousSummary is the request's previous summary without file lists:
// the engine strips them before the call and appends fresh ones after it,
// so any left in would only be repeated.
func previousSummary(req *compact.SummaryRequest) string {
	if strings.TrimSpace(req.PreviousSummary) == "" {
		return ""
	}
	return strings.TrimSpace(compact.StripFileLists(req.PreviousSummary))
}

// userText is a user message's text with a note of its images.
func userText(u userMsg) string {
	if u.images == 0 {
		return u.text
	}
	note := "[" + plural(u.images, "image", "images") + " not shown]"
	if u.text == "" {
		return note
	}
	return u.text + " " + note
}

// userBlocks quotes the user messages newest first. Messages are taken in
// order of priority (those mentioning a focus word first, then those that
// state a rule or change a plan, then the others, newest first within
// each); each is quoted verbatim if it fits the remaining budget, else
// shortened if that fits, else left out. Runs of left-out messages are
// replaced by a line that counts them.
func userBlocks(users []userMsg, o Options, focus []string) []*block {
	const (
		verbatim = iota
		shortened
		leftOut
	)
	n := len(users)
	if n == 0 {
		return nil
	}
	// The budget goes first to the messages that mention the focus, then
	// to those that state a rule or change a plan, then to the others,
	// newest first within each.
	ranks := make([]uint8, n)
	for i, u := range users {
		switch {
		case len(focus) > 0 && mentions(u.text, focus):
			ranks[i] = 0
		case statesRule(u.text):
			ranks[i] = 1
		default:
			ranks[i] = 2
		}
	}
	order := make([]int, 0, n)
	for r := uint8(0); r <= 2; r++ {
		for i := n - 1; i >= 0; i-- {
			if ranks[i] == r {
				order = append(order, i)
			}
		}
	}
	choice := make([]int, n)
	full := make([]string, n)
	short := make([]string, n)
	remaining := o.UserBudgetTokens
	for _, i := range order {
		// The items are weighed first and built only when chosen: in a
		// long history most are left out.
		text := userText(users[i])
		st := shorten(text, o.ShortenedChars)
		if t := unitsTokens(bulletUnits(text)); t <= remaining {
			choice[i], remaining = verbatim, remaining-t
			full[i], short[i] = bullet(text), bullet(st)
		} else if t := unitsTokens(bulletUnits(st)); t <= remaining {
			choice[i], remaining = shortened, remaining-t
			short[i] = bullet(st)
		} else {
			choice[i] = leftOut
		}
	}
	var out []*block
	run := 0
	flush := func(oldest bool) {
		if run == 0 {
			return
		}
		what := plural(run, "user message", "user messages")
		if oldest {
			what = plural(run, "older user message", "older user messages")
		}
		out = append(out, &block{text: "- [… " + what + " left out entirely]", pinned: true, short: true})
		run = 0
	}
	for i := n - 1; i >= 0; i-- {
		switch choice[i] {
		case leftOut:
			run++
			continue
		case verbatim:
			flush(false)
			b := &block{text: full[i]}
			if short[i] != full[i] {
				b.alt = short[i]
			} else {
				b.short = true
			}
			out = append(out, b)
		case shortened:
			flush(false)
			out = append(out, &block{text: short[i], short: true})
		}
	}
	flush(true)
	return out
}

func mentions(text string, words []string) bool {
	lower := strings.ToLower(text)
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// constraintSentences returns the newest distinct user sentences that
// state a constraint or preference, oldest first. A short one that
// points back ("let's not do that again") comes with the sentence before
// it, which says what "that" is.
func constraintSentences(users []userMsg, max int) []string {
	var all []string
	for _, u := range users {
		// Indented lines are usually pasted output, and questions ask
		// rather than require.
		var own []string
		for l := range strings.SplitSeq(u.text, "\n") {
			if !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "\t") {
				own = append(own, l)
			}
		}
		prev := ""
		for l := range proseLines(strings.Join(own, "\n")) {
			for s := range sentences(l) {
				if (constraintWords.match(s) || opensRule(s)) && !strings.HasSuffix(s, "?") {
					q := s
					if prev != "" && pointsBack(s) {
						q = prev + " " + s
						// The sentence pointed at, if it was a rule of
						// its own, is now part of this one.
						if n := len(all); n > 0 && all[n-1] == cutRunes(prev, 300) {
							all = all[:n-1]
						}
					}
					all = append(all, cutRunes(q, 300))
				}
				prev = s
			}
		}
	}
	return newestUnique(all, max)
}

// ruleOpenings open a user's sentence that lays down how to work without
// a rule word: "Use tabs in the Makefile.", "Keep the old flag names.",
// "No force pushes on main."
var ruleOpenings = []string{"use ", "keep ", "leave ", "indent ", "no ", "stick to ", "stick with ", "stay ", "only "}

// opensRule reports whether a sentence of four words or more opens with a
// rule opening.
func opensRule(s string) bool {
	return len(strings.Fields(s)) >= 4 && opensWith(s, ruleOpenings) && !opensWith(s, notRules)
}

// notRules open a sentence that looks like a rule and is not one.
var notRules = []string{"keep track", "keep going", "keep me ", "keep it up", "keep at it", "keep an eye", "use it", "use this", "use that"}

// pointsBack reports whether a sentence is short and names what it is
// about only by pointing back ("that", "this", "it").
func pointsBack(s string) bool {
	words := strings.Fields(strings.ToLower(normalizeQuotes(s)))
	if len(words) > 10 {
		return false
	}
	for _, w := range words {
		switch strings.Trim(w, ".,;:!'\"") {
		case "that", "this", "it", "those", "these":
			return true
		}
	}
	return false
}

// maxChangeLines bounds the edits described in a summary.
const maxChangeLines = 12

// changeLines describes what the span's edits changed, one line per edit
// (fileTouch.changes), for the files changed last when there are more
// than maxChangeLines.
func changeLines(files []*fileTouch) []string {
	var out []string
	for i := len(files) - 1; i >= 0 && len(out) < maxChangeLines; i-- {
		t := files[i]
		for j := len(t.changes) - 1; j >= 0 && len(out) < maxChangeLines; j-- {
			out = append(out, "- Edited "+code(t.path)+": "+t.changes[j])
		}
	}
	slices.Reverse(out)
	return out
}

// modifiedLine lists the files changed in the span, in the order they were
// first changed.
func modifiedLine(files []*fileTouch) string {
	const max = 20
	var parts []string
	for i, t := range files {
		if i == max {
			parts = append(parts, "and "+strconv.Itoa(len(files)-max)+" more")
			break
		}
		var what []string
		if t.writes > 0 {
			what = append(what, "written")
		}
		if t.edits > 0 {
			what = append(what, plural(t.edits, "edit", "edits"))
		}
		parts = append(parts, code(t.path)+" ("+strings.Join(what, ", ")+")")
	}
	return "Modified " + plural(len(files), "file", "files") + ": " + strings.Join(parts, ", ")
}

func readLine(files []string) string {
	const max = 20
	var parts []string
	for i, p := range files {
		if i == max {
			parts = append(parts, "and "+strconv.Itoa(len(files)-max)+" more")
			break
		}
		parts = append(parts, code(p))
	}
	return "Read " + plural(len(files), "file", "files") + ": " + strings.Join(parts, ", ")
}

// addCommandList adds the newest max commands, oldest first, with a line
// counting the earlier ones.
func addCommandList(s *section, cmds []command, max int, what string, render func(command) string) {
	if len(cmds) > max {
		s.addPinned(countLine(len(cmds)-max, what))
		cmds = cmds[len(cmds)-max:]
	}
	for _, c := range cmds {
		b := s.add(render(c))
		b.short = true
	}
}

// successfulActions returns the commands that succeeded and changed
// something (not pure inspection such as ls, cat or grep), each command
// once, at its newest run.
func successfulActions(cmds []command) []command {
	var rev []command
	seen := make(map[string]bool)
	for i := len(cmds) - 1; i >= 0; i-- {
		c := cmds[i]
		if !c.ok || c.text == "" || c.shell.ReadOnly {
			continue
		}
		k := oneLine(c.text)
		if seen[k] {
			continue
		}
		seen[k] = true
		rev = append(rev, c)
	}
	out := make([]command, len(rev))
	for i, c := range rev {
		out[len(rev)-1-i] = c
	}
	return out
}

// statusText is a command's exit status, with who ran it.
func statusText(c command) string {
	if c.byUser {
		return c.status + ", run by the user"
	}
	return c.status
}

// todosIn returns the texts of the latest todo list's items in a state.
func todosIn(f *found, state todoState) []string {
	var out []string
	for _, t := range f.todos {
		if t.state == state {
			out = append(out, t.text)
		}
	}
	return out
}

// addWhereWorkStands adds to s where the work stood when the span ended:
// the todo items still in progress, the assistant's last statement, and
// its last tool call when that came after the statement. The history's
// "In Progress" section and the split turn's work section both end so.
func addWhereWorkStands(s *section, f *found, o Options) {
	for _, t := range todosIn(f, todoActive) {
		s.add("- In progress: " + t)
	}
	if f.lastText != "" {
		s.add(lastStatement(f.lastText, o.MaxTextChars))
	}
	if f.lastCall != nil && f.lastCallIdx > f.lastTextIdx {
		s.add("- Last action: " + describeCall(f.lastCall))
	}
}

// lastStatement quotes the end of the assistant's last text: as many of
// its last paragraphs as fit in max characters, at least the last one
// (shortened when it alone is longer).
func lastStatement(text string, max int) string {
	paras := splitParagraphs(text)
	var kept []string
	size := 0
	for i := len(paras) - 1; i >= 0; i-- {
		n := len([]rune(paras[i]))
		if len(kept) > 0 && size+n > max {
			break
		}
		kept = append([]string{paras[i]}, kept...)
		size += n
	}
	if len(kept) == 1 {
		kept[0] = shorten(kept[0], max)
	}
	head := "Last assistant statement:"
	if left := len(paras) - len(kept); left > 0 {
		head = "Last assistant statement (its last " + plural(len(kept), "paragraph", "paragraphs") + "; " +
			strconv.Itoa(left) + " earlier left out):"
	}
	return bullet(head + "\n" + strings.Join(kept, "\n\n"))
}

// splitParagraphs splits text at blank lines outside fenced code blocks.
func splitParagraphs(text string) []string {
	var out []string
	var cur []string
	fence := false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for l := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
		}
		if t == "" && !fence {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return out
}

// describeCall says what a tool call did and how it ended.
func describeCall(ci *callInfo) string {
	status := ci.status
	if status == "" {
		status = "no result"
	}
	if ci.bash {
		return "ran " + code(oneLine(argString(ci.args, "command", "cmd", "script"))) + " (" + status + ")"
	}
	out := code(ci.call.Name)
	if t := argString(ci.args, "path", "file_path", "filePath", "notebook_path", "pattern", "query", "url"); t != "" {
		out += " on " + code(cutRunes(t, 200))
	}
	return out + " (" + status + ")"
}

// addFailures adds the newest max failures, oldest first, with a line
// counting the earlier ones.
func addFailures(s *section, fls []*failure, max int, what, prefix, suffix string) {
	if len(fls) > max {
		s.addPinned(countLine(len(fls)-max, what))
		fls = fls[len(fls)-max:]
	}
	for _, fl := range fls {
		s.add("- " + prefix + renderFailure(fl) + suffix)
	}
}

func renderFailure(fl *failure) string {
	switch {
	case fl.tool == "model":
		return "Model call failed: " + fl.text
	case fl.tool == "":
		return code(oneLine(fl.target)) + " (" + fl.status + ", run by the user): " + fl.text
	case fl.status != "":
		return code(oneLine(fl.target)) + " (" + fl.status + "): " + fl.text
	case fl.target != "":
		return code(fl.tool) + " on " + code(cutRunes(fl.target, 200)) + " failed: " + fl.text
	}
	return code(fl.tool) + " failed: " + fl.text
}

// nextSteps says what is still open at the end of the span, never what
// it shows done: the open items of the latest todo list; else the
// latest user request when the assistant has not answered it since;
// else the plan items of the assistant's last statement that are not
// reports of finished work; else the question it ended on, waiting for
// the user; else the latest request again, worded as done when the
// assistant's last statement says so.
func nextSteps(f *found, o Options) []string {
	var out []string
	for _, t := range f.todos {
		switch t.state {
		case todoPending:
			out = append(out, "[ ] "+t.text)
		case todoActive:
			out = append(out, "[ ] "+t.text+" (in progress)")
		}
	}
	if len(out) > 0 {
		return out
	}
	var latest string
	if i := latestSaid(f.users); i >= 0 {
		latest = strings.Join(strings.Fields(requestText(f.users[i], 200)), " ")
	}
	if f.lastUserIdx > f.lastTextIdx && latest != "" {
		return []string{latestRequestStep + latest}
	}
	if f.lastText == "" {
		return nil
	}
	// A question at the end of the text waits for its answer, whatever
	// plan it proposes.
	if openQuestion(f.lastText) {
		return []string{"Wait for the user's answer to the question the assistant asked: «" + replyContext(f.lastText) + "»"}
	}
	if items := planItems(f.lastText, o.MaxItems); len(items) > 0 {
		return items
	}
	if latest == "" {
		return nil
	}
	if strings.HasSuffix(latest, "?") {
		return []string{"Wait for the user's next request: the assistant answered their latest question (" + latest + ")"}
	}
	if reportsDone(f.lastText) {
		return []string{"Ask the user what comes next: the assistant reported the latest request done (" + latest + ")"}
	}
	return []string{latestRequestStep + latest}
}

// doneWords say that work is finished.
var doneWords = newPhrases("done", "completed", "finished", "all tests pass", "tests pass", "fixed", "implemented",
	"successfully", "is now", "are now", "now works", "works now", "resolved")

// reportsDone reports whether an assistant's text says its work is done.
func reportsDone(text string) bool { return doneWords.match(text) || strings.Contains(text, "✅") }

// finishedItem reports whether a list item reports finished work rather
// than a step to take: it starts with a check mark or with a verb in the
// past tense ("Added …", "Fixed …", "Wrote …").
func finishedItem(item string) bool {
	t := strings.TrimSpace(item)
	for _, mark := range []string{"✅", "✓", "✔", "[x]", "[X]", "~~"} {
		if strings.HasPrefix(t, mark) {
			return true
		}
	}
	w, _, _ := strings.Cut(strings.TrimLeft(t, "*_`"), " ")
	w = strings.ToLower(strings.TrimRight(w, ":*_`,"))
	switch w {
	case "wrote", "made", "ran", "built", "rewrote", "put", "set", "kept", "split", "cut", "found", "got", "did":
		return true
	}
	return len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "need") && !strings.HasSuffix(w, "eed")
}

// planItems returns the numbered list items and plan sentences of a text,
// in order, at most max.
func planItems(text string, max int) []string {
	var out []string
	seen := make(map[string]bool)
	add := func(s string) {
		s = cutRunes(s, 300)
		if k := strings.ToLower(s); !seen[k] && len(out) < max {
			seen[k] = true
			out = append(out, s)
		}
	}
	for t := range unfencedLines(text) {
		if numbered(t) {
			if item := strings.TrimSpace(stripListMarker(t)); !finishedItem(item) {
				add(item)
			}
			continue
		}
		for s := range sentences(strings.TrimSpace(stripListMarker(t))) {
			if planWords.match(s) && !finishedItem(s) {
				add(s)
			}
		}
	}
	return out
}

// splitFailures separates the failures nothing later cleared from those a
// later success resolved, keeping their order.
func splitFailures(all []*failure) (open, fixed []*failure) {
	for _, fl := range all {
		if fl.resolved {
			fixed = append(fixed, fl)
		} else {
			open = append(open, fl)
		}
	}
	return open, fixed
}
