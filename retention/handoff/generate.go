package handoff

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// MinSize is the smallest size Generate writes; a smaller one is raised
// to it.
const MinSize = 300

// KeepRecentFor returns the kept-part budget a case of the given size is
// compacted at: an eighth of it, between 150 and 2,000 tokens.
func KeepRecentFor(size int) int {
	return min(2000, max(150, size/8))
}

// Generate returns the case of family f for seed, about size estimated
// tokens long (at least MinSize; the noise after the last critical turn
// is at least twice the keep budget, so a short case may come out
// longer). The same arguments give the same case. An unknown family
// gives the BuriedConstraint one.
func Generate(f Family, seed int64, size int) *Case {
	size = max(size, MinSize)
	fi := 0
	for i, x := range Families {
		if x == f {
			fi = i
		}
	}
	f = Families[fi]
	r := rand.New(rand.NewPCG(uint64(seed), uint64(fi+1)*0x9e3779b97f4a7c15))
	p := projects[r.IntN(len(projects))]
	start := time.Date(2026, 1, 5+int(seed%20), 9, 0, 0, 0, time.UTC)
	b := &builder{r: r, p: p, when: start, t: &compact.Transcript{Format: "generated",
		SessionID: fmt.Sprintf("00000000-0000-4000-8%03d-%012d", fi, seed), Cwd: p.cwd, Timestamp: jsonrec.Stamp(start)}}
	c := &Case{Family: f, Seed: seed, Size: size, KeepRecent: KeepRecentFor(size), Transcript: b.t}
	switch f {
	case DecisionOverride:
		genOverride(b, &c.Truth)
	case Roles:
		genRoles(b, &c.Truth)
	case References:
		genReferences(b, &c.Truth)
	default:
		genConstraint(b, &c.Truth)
	}
	c.LastCritical = b.t.Entries[len(b.t.Entries)-1].ID
	critical := b.tokens
	for b.tokens < size || b.tokens-critical < 2*c.KeepRecent {
		b.noise()
	}
	b.user(pick(r, "Keep going.", "ok, continue", "Looks fine so far, carry on.", "Go on."))
	b.say(pick(r, "Continuing with the remaining files.", "Carrying on.", "On it."))
	c.Tokens = b.tokens
	for range DriftCycles - 1 {
		c.Continuations = append(c.Continuations, b.continuation(max(6*c.KeepRecent, size/3)))
	}
	return c
}

// DriftCycles is how many times the suite compacts each case: once, then
// after each continuation.
const DriftCycles = 3

// project is the setting of a generated conversation: where it runs and
// the files and commands its noise is made of. None of it holds a key
// word of the truth.
type project struct {
	cwd, module string
	ext         string // the source files' extension
	files       []string
	build, test string
	idents      []string
}

var projects = []project{
	{cwd: "/work/orders", module: "example.com/orders", ext: ".go",
		files: []string{"internal/store/rows.go", "internal/httpx/middleware.go", "internal/config/load.go", "cmd/server/main.go",
			"internal/metrics/registry.go", "internal/auth/session.go", "internal/store/query.go", "docs/architecture.md", "internal/httpx/errors.go"},
		build: "go build ./...", test: "go test ./internal/...",
		idents: []string{"loadRows", "scanRow", "writeHeader", "parseFilter", "sessionKey", "registerGauge", "openStore", "decodeBody", "limitReader"}},
	{cwd: "/work/storefront", module: "storefront", ext: ".ts",
		files: []string{"src/components/Table.tsx", "src/lib/format.ts", "src/pages/checkout.tsx", "src/hooks/useCart.ts",
			"src/lib/http.ts", "src/components/Modal.tsx", "src/styles/theme.ts", "src/lib/i18n.ts", "docs/frontend.md"},
		build: "npm run build", test: "npm test -- --watch=false",
		idents: []string{"formatMoney", "useCart", "renderRow", "fetchJSON", "closeModal", "themeTokens", "translate", "sortColumns", "parseQuery"}},
	{cwd: "/work/etl", module: "etl", ext: ".py",
		files: []string{"etl/readers/s3.py", "etl/transform/normalize.py", "etl/cli.py", "etl/writers/warehouse.py",
			"etl/schema.py", "tests/test_normalize.py", "etl/config.py", "docs/pipeline.md", "etl/util/timeit.py"},
		build: "python -m compileall etl", test: "pytest -q tests",
		idents: []string{"read_objects", "normalize_row", "write_batch", "load_config", "coerce_types", "timeit", "split_keys", "open_bucket", "flush_buffer"}},
}

