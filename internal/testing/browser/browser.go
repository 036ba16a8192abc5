// Package browser drives Debian's Chromium, headless, for the tests of
// the pages compact writes (the report) and serves (the proxy's live
// view): it starts the browser on a closed network, opens tabs that
// record every request and console error, and evaluates expressions.
//
// It uses github.com/chromedp/chromedp, the maintained Go client of the
// DevTools protocol, rather than a hand-written one.
package browser

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ChromiumPath is Debian's Chromium.
const ChromiumPath = "/usr/bin/chromium"

// Start starts a headless Chromium for t with a window of width × height
// pixels and returns its context; it stops when t ends. t is skipped
// when Chromium is missing, unless COMPACT_REQUIRE_CHROMIUM=1 (CI), which
// makes that a failure.
func Start(t testing.TB, width, height int) context.Context {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("COMPACT_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("COMPACT_REQUIRE_CHROMIUM=1 but %s is missing (apt-get install chromium): %v", ChromiumPath, err)
		}
		t.Skipf("%s is missing (apt-get install chromium, or set COMPACT_REQUIRE_CHROMIUM=1 to fail): %v", ChromiumPath, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	b, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc(); cancel() })
	if err := chromedp.Do(b); err != nil {
		t.Fatalf("start %s: %v", ChromiumPath, err)
	}
	return b
}

// Events is what a tab's pages did: the requests they made and the
// console errors and uncaught exceptions they raised.
type Events struct {
	mu       sync.Mutex
	requests []string
	errors   []string
}

func (e *Events) add(list *[]string, s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	*list = append(*list, s)
}

// Snapshot returns the requests and errors so far.
func (e *Events) Snapshot() (requests, errors []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.requests...), append([]string(nil), e.errors...)
}

// Tab opens a new tab of browser whose events are recorded from its
// start, so that no request and no message is missed; it closes when t
// ends.
func Tab(t testing.TB, browser context.Context) (context.Context, *Events) {
	ev := &Events{}
	tab, cancel := chromedp.NewContext(browser, chromedp.WithListener(func(e any) {
		switch e := e.(type) {
		case *network.EventRequestWillBeSent:
			ev.add(&ev.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == "error" || e.Type == "assert" {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				ev.add(&ev.errors, "console."+string(e.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			ev.add(&ev.errors, "exception: "+e.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				ev.add(&ev.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}))
	t.Cleanup(cancel)
	return tab, ev
}

// Eval evaluates the JavaScript expression expr in tab and returns its
// value (numbers come back as float64), failing t when it throws.
func Eval(t testing.TB, tab context.Context, expr string) any {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[any](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// ShotDir is where tests save their screenshots: $COMPACT_SCREENSHOT_DIR
// when set (CI keeps it), else a temporary folder of t.
func ShotDir(t testing.TB) string {
	if d := os.Getenv("COMPACT_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}
