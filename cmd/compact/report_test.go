package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/report"
)

// TestReportDemo writes the report of the demo session after a "compact
// run" and a "compact prune", and checks the data the page is built from
// against what those commands said they did.
func TestReportDemo(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	var run runReport
	c.okJSON(&run, "run", "--json", file)
	c.ok("prune", file)

	out := filepath.Join(t.TempDir(), "demo.html")
	var res reportResult
	c.okJSON(&res, "report", "--json", file, "-o", out)
	s := open(t, file)
	if res.Output != out || res.File != file || res.Leaf != s.Leaf() || res.Compactions != 1 || res.ContextEdits != 1 {
		t.Errorf("report --json = %+v", res)
	}
	page := string(readFile(t, out))
	if len(page) != res.Bytes || !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Errorf("page of %d bytes (reported %d) starting %.40q", len(page), res.Bytes, page)
	}
	if n := len(regexp.MustCompile(`<circle class="point[^"]*" data-call=`).FindAllString(page, -1)); n != res.Calls || n == 0 {
		t.Errorf("%d points on the page, %d calls reported", n, res.Calls)
	}

	// The same data through the package, as the command builds it.
	reg, err := compact.LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Build(report.Input{File: file, Entries: s.Entries(), Path: s.Path(),
		Model: compact.Config{}.ResolveModel(reg, s.Context().Model)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Markers) != 2 || r.Markers[0].Kind != report.KindManual || r.Markers[1].Kind != report.KindEdit || r.Markers[1].Label != "truncate" {
		t.Fatalf("markers %+v: want the manual compaction of run, then prune's truncate edit", r.Markers)
	}
	card := r.Cards[0]
	// The messages summarized are the history before the cut plus the
	// start of the turn the cut falls in.
	if card.EntryID != run.EntryID || card.Summarized != run.MessagesToSummarize+run.TurnPrefixMessages || card.TokensBefore != run.TokensBefore ||
		card.TokensAfter != run.TokensAfter || card.AfterEstimated || card.Summarizer != "extractive" || card.Reason != "manual" {
		t.Errorf("card %+v\ndoes not match run: entry %s, %d + %d summarized, %d -> %d", card, run.EntryID, run.MessagesToSummarize, run.TurnPrefixMessages, run.TokensBefore, run.TokensAfter)
	}
	var titles []string
	for _, sec := range card.Sections {
		titles = append(titles, sec.Title)
		if open := sec.Title == "Goal" || sec.Title == "Progress" || sec.Title == "Next Steps"; sec.Open != open {
			t.Errorf("section %q open = %v", sec.Title, sec.Open)
		}
	}
	if len(titles) < 3 || titles[0] != "Goal" {
		t.Errorf("sections %q", titles)
	}
	if r.Estimated != 0 || r.Calls != res.Calls || r.Points[len(r.Points)-1].Tokens <= 0 {
		t.Errorf("%d calls, %d estimated", r.Calls, r.Estimated)
	}
	// The page lists the files of the whole path: those the compaction
	// listed, and those touched after it.
	listed := map[string]string{}
	for _, f := range r.ReadFiles {
		listed[f] = "read"
	}
	for _, f := range r.ModifiedFiles {
		listed[f] = "modified"
	}
	for _, f := range run.ModifiedFiles {
		if listed[f] != "modified" {
			t.Errorf("%s, modified before the compaction, is listed as %q", f, listed[f])
		}
	}
	for _, f := range run.ReadFiles {
		if listed[f] == "" {
			t.Errorf("%s, read before the compaction, is not listed", f)
		}
	}
	if len(listed) <= len(run.ReadFiles)+len(run.ModifiedFiles) {
		t.Errorf("files %v %v: none of those touched after the compaction", r.ReadFiles, r.ModifiedFiles)
	}

	// Human output.
	contains(t, "report", c.ok("report", file, "-o", out), "wrote "+out, "1 compaction", "1 context edit")
}

// TestReportFixtures writes the report of the real sessions with the
// default output name, in the current folder.
func TestReportFixtures(t *testing.T) {
	eachFixture(t, func(t *testing.T, c *cli, file string) {
		before := readFile(t, file)
		t.Chdir(t.TempDir())
		var res reportResult
		c.okJSON(&res, "report", "--json", file)
		want := strings.TrimSuffix(filepath.Base(file), ".jsonl") + ".report.html"
		if res.Output != want {
			t.Errorf("default output %q, want %q", res.Output, want)
		}
		fi, err := os.Stat(want)
		if err != nil || fi.Size() != int64(res.Bytes) || fi.Mode().Perm() != 0o644 {
			t.Errorf("output: %v, %v", fi, err)
		}
		if string(readFile(t, file)) != string(before) {
			t.Error("report changed the session file")
		}
		entries, _ := os.ReadDir(".")
		if len(entries) != 1 {
			t.Errorf("the folder holds %d files, want only the report (no temporary file left)", len(entries))
		}
	})
}