// builder appends the entries of a generated conversation.
type builder struct {
	r      *rand.Rand
	p      project
	t      *compact.Transcript
	n      int
	call   int
	tokens int
	when   time.Time
}

func (b *builder) stamp(m *compact.Message) {
	b.when = b.when.Add(time.Duration(5+b.r.IntN(40)) * time.Second)
	m.Timestamp = b.when.UnixMilli()
	b.tokens += m.Tokens()
}

func (b *builder) add(m *compact.Message) {
	b.n++
	b.stamp(m)
	b.t.Entries = append(b.t.Entries, &compact.Entry{
		ID: fmt.Sprintf("%08x", 0x2000+b.n), Kind: compact.KindMessage,
		Timestamp: jsonrec.Stamp(b.when), Message: m,
	})
}

func userMsg(text string) *compact.Message { return compact.TextMessage(compact.RoleUser, text) }

func sayMsg(text string) *compact.Message {
	m := compact.TextMessage(compact.RoleAssistant, text)
	m.StopReason, m.Provider, m.Model = compact.StopEnd, "anthropic", "claude-sonnet-4-5"
	return m
}

// toolMsgs returns an assistant message calling one tool and its result.
func (b *builder) toolMsgs(text, name string, args map[string]any, output string) []*compact.Message {
	b.call++
	id := "toolu_" + strconv.Itoa(1000+b.call)
	raw, _ := json.Marshal(args)
	m := &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopToolUse, Provider: "anthropic", Model: "claude-sonnet-4-5"}
	if text != "" {
		m.Content = append(m.Content, compact.Part{Type: compact.PartText, Text: text})
	}
	m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: raw}})
	res := compact.TextMessage(compact.RoleToolResult, output)
	res.ToolCallID, res.ToolName = id, name
	return []*compact.Message{m, res}
}

func (b *builder) user(text string) { b.add(userMsg(text)) }
func (b *builder) say(text string)  { b.add(sayMsg(text)) }
func (b *builder) tool(text, name string, args map[string]any, output string) {
	for _, m := range b.toolMsgs(text, name, args, output) {
		b.add(m)
	}
}

