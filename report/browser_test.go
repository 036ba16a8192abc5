package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/browser"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// pageWidth is the width the page must fit without a horizontal scroll.
const pageWidth = 1280

// browserPage is one report the browser test opens.
type browserPage struct {
	name string
	r    *Report
}

// TestBrowser opens reports in a headless Chromium from file:// URLs, on
// a closed network, and checks what a reader sees: no console error, no
// request but the page itself, one chart point per model call and one
// marker per compaction or edit, no horizontal scroll at 1280 px, a
// closed summary section that opens on a click, every section shown
// when printing, and a PDF. It saves a screenshot of each page in the
// test's temporary folder, or in $COMPACT_SCREENSHOT_DIR when set, and
// logs its path.
//
// It skips when Chromium is missing, unless COMPACT_REQUIRE_CHROMIUM=1
// (CI), which makes that a failure.
func TestBrowser(t *testing.T) {
	chrome := browser.Start(t, pageWidth, 900)
	small, err := Build(smallInput(t))
	if err != nil {
		t.Fatal(err)
	}
	pages := []browserPage{{"small", small}}
	if _, explicit, err := sharedtest.Lookup(); explicit || err == nil {
		s := realSession(t, "before-compaction.jsonl")
		h := s.Header()
		r, err := Build(Input{File: "before-compaction.jsonl", SessionID: h.ID, Cwd: h.Cwd, Entries: s.Entries(), Path: s.Path(),
			Model: compact.ModelInfo{ID: "claude-opus-4-5", ContextWindow: 200000}})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, browserPage{"before-compaction", r})
	}

	shots := browser.ShotDir(t)
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), p.name+".report.html")
			var b bytes.Buffer
			if err := Render(&b, p.r); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			checkInBrowser(t, chrome, p.r, "file://"+file, filepath.Join(shots, p.name+".png"))
		})
	}
}

// checkInBrowser opens url in a new tab and checks the page of r.
func checkInBrowser(t *testing.T, chrome context.Context, r *Report, url, shot string) {
	tab, ev := browser.Tab(t, chrome)
	eval := func(expr string) any {
		t.Helper()
		return browser.Eval(t, tab, expr)
	}
	err := chromedp.Do(tab,
		chromedp.EmulateViewport(pageWidth, 900),
		chromedp.Navigate(url),
		chromedp.WaitReady(chromedp.CSS("footer")),
	)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	// Numbers come back from JavaScript as float64.
	if n := eval(`document.querySelectorAll("svg.chart circle.point").length`); n != float64(r.Calls) || r.Calls != len(r.Points) {
		t.Errorf("the chart has %v points, want one per model call: %d", n, r.Calls)
	}
	if n := eval(`document.querySelectorAll("svg.chart [data-marker]").length`); n != float64(r.Compactions+r.Edits) || len(r.Markers) != r.Compactions+r.Edits {
		t.Errorf("the chart has %v markers, want one per compaction and edit: %d + %d", n, r.Compactions, r.Edits)
	}
	sw, cw := eval(`document.documentElement.scrollWidth`), eval(`document.documentElement.clientWidth`)
	if sw.(float64) > pageWidth || cw != float64(pageWidth) {
		t.Errorf("scrollWidth %v, clientWidth %v: the page does not fit %d px", sw, cw, pageWidth)
	}

	// A closed section opens on a click on its heading and shows its text.
	if eval(`(() => {
		const d = document.querySelector(".card details:not([open])");
		if (!d) return false;
		d.id = "probe";
		return true;
	})()`) == true {
		hiddenBefore := eval(`!document.querySelector("#probe").open && !document.querySelector("#probe .body").checkVisibility()`)
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#probe > summary"))); err != nil {
			t.Fatal(err)
		}
		visibleAfter := eval(`document.querySelector("#probe").open && document.querySelector("#probe .body").checkVisibility()`)
		text := eval(`document.querySelector("#probe .body").innerText.trim()`)
		if hiddenBefore != true || visibleAfter != true || text == "" {
			t.Errorf("closed section: hidden before the click %v, shown after it %v, text %q", hiddenBefore, visibleAfter, text)
		}
		// Closed again, it shows all the same in print, and the buttons
		// do not.
		eval(`document.querySelector("#probe").open = false`)
		if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
			t.Fatal(err)
		}
		printed := eval(`document.querySelector("#probe .body").checkVisibility() &&
			getComputedStyle(document.querySelector(".actions")).display === "none"`)
		if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
			t.Fatal(err)
		}
		if printed != true {
			t.Error("in print, a closed section's content is hidden or the buttons show")
		}
	} else if len(r.Cards) > 0 {
		t.Error("no closed summary section to open")
	}

	pdf, err := chromedp.Run(tab, chromedp.PrintToPDF(chromedp.PDFPrintBackground()))
	if err != nil {
		t.Fatalf("print to PDF: %v", err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || len(pdf) < 10000 {
		t.Errorf("PDF of %d bytes starting %q", len(pdf), pdf[:min(len(pdf), 8)])
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("the screenshot is not a PNG")
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes); PDF: %d bytes", shot, len(png), len(pdf))

	requests, errs := ev.Snapshot()
	for _, e := range errs {
		t.Errorf("console: %s", e)
	}
	if len(requests) != 1 || requests[0] != url {
		t.Errorf("requests %q, want only the page %s", requests, url)
	}
}