func TestReportErrors(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	file := sharedtest.TempCopy(t, demoSession)
	missing := filepath.Join(dir, "nope.jsonl")
	tests := []struct {
		name string
		code int
		args []string
		want []string
	}{
		{"missing file", exitFailure, []string{"report", missing, "-o", filepath.Join(dir, "a.html")}, []string{missing}},
		{"missing folder", exitUsage, []string{"report", file, "-o", filepath.Join(dir, "no", "a.html")}, []string{"folder " + filepath.Join(dir, "no") + " does not exist"}},
		{"output is a folder", exitUsage, []string{"report", file, "-o", dir}, []string{"is a folder"}},
		{"output is the input", exitUsage, []string{"report", file, "-o", file}, []string{"is the session file itself"}},
		{"output is the input by another name", exitUsage, []string{"report", file, "-o", filepath.Join(filepath.Dir(file), ".", filepath.Base(file))}, []string{"is the session file itself"}},
		{"no file", exitUsage, []string{"report"}, []string{"missing the session FILE"}},
		{"two files", exitUsage, []string{"report", file, file}, []string{"takes one session FILE"}},
		{"unknown leaf", exitFailure, []string{"report", file, "--leaf", "00000000", "-o", filepath.Join(dir, "b.html")}, []string{"--leaf", "00000000"}},
		{"bad window", exitUsage, []string{"report", file, "--window", "-3", "-o", filepath.Join(dir, "c.html")}, []string{"--window"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			contains(t, tt.name, c.fails(tt.code, tt.args...), tt.want...)
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed report left %d files in %s", len(entries), dir)
	}
	if string(readFile(t, file)) != string(readFile(t, demoSession)) {
		t.Error("a failed report changed the session")
	}

	// A hard link to the input is the input too.
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Link(file, link); err == nil {
		contains(t, "hard link", c.fails(exitUsage, "report", file, "-o", link), "is the session file itself")
	}

	// An existing report is replaced.
	out := filepath.Join(dir, "old.html")
	writeFile(t, out, "old")
	c.ok("report", file, "-o", out)
	if !strings.HasPrefix(string(readFile(t, out)), "<!DOCTYPE html>") {
		t.Error("the old report was not replaced")
	}
}

func TestReportHelp(t *testing.T) {
	c := newCLI(t)
	contains(t, "report --help", c.ok("report", "--help"), "report FILE [-o OUT]", "--output", ".report.html", "--leaf", "--window", "--policy", "compact --help")
	contains(t, "--help", c.ok("--help"), "Write an HTML report of the context over the session")
}

func TestDefaultReportPath(t *testing.T) {
	eachCase(t, "defaultReportPath", defaultReportPath, map[string]string{
		"s.jsonl": "s.report.html", "/a/b/s.jsonl": "s.report.html", "noext": "noext.report.html", ".hidden": ".hidden.report.html", "a.b.jsonl": "a.b.report.html",
	})
}

// TestCommandReference: the command reference, docs/cli.md, has a
// section for every command, and each section mentions every flag of its
// command, so that a new flag cannot go undocumented.
func TestCommandReference(t *testing.T) {
	doc := string(readFile(t, "../../docs/cli.md"))
	a := &app{getenv: func(string) string { return "" }}
	cmds := a.rootCommand().Commands()
	if len(cmds) < 10 {
		t.Fatalf("%d commands", len(cmds))
	}
	// Subcommands ("proxy status") have sections of their own.
	for _, cmd := range cmds {
		cmds = append(cmds, cmd.Commands()...)
	}
	for _, cmd := range cmds {
		name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		i := strings.Index(doc, "### `compact "+name)
		if i < 0 {
			t.Errorf("docs/cli.md has no section on compact %s", name)
			continue
		}
		section := doc[i:]
		if j := strings.Index(section[4:], "\n##"); j >= 0 {
			section = section[:j+4]
		}
		for _, f := range regexp.MustCompile(`--[a-z-]+`).FindAllString(cmd.LocalFlags().FlagUsages(), -1) {
			if f != "--help" && !strings.Contains(section, "`"+f) {
				t.Errorf("the section on compact %s in docs/cli.md does not mention %s", name, f)
			}
		}
	}
}