// src returns a source path written with a .go extension in the
// project's language.
func (b *builder) src(path string) string {
	if base, ok := strings.CutSuffix(path, ".go"); ok {
		return base + b.p.ext
	}
	return path
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// codeText returns a plausible source file of about lines lines, built
// from the project's identifiers.
func (b *builder) codeText(file string, lines int) string {
	var s strings.Builder
	py := strings.HasSuffix(file, ".py")
	ts := strings.HasSuffix(file, ".ts") || strings.HasSuffix(file, ".tsx")
	md := strings.HasSuffix(file, ".md")
	sql := strings.HasSuffix(file, ".sql")
	for i := 1; i <= lines; i++ {
		id := pick(b.r, b.p.idents...)
		other := pick(b.r, b.p.idents...)
		var l string
		switch {
		case sql:
			l = pick(b.r, "CREATE TABLE "+id+" (", "  id BIGINT PRIMARY KEY,", "  name TEXT NOT NULL,", "  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()",
				");", "", "CREATE INDEX "+id+"_by_"+other+" ON "+id+" ("+other+");", "-- "+id+" rows are written by "+other+".")
		case md:
			l = pick(b.r, "The "+id+" step runs before "+other+" and hands it a batch of rows.",
				"## "+strings.ToUpper(id[:1])+id[1:], "", "Each stage logs its duration and the number of rows it saw.",
				"See "+other+" for how inputs are validated before they are written.")
		case py:
			l = pick(b.r, "def "+id+"(rows, *, limit=None):", "    for row in rows:", "        out.append("+other+"(row))",
				"    return out", "", "    if limit is not None and len(out) >= limit:", "        break",
				"# "+id+" keeps the order of its input", "    log.debug(\"%s: %d rows\", \""+id+"\", len(out))")
		case ts:
			l = pick(b.r, "export function "+id+"(input: string[]): string[] {", "  const out: string[] = [];",
				"  for (const x of input) out.push("+other+"(x));", "  return out;", "}", "",
				"// "+id+" keeps the order of its input", "import { "+other+" } from \"./"+other+"\";")
		default:
			l = pick(b.r, "func "+id+"(ctx context.Context, in []string) ([]string, error) {", "\tout := make([]string, 0, len(in))",
				"\tfor _, x := range in {", "\t\tout = append(out, "+other+"(x))", "\t}", "\treturn out, nil", "}", "",
				"// "+id+" keeps the order of its input.", "\tif err := ctx.Err(); err != nil {", "\t\treturn nil, err")
		}
		fmt.Fprintf(&s, "%4d\t%s\n", i, l)
	}
	return s.String()
}

// noise appends one block of work that states no truth: a file read, a
// search, a test run, a small unrelated edit or a short exchange.
func (b *builder) noise() {
	for _, m := range b.noiseMsgs() {
		b.add(m)
	}
}

func (b *builder) noiseMsgs() []*compact.Message {
	r := b.r
	file := pick(r, b.p.files...)
	id := pick(r, b.p.idents...)
	switch r.IntN(11) {
	case 0, 1, 2:
		return b.toolMsgs(pick(r, "Let me look at "+file+".", "Reading "+file+" to see how "+id+" is used.", ""),
			"read", map[string]any{"path": file}, b.codeText(file, 20+r.IntN(90)))
	case 3:
		var out strings.Builder
		for range 2 + r.IntN(6) {
			f := pick(r, b.p.files...)
			fmt.Fprintf(&out, "%s:%d:  %s(ctx, rows)\n", f, 10+r.IntN(300), id)
		}
		return b.toolMsgs("", "bash", map[string]any{"command": "grep -rn '" + id + "' ."}, out.String())
	case 4:
		var out strings.Builder
		for _, f := range b.p.files[:3+r.IntN(5)] {
			fmt.Fprintf(&out, "ok  \t%s/%s\t0.%03ds\n", b.p.module, path.Dir(f), r.IntN(900))
		}
		return b.toolMsgs(pick(r, "Running the tests.", "", "Checking that everything still passes."), "bash",
			map[string]any{"command": b.p.test}, out.String())
	case 5:
		old := "// " + id + " returns the rows."
		return b.toolMsgs(pick(r, "Fixing a stale comment while I'm here.", ""), "edit",
			map[string]any{"path": file, "oldText": old, "newText": "// " + id + " returns the rows in input order."},
			"Successfully replaced text in "+file+".")
	case 6:
		return b.toolMsgs("", "bash", map[string]any{"command": b.p.build}, "(no output)")
	case 7:
		qa := [][2]string{
			{"What does " + id + " do exactly?", id + " walks its input once and keeps the order; nothing there needs to change."},
			{"How long will this take?", "Not long: the remaining files are small and the tests run in a few seconds."},
			{"Is " + file + " still used?", file + " is still imported by two packages, so it stays."},
			{"Any surprises so far?", "Nothing unexpected: the code is consistent and the tests are green."},
			{"ok", "Continuing."},
		}[r.IntN(5)]
		return []*compact.Message{userMsg(qa[0]), sayMsg(qa[1])}
	case 8:
		var log strings.Builder
		for i := range 6 + r.IntN(20) {
			fmt.Fprintf(&log, "2026-01-%02dT10:%02d:%02dZ %s %s: %s\n", 1+r.IntN(28), r.IntN(60), r.IntN(60),
				pick(r, "INFO", "INFO", "WARN", "ERROR"), pick(r, b.p.idents...), pick(r, "batch done", "retrying connection", "slow call took 2.4s",
					"cache miss ratio 0.41", "worker "+strconv.Itoa(i)+" idle", "timeout waiting for lock"))
		}
		return []*compact.Message{userMsg(pick(r, "CI is red on a job that has nothing to do with us, here's the output:\n", "Saw this in the logs this morning, is it ours?\n") + log.String()),
			sayMsg(pick(r, "That's the flaky "+id+" job; it is unrelated to this change and passes on a rerun.",
				"Not ours: those lines come from "+id+", which this change does not touch."))}
	default:
		return []*compact.Message{sayMsg(pick(r, "The "+id+" helper only formats its input; nothing to change there.",
			"I checked "+file+": it does not depend on the part we are changing.",
			"Both call sites of "+id+" pass a context already, so they are fine as they are.",
			"That file is only touched by the build; moving on."))}
	}
}

// continuation returns more noise, about tokens long, opened by a user
// turn: the work going on without new truth.
func (b *builder) continuation(tokens int) []*compact.Message {
	out := []*compact.Message{userMsg(pick(b.r, "Continue with the rest.", "ok, next part please", "Carry on where you left off."))}
	n := 0
	for n < tokens {
		for _, m := range b.noiseMsgs() {
			b.stamp(m)
			n += m.Tokens()
			out = append(out, m)
		}
	}
	return out
}

// constraint is a forbidden action in several phrasings, the last ones
// without a rule word.
type constraint struct {
	text      string
	keys      []string
	phrasings []string
}

var constraints = []constraint{
	{"never touch vendor/", []string{"vendor/"}, []string{
		"Don't touch anything under vendor/ — it's synced from upstream.",
		"Keep your hands off vendor/; the sync script owns it.",
		"Heads-up: last month someone hand-patched vendor/ and the next sync silently reverted it, we spent a day bisecting. Let's not go there again."}},
	{"do not run the migrations against prod", []string{"migrations", "prod"}, []string{
		"Do not run the migrations against prod, only against the local database.",
		"Migrations go to the local database only; prod is off limits from this machine.",
		"Someone ran the migrations against prod from a laptop last week and it locked the main table for twenty minutes. Local database this time."}},
	{"use tabs, not spaces, in the Makefile and scripts", []string{"tabs"}, []string{
		"Use tabs, not spaces, in the Makefile and the shell scripts.",
		"Indent the Makefile and the scripts with tabs — the linter here rejects spaces.",
		"The last PR that indented the Makefile with spaces broke every CI job for an afternoon. Tabs, like the rest of the file."}},
	{"never force-push to main", []string{"force", "main"}, []string{
		"Never force-push to main.",
		"No force pushes on main, please — open a branch.",
		"Remember when the release got force-pushed over on main and we lost two merges? I'd rather that didn't happen twice."}},
	{"do not restart the shared staging database", []string{"staging database"}, []string{
		"Don't restart the shared staging database; other teams test on it.",
		"The staging database is shared, leave it running whatever happens.",
		"Someone bounced the staging database on Tuesday to clear a lock and wiped three teams' test runs. Let's not do that again."}},
}

// goal is a task with the files, numbers and ids that come with it.
type goal struct {
	text  string
	keys  []string
	file  string
	id    string // ticket
	fact  string // a number with its unit
	next  string // the open item stated early
	nkeys []string
}

var goals = []goal{
	{"Upgrade the payments client to the v3 SDK", []string{"payments", "v3"}, "services/payments/client.go", "PAY-4821", "18443",
		"add a regression test for the refund rounding", []string{"refund rounding"}},
	{"Add pagination to the invoices list endpoint", []string{"pagination", "invoices"}, "api/invoices/list.go", "INV-2207", "2750",
		"update the CHANGELOG entry for the release", []string{"changelog"}},
	{"Replace the hand-written CSV parser in the import job", []string{"csv", "import"}, "jobs/importer/csvparse.go", "IMP-0934", "65536",
		"wire the new import metric into the Grafana board", []string{"grafana"}},
	{"Move the nightly report job onto the new scheduler", []string{"nightly report", "scheduler"}, "jobs/nightly/report.go", "OPS-1188", "2130",
		"write the rollout note for the on-call channel", []string{"rollout note"}},
}

// opening writes the first turns of a case: the request (the goal, the
// facts, the constraint given, if any, in the phrasing given) and a first
// look at the code. It records the goal, the facts and the constraint.
func (b *builder) opening(t *Truth, g goal, extra string) {
	g.file = b.src(g.file)
	t.Goal = Item{Kind: "goal", Text: g.text, Keys: g.keys}
	t.Facts = append(t.Facts,
		Item{Kind: "fact", Text: g.file, Keys: []string{g.file}},
		Item{Kind: "fact", Text: g.id, Keys: []string{g.id}},
		Item{Kind: "fact", Text: g.fact, Keys: []string{g.fact}})
	num := pick(b.r, "The limit we agreed on is "+g.fact+".", "Use "+g.fact+" as the value, that's what ops configured.")
	req := g.text + " (ticket " + g.id + "). The code is in " + g.file + ". " + num
	if extra != "" {
		req += " " + extra
	}
	b.user(req)
	b.tool("I'll start by reading "+g.file+".", "read", map[string]any{"path": g.file}, b.codeText(g.file, 30+b.r.IntN(40)))
}

// nextStep states the open item, early, as something to do once the
// current work is done.
func (b *builder) nextStep(t *Truth, g goal) {
	t.Next = append(t.Next, Item{Kind: "next", Text: g.next, Keys: g.nkeys})
	b.user(pick(b.r, "Once that compiles, the next step is to "+g.next+" — don't start it before.",
		"After that: "+g.next+". That one is still open.",
		"When you're done with this, "+g.next+"; nobody has done it yet."))
	b.say(pick(b.r, "Noted, I'll do that after the current change.", "Will do once this part builds.", "OK, that comes next."))
}

func (b *builder) forbid(t *Truth, c constraint) string {
	t.Forbidden = append(t.Forbidden, Item{Kind: "forbidden", Text: c.text, Keys: c.keys})
	return pick(b.r, c.phrasings[:2]...)
}

func genConstraint(b *builder, t *Truth) {
	r := b.r
	g := pick(r, goals...)
	perm := r.Perm(len(constraints))
	first := constraints[perm[0]]
	t.Forbidden = append(t.Forbidden, Item{Kind: "forbidden", Text: first.text, Keys: first.keys})
	phrase := pick(r, first.phrasings...)
	if r.IntN(2) == 0 {
		b.opening(t, g, phrase)
	} else {
		b.opening(t, g, "")
		b.noise()
		b.user(phrase)
		b.say(pick(r, "Understood.", "Got it, I'll keep that in mind.", "OK."))
	}
	if r.IntN(2) == 0 { // a second one, in passing, later
		second := constraints[perm[1]]
		t.Forbidden = append(t.Forbidden, Item{Kind: "forbidden", Text: second.text, Keys: second.keys})
		b.noise()
		b.user(pick(r, "Oh, and one more thing. ", "Also: ", "") + pick(r, second.phrasings...))
		b.say(pick(r, "Sure.", "Noted.", "OK, understood."))
	}
	b.noise()
	b.nextStep(t, g)
}

// decision topics: the options are named nowhere in the noise.
type topic struct {
	goal    goal
	thing   string
	options []string
	config  string
}

var topics = []topic{
	{goal{"Put a cache in front of the price lookups", []string{"cache", "price"}, "internal/pricing/lookup.go", "PRC-3310", "7200",
		"add a regression test for the refund rounding", []string{"refund rounding"}}, "the cache", []string{"Redis", "Memcached", "an in-process LRU"}, "config/cache.yaml"},
	{goal{"Publish order events so billing can consume them", []string{"order events"}, "internal/events/publish.go", "EVT-5120", "1536",
		"update the CHANGELOG entry for the release", []string{"changelog"}}, "the event queue", []string{"SQS", "Kafka", "NATS"}, "config/events.yaml"},
	{goal{"Set up schema migrations for the inventory database", []string{"schema migrations", "inventory"}, "db/inventory/schema.sql", "INVT-771", "5432",
		"wire the new import metric into the Grafana board", []string{"grafana"}}, "the migration tool", []string{"goose", "Atlas", "dbmate"}, "db/migrate.yaml"},
	{goal{"Pick a wire format for the sync API and write the encoder", []string{"wire format"}, "internal/sync/encode.go", "SYNC-408", "4096",
		"write the rollout note for the on-call channel", []string{"rollout note"}}, "the wire format", []string{"protobuf", "msgpack", "CBOR"}, "config/sync.yaml"},
}

// optionKey is the key word an option is found by.
func optionKey(opt string) string {
	if i := strings.LastIndexByte(opt, ' '); i >= 0 {
		return strings.ToLower(opt[i+1:])
	}
	return strings.ToLower(opt)
}

func genOverride(b *builder, t *Truth) {
	r := b.r
	tp := pick(r, topics...)
	order := r.Perm(len(tp.options))
	overrides := 1 + r.IntN(2)
	chosen := make([]string, overrides+1)
	for i := range chosen {
		chosen[i] = tp.options[order[i]]
	}
	decide := func(opt string) string { return "use " + opt + " for " + tp.thing }
	c := constraints[r.IntN(len(constraints))]
	if r.IntN(2) == 0 {
		b.opening(t, tp.goal, "Let's "+decide(chosen[0])+". "+b.forbid(t, c))
	} else {
		b.opening(t, tp.goal, b.forbid(t, c))
		var opts strings.Builder
		for i, o := range tp.options {
			fmt.Fprintf(&opts, "%d. %s\n", i+1, o)
		}
		b.say("For " + tp.thing + " there are three candidates:\n" + opts.String() + "Which one do you want?")
		b.user(pick(r, chosen[0]+", go with that.", "Let's "+decide(chosen[0])+".", chosen[0]+" please."))
	}
	b.tool(pick(r, "I'll set up "+chosen[0]+" first.", "Starting with the "+chosen[0]+" setup."), "write",
		map[string]any{"path": tp.config, "content": "backend: " + strings.ToLower(chosen[0]) + "\n"},
		"Successfully wrote "+strconv.Itoa(10+len(chosen[0]))+" bytes to "+tp.config)
	for i := 1; i <= overrides; i++ {
		b.noise()
		old, nu := chosen[i-1], chosen[i]
		b.user(pick(r,
			"Scratch that, let's "+decide(nu)+" instead.",
			"Actually, go with "+nu+"; ops already runs it.",
			"Let's not use "+old+" after all. "+nu+" is simpler to operate.",
			"No, "+nu+". We don't want to run "+old+" just for this.",
			"On second thought, "+nu+" is the better fit for "+tp.thing+".",
			"Instead of "+old+", use "+nu+" — it's already in staging."))
		b.tool(pick(r, "Switching to "+nu+".", "OK — "+nu+" it is; I'll redo the config.", "Understood, changing the config to "+nu+"."), "edit",
			map[string]any{"path": tp.config, "oldText": "backend: " + strings.ToLower(old), "newText": "backend: " + strings.ToLower(nu)},
			"Successfully replaced text in "+tp.config+".")
	}
	for _, o := range chosen[:overrides] {
		t.Superseded = append(t.Superseded, Item{Kind: "superseded", Text: decide(o), Keys: []string{optionKey(o)}})
	}
	last := chosen[overrides]
	t.Final = &Item{Kind: "decision", Text: decide(last), Keys: []string{optionKey(last)}}
	b.noise()
	b.nextStep(t, tp.goal)
}

var people = []string{"Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hiro"}

type task struct{ name, key string }

var tasks = []task{
	{"the schema migration", "schema migration"}, {"the API handlers", "api handlers"}, {"the load test", "load test"},
	{"the release notes", "release notes"}, {"the dashboard", "dashboard"}, {"the on-call runbook", "runbook"},
	{"the feature flag rollout", "feature flag"},
}

type component struct{ name, owns, key string }

var components = []component{
	{"the worker service", "owns retries", "retries"}, {"the gateway", "only forwards requests", "forwards"},
	{"the scheduler", "handles backfills", "backfills"}, {"the ingester", "does deduplication", "dedup"},
}

func genRoles(b *builder, t *Truth) {
	r := b.r
	g := pick(r, goals...)
	c := constraints[r.IntN(len(constraints))]
	b.opening(t, g, b.forbid(t, c))
	n := 3 + r.IntN(2)
	pp := r.Perm(len(people))[:n]
	tt := r.Perm(len(tasks))[:n]
	var roles []Role
	for i := range n {
		tk := tasks[tt[i]]
		roles = append(roles, Role{Owner: people[pp[i]], Task: tk.name, TaskKeys: []string{tk.key}})
	}
	var msg strings.Builder
	switch r.IntN(3) {
	case 0:
		msg.WriteString("Who does what: ")
		for i, ro := range roles {
			if i > 0 {
				msg.WriteString(", ")
			}
			msg.WriteString(ro.Owner + " -> " + strings.TrimPrefix(ro.Task, "the "))
		}
		msg.WriteString(".")
	case 1:
		msg.WriteString("Owners:\n")
		for _, ro := range roles {
			msg.WriteString("- " + strings.TrimPrefix(ro.Task, "the ") + ": " + ro.Owner + "\n")
		}
	default:
		for i, ro := range roles {
			verb := pick(r, " takes ", " is on ", " owns ")
			if i > 0 {
				msg.WriteString(" ")
			}
			msg.WriteString(ro.Owner + verb + ro.Task + ".")
		}
	}
	b.noise()
	b.user(msg.String() + " Keep track of that, I'll ask you to ping them.")
	b.say("Noted who owns what.")
	// Components, easy to confuse with each other.
	cp := r.Perm(len(components))[:2]
	var cm []string
	for _, i := range cp {
		co := components[i]
		roles = append(roles, Role{Owner: strings.TrimPrefix(co.name, "the "), Task: co.owns, TaskKeys: []string{co.key}})
		cm = append(cm, co.name+" "+co.owns)
	}
	b.noise()
	b.user("For the design: " + strings.Join(cm, "; ") + ". Don't mix those up when you touch the code.")
	b.say("Understood: " + strings.Join(cm, ", and ") + ".")
	// A distractor: two owners named together on another subject.
	b.noise()
	b.user(roles[0].Owner + " and " + roles[1].Owner + " both reviewed the design doc yesterday; no comments from them.")
	b.say("Good, then nothing blocks the start.")
	if r.IntN(2) == 0 { // a handover
		from := roles[n-1]
		to := people[r.Perm(len(people))[0]]
		for slicesContains(pp, to) {
			to = people[(indexOf(people, to)+1)%len(people)]
		}
		b.noise()
		b.user(from.Owner + " is out for the rest of the week, so " + to + " picks up " + from.Task + ".")
		b.say("OK, " + to + " has " + from.Task + " now.")
		t.Superseded = append(t.Superseded, Item{Kind: "superseded", Text: from.Owner + " owns " + from.Task, Keys: []string{strings.ToLower(from.Owner), from.TaskKeys[0]}})
		roles[n-1].Owner = to
	}
	t.Roles = roles
	b.noise()
	b.nextStep(t, g)
}

func slicesContains(pp []int, name string) bool {
	for _, i := range pp {
		if people[i] == name {
			return true
		}
	}
	return false
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

type optionSet struct {
	question string
	options  []string
	keys     []string
}

var optionSets = []optionSet{
	{"how to split the accounts table", []string{"shard by tenant id", "shard by region", "one table with a partition key"}, []string{"tenant", "region", "partition key"}},
	{"how to limit the public API", []string{"a token bucket per API key", "a fixed window counter per client", "a sliding log per endpoint"}, []string{"token bucket", "fixed window", "sliding log"}},
	{"where to keep the feature settings", []string{"environment variables", "a settings table in the database", "a YAML file next to the binary"}, []string{"environment variables", "settings table", "yaml file"}},
}

type redo struct {
	did, from, to, fromFile, toFile, key string
}

var redos = []redo{
	{"replaced the panics with returned errors", "parser", "lexer", "lang/parser/parse.go", "lang/lexer/scan.go", "panic"},
	{"moved the magic numbers into named constants", "encoder", "decoder", "codec/encoder/write.go", "codec/decoder/read.go", "constants"},
	{"made every exported function take a context.Context first", "store", "cache layer", "data/store/store.go", "data/cachelayer/layer.go", "context.context"},
}

var ordinals = []string{"first", "second", "third"}

func genReferences(b *builder, t *Truth) {
	r := b.r
	g := pick(r, goals...)
	c := constraints[r.IntN(len(constraints))]
	b.opening(t, g, b.forbid(t, c))
	// "the second option"
	os := pick(r, optionSets...)
	k := r.IntN(3)
	var list strings.Builder
	for i, o := range os.options {
		fmt.Fprintf(&list, "%d. %s\n", i+1, o)
	}
	b.noise()
	b.user("Before that, we need to decide " + os.question + ". What are the options?")
	b.say("Three ways to do it:\n" + list.String() + "Each works at our size; the trade-off is operational.")
	b.user(pick(r, "Let's go with the "+ordinals[k]+" option.", "The "+ordinals[k]+" one.", "Do the "+ordinals[k]+" option."))
	b.say("OK.")
	t.Referents = append(t.Referents, Item{Kind: "referent", Text: os.options[k], Keys: []string{os.keys[k]}})
	// "do what you did for the parser to the lexer"
	rd := pick(r, redos...)
	rd.fromFile = b.src(rd.fromFile)
	b.noise()
	b.tool("Now the "+rd.from+": I "+rd.did+".", "edit",
		map[string]any{"path": rd.fromFile, "oldText": "\t// TODO", "newText": "\t// done"}, "Successfully replaced text in "+rd.fromFile+".")
	b.say("Done with the " + rd.from + ".")
	b.noise()
	b.user(pick(r, "Do what you did for the "+rd.from+" to the "+rd.to+" too.", "Same thing for the "+rd.to+", please, like the "+rd.from+"."))
	b.say(pick(r, "Will do after the current step.", "OK, queued."))
	t.Next = append(t.Next, Item{Kind: "next", Text: rd.did + " in the " + rd.to, Keys: []string{rd.to, rd.key}})
	// "that file"
	f := "lib/" + pick(r, "money", "dates", "retry_policy", "slug") + "/" + pick(r, "round", "parse", "clamp") + b.p.ext
	b.noise()
	b.tool("This one is odd, let me read it.", "read", map[string]any{"path": f}, b.codeText(f, 15+r.IntN(20)))
	b.say("It has no tests at all.")
	b.user(pick(r, "Add a test for that file when you get to it.", "That file needs a test; put it on the list."))
	b.say("Noted.")
	t.Referents = append(t.Referents, Item{Kind: "referent", Text: f, Keys: []string{f}})
	t.Next = append(t.Next, Item{Kind: "next", Text: "add a test for " + f, Keys: []string{path.Base(f), "test"}})
	b.noise()
	b.nextStep(t, g)
}
