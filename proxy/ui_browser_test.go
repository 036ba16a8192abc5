package proxy

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/internal/testing/agentloop"
	"github.com/compactkit/compact/internal/testing/browser"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/proxy/store"
)

// uiWidth is the width the live view must fit without a horizontal
// scroll.
const uiWidth = 1280

// TestUIInBrowser opens the live view in a headless Chromium while a
// scripted Claude-Code-like agent (Anthropic Messages, streamed, thinking
// on) works through the proxy, and looks at it at three moments: before
// the first compaction, after it, and after a compaction made on a cold
// cache (the proxy's clock moved past the cache lifetime). At each it
// waits for the page to update itself, checks that what it shows equals
// what the conversation API says, and saves a screenshot
// (1-before-compaction.png, 2-after-compaction.png, 3-after-cold-cache.png
// in $COMPACT_SCREENSHOT_DIR, else a temporary folder, logged). It also
// checks that a summary section closes and opens on a click and stays as
// the reader left it across updates, that the page fits 1280 px, and
// that it made no request but to its own URL and raised no error.
func TestUIInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	chrome := browser.Start(t, uiWidth, 900)
	var mu sync.Mutex
	var offset time.Duration
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	fake := fakeupstream.New(fakeupstream.Config{Window: 60000, Steps: 70, OutputLines: 2000})
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	st := store.NewMemory(store.MemoryOptions{Now: clock})
	_, ts := proxyIn(t, up.URL, Config{Window: 60000, Policy: compact.Reserve{Tokens: 12000}, Now: clock, Store: st})
	tab, ev := browser.Tab(t, chrome)
	shots := browser.ShotDir(t)
	page := ts.URL + UIPath

	eval := func(expr string) any { t.Helper(); return browser.Eval(t, tab, expr) }
	text := func(sel string) string {
		t.Helper()
		v, _ := eval(fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent.trim()`, sel)).(string)
		return v
	}
	// dd is the text of the value of the term dt among the <div>s that
	// sel selects (a <dl> of the page), "(none)" when there is none.
	dd := func(sel, dt string) any {
		t.Helper()
		return eval(fmt.Sprintf(`(() => { for (const d of document.querySelectorAll(%q)) if (d.querySelector("dt").textContent === %q) return d.querySelector("dd").textContent.trim(); return "(none)"; })()`, sel, dt))
	}
	// showing waits until the page (updating itself) shows the request
	// count the API gives: the loop waits meanwhile, so the two agree.
	showing := func(c Conversation) {
		t.Helper()
		want := numfmt.Thousands(c.Requests)
		deadline := time.Now().Add(20 * time.Second)
		for text("#conversations tbody tr td:nth-child(6)") != want {
			if time.Now().After(deadline) {
				t.Fatalf("the page shows %q requests after 20 s, the API %s", text("#conversations tbody tr td:nth-child(6)"), want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	shoot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		path := filepath.Join(shots, name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s (%d bytes)", path, len(png))
	}
	// common checks what every moment shows: the row and the facts of
	// the conversation, the chart's points, the latest request, the fit.
	common := func(c Conversation) {
		t.Helper()
		row := map[string]string{
			"td:nth-child(1) code": c.ID, "td:nth-child(3)": c.Model, "td:nth-child(6)": numfmt.Thousands(c.Requests),
			"td:nth-child(7)": numfmt.Thousands(c.Compactions), "td:nth-child(8)": numfmt.Share(*c.CacheReadShare),
			"td:nth-child(9)": costText(c.CostUSD, c.Unpriced), "td:nth-child(10)": numfmt.Thousands(c.TokensSaved),
		}
		for sel, want := range row {
			if got := text("#conversations tbody tr " + sel); got != want {
				t.Errorf("conversation row, %s: %q, the API says %q", sel, got, want)
			}
		}
		if got := text("#conversations tbody tr td:nth-child(2)"); got != "agentloop/1" {
			t.Errorf("agent %q, want the agent's own name agentloop/1", got)
		}
		if got, want := text("#conversations tbody tr td:nth-child(4)"), numfmt.Thousands(c.Tokens)+" / "+numfmt.Thousands(c.Trigger); got != want {
			t.Errorf("context cell %q, want %q", got, want)
		}
		points := 0
		for _, m := range c.Timeline {
			if m.Prompt > 0 || m.Client > 0 {
				points++
			}
		}
		if n := eval(`document.querySelectorAll("#chart svg.chart circle.point").length`); n != float64(points) {
			t.Errorf("the chart has %v points, the timeline %d requests", n, points)
		}
		if got, want := text("#request .upstream .big"), numfmt.Thousands(c.Request.UpstreamTokens)+" tokens"; got != want {
			t.Errorf("upstream received %q, the API says %q", got, want)
		}
		if got, want := text("#request .client .big"), "~"+numfmt.Thousands(c.Request.ClientTokens)+" tokens"; got != want {
			t.Errorf("the client sent %q, the API says %q", got, want)
		}
		fact := func(dt string) any { return dd("#conversation > .facts > div", dt) }
		if c.CacheSavedUSD == nil || c.CompactionSavedUSD == nil {
			t.Errorf("priced model, but the savings are unknown: cache %v, compaction %v", c.CacheSavedUSD, c.CompactionSavedUSD)
		} else {
			if got := fact("Saved by the provider's cache"); got != numfmt.Dollars(*c.CacheSavedUSD) {
				t.Errorf("saved by the cache %q, the API says %v", got, *c.CacheSavedUSD)
			}
			if c.TokensSaved > 0 {
				if got, want := fact("Tokens saved"), numfmt.Thousands(c.TokensSaved)+" (≥ "+numfmt.Dollars(*c.CompactionSavedUSD)+")"; got != want {
					t.Errorf("tokens saved %q, want %q", got, want)
				}
			}
		}
		if m := c.LastMiss; m == nil {
			if got := text("#cache-miss"); !strings.Contains(got, "None recorded") {
				t.Errorf("no cache miss in the API, the page says %q", got)
			}
		} else {
			if got := text("#cache-miss .pill"); got != missName(m.Cause) {
				t.Errorf("cache miss cause %q, the API says %s", got, m.Cause)
			}
			if got, want := text("#cache-miss .miss"), fmt.Sprintf("%s of the %s tokens", numfmt.Thousands(m.Read), numfmt.Thousands(m.Expected)); !strings.Contains(got, want) {
				t.Errorf("cache miss %q, want it to say %q", got, want)
			}
		}
		if sw := eval(`document.documentElement.scrollWidth`); sw.(float64) > uiWidth {
			t.Errorf("scrollWidth %v: the page does not fit %d px", sw, uiWidth)
		}
		if n := eval(`[...document.querySelectorAll("#conversations td, #conversations th")].filter(td => td.scrollWidth > td.clientWidth + 1).map(td => td.textContent.trim()).join(" | ")`); n != "" {
			t.Errorf("cells of the conversations table clipped: %v", n)
		}
	}
	// cards checks the compaction cards against the API's.
	cards := func(c Conversation) {
		t.Helper()
		if n := eval(`document.querySelectorAll("#compactions .card").length`); n != float64(len(c.Cards)) {
			t.Fatalf("%v cards on the page, %d in the API", n, len(c.Cards))
		}
		for i, card := range c.Cards {
			sel := fmt.Sprintf("#card-%d", c.Compactions-i)
			for dt, want := range map[string]string{"Before": numfmt.Thousands(card.TokensBefore), "After": numfmt.Thousands(card.TokensAfter),
				"Freed": numfmt.Thousands(card.TokensBefore - card.TokensAfter), "Reason": string(card.Reason)} {
				if got := dd(sel+" .numbers > div", dt); got != want {
					t.Errorf("%s %s: %q, the API says %q", sel, dt, got, want)
				}
			}
		}
		marks := 0
		for _, m := range c.Timeline {
			if m.Compaction {
				marks++
			}
		}
		if n := eval(`document.querySelectorAll("#chart svg.chart [data-marker]").length`); n != float64(marks) {
			t.Errorf("the chart has %v markers, the timeline %d compactions", n, marks)
		}
		if got, want := text("#request .diverge"), fmt.Sprintf("They differ from message 1 to message %s", numfmt.Thousands(c.Request.Replaced)); !strings.HasPrefix(got, want) {
			t.Errorf("the latest request: %q, want it to start %q", got, want)
		}
	}

	phase := 0
	between := func(turn int) {
		var list ConversationList
		getJSON(t, ts.URL+ConversationsPath, &list)
		if len(list.Conversations) > 1 {
			t.Fatalf("%d conversations, want the agent's one", len(list.Conversations))
		}
		if len(list.Conversations) == 0 {
			return // the first answer is recorded after it ended
		}
		// The answer of this turn is recorded after it ended: wait for
		// it, so that the API and the page speak of the same requests.
		var c Conversation
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			getJSON(t, ts.URL+ConversationsPath+"/"+list.Conversations[0].ID, &c)
			if c.Requests >= turn {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after turn %d the API counts %d requests", turn, c.Requests)
			}
		}
		switch {
		case phase == 0:
			if err := chromedp.Do(tab, chromedp.EmulateViewport(uiWidth, 900), chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("footer"))); err != nil {
				t.Fatalf("open %s: %v", page, err)
			}
			phase = 1
		case phase == 1 && c.Fill >= 0.6:
			if c.Compactions != 0 {
				t.Fatalf("compacted before 60%% of the trigger: %+v", c.ConversationRow)
			}
			showing(c)
			common(c)
			if got := text("#compactions"); !strings.Contains(got, "No compaction yet.") {
				t.Errorf("before the first compaction the cards say %q", got)
			}
			shoot("1-before-compaction.png")
			phase = 2
		case phase == 2 && c.Compactions >= 1:
			showing(c)
			common(c)
			cards(c)
			if c.Cards[0].Ahead && len(c.Cards[0].SummaryRequests) == 0 {
				t.Errorf("a summary written ahead shows no summary request: %+v", c.Cards[0])
			}
			if c.LastMiss == nil || c.LastMiss.Cause != store.MissCompaction {
				t.Errorf("after the first compaction the last cache miss is %+v, want the compaction's", c.LastMiss)
			}
			collapse(t, tab, eval)
			shoot("2-after-compaction.png")
			phase = 3
		case phase == 3 && c.Fill >= 0.55:
			// Idle past the cache's lifetime: the next request finds a
			// cold cache above the cold mark.
			mu.Lock()
			offset += 6 * time.Minute
			mu.Unlock()
			phase = 4
		case phase == 4:
			if c.Cards[0].Reason != compact.ReasonIdle {
				t.Fatalf("after six idle minutes the newest compaction is %q, want idle", c.Cards[0].Reason)
			}
			showing(c)
			common(c)
			cards(c)
			if got := text(fmt.Sprintf("#card-%d .badge", c.Compactions)); got != "cold cache (idle)" {
				t.Errorf("the cold-cache card's badge says %q", got)
			}
			if n := eval(`document.querySelectorAll("#chart svg.chart [data-marker=idle]").length`); n != 1.0 {
				t.Errorf("%v cold-cache markers on the chart, want 1", n)
			}
			shoot("3-after-cold-cache.png")
			phase = 5
		}
	}
	res, err := agentloop.Run(context.Background(), agentloop.Options{API: agentloop.Anthropic, BaseURL: ts.URL, Stream: true,
		Thinking: "adaptive", Model: "claude-sonnet-4-5", Turns: 71, Between: func(turn int) {
			if phase < 5 && !t.Failed() {
				between(turn)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if phase != 5 {
		t.Fatalf("the loop ended (%d turns) at moment %d of 5", len(res.Turns), phase)
	}
	requests, errs := ev.Snapshot()
	for _, e := range errs {
		t.Errorf("console: %s", e)
	}
	for _, r := range requests {
		if r != page {
			t.Errorf("the page requested %s; it may only load itself", r)
		}
	}
	if len(requests) < 3 {
		t.Errorf("%d requests of the page: it did not update itself", len(requests))
	}
}

// collapse checks that an open summary section closes on a click on its
// heading, hides its text, and stays closed when the page updates itself;
// and that "Expand all" opens every section.
func collapse(t *testing.T, tab context.Context, eval func(string) any) {
	t.Helper()
	if eval(`(() => { const d = document.querySelector(".card details[open]"); if (!d) return false; d.id = "probe"; return true; })()`) != true {
		t.Fatal("no open summary section")
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#probe > summary"))); err != nil {
		t.Fatal(err)
	}
	if eval(`!document.querySelector("#probe").open && !document.querySelector("#probe .body").checkVisibility()`) != true {
		t.Fatal("a click on an open section's heading did not close it")
	}
	// The next update replaces the content: the section stays closed.
	eval(`document.getElementById("live").dataset.old = "1"`)
	deadline := time.Now().Add(10 * time.Second)
	for eval(`document.getElementById("live").dataset.old === "1"`) == true {
		if time.Now().After(deadline) {
			t.Fatal("the page did not update itself in 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := eval(`document.querySelectorAll(".card details:not([open])").length`); n == 0.0 {
		t.Error("after the update every section is open again: the reader's choice was lost")
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`#compactions button[data-action=expand]`))); err != nil {
		t.Fatal(err)
	}
	if n := eval(`document.querySelectorAll(".card details:not([open])").length`); n != 0.0 {
		t.Errorf("after Expand all, %v sections are closed", n)
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`#compactions button[data-action=collapse]`))); err != nil {
		t.Fatal(err)
	}
	if n := eval(`document.querySelectorAll(".card details[open]").length`); n != 0.0 {
		t.Errorf("after Collapse all, %v sections are open", n)
	}
	// Open again the ones the page opens by default, for the screenshot.
	eval(`document.querySelectorAll(".card details").forEach(d => { if (/Goal|Next|Progress|Turn Request/.test(d.querySelector("summary").textContent)) d.open = true; })`)
}
