package proxy

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/compactkit/compact/internal/jsontext"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/proxy/store"
	"github.com/compactkit/compact/report"
)

// UIPath is where the proxy serves its live view: one self-contained
// HTML page (no external assets, works offline) of the conversations it
// keeps, each with its timeline, its compaction cards, its latest
// request beside what went upstream, and its last cache miss. The page
// reloads its content every few seconds while it is open.
//
// Like the conversation API, it answers loopback clients only unless
// the proxy has a token (Config.AuthToken). With a token, a browser
// signs in once on the page (the token goes in a form, never in a URL)
// and gets a cookie valid for the page alone; scripts may send the
// token's header as for the API.
const UIPath = "/ui"

// uiCookie is the name of the live view's sign-in cookie.
const uiCookie = "compact_ui"

// uiRefresh is how often the open page reloads its content.
const uiRefresh = 2 * time.Second

// uiRows bounds the conversations the page lists: the most recent ones
// of the first page the store lists.
const uiRows = 100

//go:embed assets/ui.html assets/ui.css assets/ui.js
var uiAssets embed.FS

// uiTemplate is the page's template; parsing an embedded file cannot
// fail once the package builds, which TestUI checks.
var uiTemplate = template.Must(template.New("ui.html").Funcs(template.FuncMap{
	"num":      numfmt.Thousands,
	"ago":      numfmt.Ago,
	"dollars":  numfmt.Dollars,
	"cost":     costText,
	"duration": numfmt.Duration,
	"share": func(s *float64) string {
		if s == nil {
			return "–"
		}
		return numfmt.Share(*s)
	},
	"pct": func(part, whole int) string {
		if whole <= 0 {
			return "–"
		}
		return numfmt.Share(float64(part) / float64(whole))
	},
	"missName":  missName,
	"sentence":  sentence,
	"inc":       func(n int) int { return n + 1 },
	"dec":       func(n int) int { return n - 1 },
	"fillWidth": func(f float64) float64 { return float64(int(min(max(f, 0), 1)*1000+0.5)) / 10 },
	"clock":     func(t time.Time) string { return t.UTC().Format("15:04:05 MST") },
	"stamp":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 MST") },
}).ParseFS(uiAssets, "assets/ui.html"))

// uiPage is what the page's template receives.
type uiPage struct {
	Now     time.Time
	Refresh int64 // milliseconds
	CSS     template.CSS
	JS      template.JS
	// Rows are the listed conversations, most recent first; More is set
	// when the store holds more than the page lists.
	Rows []ConversationRow
	More bool
	// Totals sum the listed rows.
	Requests, Compactions, TokensSaved int
	CostUSD                            float64
	CacheReadShare                     *float64
	// CacheSavedUSD sums the rows' cache savings, nil when none is
	// priced.
	CacheSavedUSD *float64
	// Sel is the conversation shown in full (the one asked for, or the
	// most recent), nil when there is none; Problem says why the one
	// asked for is not shown.
	Sel     *uiConversation
	Problem string
	// Login is set on the sign-in page; LoginFailed after a wrong token.
	Login, LoginFailed bool
}

// uiConversation is one conversation as the page shows it.
type uiConversation struct {
	Conversation
	Policy string
	// Chart and Cards are the report's own rendering of the timeline and
	// of the compaction cards.
	ChartHTML, CardsHTML template.HTML
	// Kept is how many compactions the proxy keeps the text of.
	Kept int
	// Bar holds the widths (percent of the larger request) of the two
	// requests' parts: the client's replaced and kept messages, the
	// upstream's summary and kept messages.
	Bar *uiBars
}

// uiBars sizes the side-by-side bars of the latest request, in percent of
// the larger of the two requests.
type uiBars struct {
	ClientReplaced, ClientKept, UpSummary, UpKept float64
	KeptTokens                                    int
}

// serveUI answers the live view: the page, or the sign-in page and its
// form when the proxy has a token and the browser has not signed in.
func (s *Server) serveUI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	// Everything the page needs is in it: nothing else may load.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	if !s.authOn && !loopbackClient(r) {
		http.Error(w, "compact proxy: the live view answers loopback clients only unless the proxy has a token (--auth-token-file)", http.StatusForbidden)
		return
	}
	if r.URL.Path == UIPath+"/login" {
		s.uiLogin(w, r)
		return
	}
	if r.URL.Path != UIPath && r.URL.Path != UIPath+"/" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "compact proxy: the live view answers GET only", http.StatusMethodNotAllowed)
		return
	}
	if s.authOn && !s.authorized(r) && !s.uiSignedIn(r) {
		s.renderUI(w, http.StatusUnauthorized, &uiPage{Login: true, LoginFailed: r.URL.Query().Get("failed") == "1"})
		return
	}
	p, status := s.uiPageFor(r)
	s.renderUI(w, status, p)
}

// uiLogin takes the sign-in form: the proxy token in a POST, answered
// with the page's cookie and a redirect to it, or back to the form.
func (s *Server) uiLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "compact proxy: sign in with the form of "+UIPath, http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if !s.authOn || s.tokenMatches(r.PostFormValue("token")) {
		if s.authOn {
			http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: s.uiCookieValue(), Path: UIPath, HttpOnly: true,
				SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		}
		http.Redirect(w, r, UIPath, http.StatusSeeOther)
		return
	}
	s.log.Info("live view: sign-in refused (wrong token)", "remote", r.RemoteAddr)
	http.Redirect(w, r, UIPath+"?failed=1", http.StatusSeeOther)
}

// tokenMatches compares tok with the proxy token in constant time.
func (s *Server) tokenMatches(tok string) bool {
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], s.authSum[:]) == 1
}

// uiCookieValue is the sign-in cookie's value: derived from the token,
// so that the cookie is not the token itself.
func (s *Server) uiCookieValue() string {
	sum := sha256.Sum256(append([]byte("compact proxy live view\x00"), s.authSum[:]...))
	return hex.EncodeToString(sum[:])
}

// uiSignedIn reports whether r carries the live view's cookie.
func (s *Server) uiSignedIn(r *http.Request) bool {
	c, err := r.Cookie(uiCookie)
	if err != nil {
		return false
	}
	want := s.uiCookieValue()
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(want)) == 1
}

// uiPageFor reads what the page shows: the conversations, and the one
// asked for (?c=ID) or the most recent in full.
func (s *Server) uiPageFor(r *http.Request) (*uiPage, int) {
	p := &uiPage{Now: s.now().UTC()}
	l, ok := s.store.(store.Lister)
	if !ok {
		p.Problem = "The store cannot list its conversations."
		return p, http.StatusNotImplemented
	}
	page, err := l.List(r.Context(), store.ListQuery{Prefix: conversationPrefix, Limit: store.MaxListLimit})
	if err != nil {
		s.warnEvery("uistore", "live view: store failed", "err", err)
		p.Problem = "The store did not answer: " + err.Error()
		return p, http.StatusServiceUnavailable
	}
	p.More = page.Next != ""
	recs := map[string]*store.Record{}
	for _, e := range page.Records {
		p.Rows = append(p.Rows, s.conversationRow(e.Key, e.Record))
		recs[e.Key] = e.Record
	}
	byActivity(p.Rows)
	if len(p.Rows) > uiRows {
		p.Rows, p.More = p.Rows[:uiRows], true
	}
	var all store.Tally
	var cacheSaved float64
	priced := false
	for _, row := range p.Rows {
		p.Requests += row.Requests
		p.Compactions += row.Compactions
		p.TokensSaved += row.TokensSaved
		p.CostUSD += row.CostUSD
		if v := row.CacheSavedUSD; v != nil {
			cacheSaved, priced = cacheSaved+*v, true
		}
		if rec := recs[row.Key]; rec.Last != nil {
			t := rec.Last.Totals
			all.Input, all.CacheRead, all.CacheWrite = all.Input+t.Input, all.CacheRead+t.CacheRead, all.CacheWrite+t.CacheWrite
		}
	}
	if share, ok := all.CacheReadShare(); ok {
		p.CacheReadShare = &share
	}
	if priced {
		p.CacheSavedUSD = &cacheSaved
	}

	key, rec := "", (*store.Record)(nil)
	if id := r.URL.Query().Get("c"); id != "" {
		k, found, err := s.findByID(r.Context(), id)
		switch {
		case err == nil:
			key, rec = k, found
		case err == errBadID:
			p.Problem = "Conversation id " + strconv.Quote(id) + ": want the 12 hex digits the log prints."
		default:
			p.Problem = "No conversation " + id + " (it never came, or expired)."
		}
	} else if len(p.Rows) > 0 {
		key = p.Rows[0].Key
		rec = recs[key]
	}
	if rec != nil {
		sel, err := s.uiConversation(key, rec)
		if err != nil {
			p.Problem = "The conversation could not be drawn: " + err.Error()
		}
		p.Sel = sel
	}
	p.Refresh = uiRefresh.Milliseconds()
	return p, http.StatusOK
}

// uiConversation builds one conversation for the page, with the report's
// chart and cards.
func (s *Server) uiConversation(key string, rec *store.Record) (*uiConversation, error) {
	c := &uiConversation{Conversation: s.conversation(key, rec, true)}
	if info, ok := s.modelInfo("", c.Model); ok {
		c.Policy = s.policyFor(info).Name()
	}
	c.Kept = len(c.Conversation.Cards)
	rep := reportOf(&c.Conversation, c.Policy)
	var chart, cards bytes.Buffer
	if err := report.WriteChart(&chart, rep); err != nil {
		return c, err
	}
	if err := report.WriteCards(&cards, rep); err != nil {
		return c, err
	}
	// The report's own templates escaped every value they wrote.
	c.ChartHTML, c.CardsHTML = template.HTML(chart.String()), template.HTML(cards.String())
	c.Bar = barsOf(c.Request)
	return c, nil
}

// barsOf sizes the side-by-side bars of the latest request.
func barsOf(sh *RequestShape) *uiBars {
	if sh == nil || sh.ClientTokens <= 0 || sh.UpstreamTokens <= 0 {
		return nil
	}
	b := &uiBars{}
	whole := float64(max(sh.ClientTokens, sh.UpstreamTokens))
	pct := func(n int) float64 { return float64(int(1000*float64(n)/whole+0.5)) / 10 }
	if sh.Replaced == 0 {
		b.ClientKept, b.UpKept = pct(sh.ClientTokens), pct(sh.UpstreamTokens)
		b.KeptTokens = sh.UpstreamTokens
		return b
	}
	summary := min(sh.SummaryTokens, sh.UpstreamTokens)
	kept := sh.UpstreamTokens - summary
	b.KeptTokens = kept
	b.ClientReplaced, b.ClientKept = pct(max(sh.ClientTokens-kept, 0)), pct(min(kept, sh.ClientTokens))
	b.UpSummary, b.UpKept = pct(summary), pct(kept)
	return b
}

// reportOf maps a conversation onto the report's model: one point per
// answered request of the timeline (what went upstream, as the provider
// counted it), one marker and one card per compaction.
func reportOf(c *Conversation, policy string) *report.Report {
	r := &report.Report{File: c.ID, Model: c.Model, Window: c.Window, Policy: policy, Trigger: c.Trigger,
		ColdCache: true, Compactions: c.Compactions}
	// The cards come newest first; card i is compaction Compactions-i.
	for i := len(c.Cards) - 1; i >= 0; i-- {
		r.Cards = append(r.Cards, reportCard(&c.Cards[i], c.Compactions-i, c.Cards, i))
	}
	// Compaction marks of the timeline, newest first, meet the cards in
	// the same order.
	marks := 0
	for _, m := range c.Timeline {
		if m.Compaction {
			marks++
		}
	}
	seen := 0
	for _, m := range c.Timeline {
		tokens, estimated := m.Prompt, false
		if tokens <= 0 {
			if m.Client <= 0 {
				continue
			}
			tokens, estimated = m.Client, true
		}
		call := len(r.Points) + 1
		if m.Compaction {
			newer := marks - seen - 1 // compactions after this one on the timeline
			seen++
			mk := report.Marker{Kind: report.KindAutomatic, AfterCall: call - 1, TokensBefore: m.Client, TokensAfter: tokens}
			if newer < len(c.Cards) {
				card := &c.Cards[newer]
				// Before is what the proxy measured (with an earlier summary
				// in place), not the client's whole history.
				mk.Kind, mk.Label, mk.Card = report.KindOf(string(card.Reason)), string(card.Reason), c.Compactions-newer
				mk.TokensBefore = card.TokensBefore
			}
			r.Markers = append(r.Markers, mk)
		}
		r.Points = append(r.Points, report.Point{Call: call, Tokens: tokens, Estimated: estimated})
	}
	r.Calls = len(r.Points)
	return r
}

// reportCard maps compaction card cards[i], numbered n, onto the report's
// card.
func reportCard(cc *CompactionCard, n int, cards []CompactionCard, i int) report.Card {
	k := report.Card{Number: n, Timestamp: cc.Created.UTC().Format("2006-01-02 15:04:05 MST"), Kind: report.KindOf(string(cc.Reason)),
		Reason: string(cc.Reason), TokensBefore: cc.TokensBefore, TokensAfter: cc.TokensAfter, Freed: cc.TokensBefore - cc.TokensAfter,
		Summarized: cc.FirstKeptUnit, Summarizer: cc.Summarizer, Intro: cc.Intro, Sections: cc.Sections,
		ReadFiles: cc.ReadFiles, ModifiedFiles: cc.ModifiedFiles}
	if i+1 < len(cards) {
		// The previous compaction's messages were already a summary.
		k.Summarized = max(cc.FirstKeptUnit-cards[i+1].FirstKeptUnit, 0)
	}
	if cc.Native != "" {
		k.Summarizer += " (the provider's own: " + cc.Native + ")"
	}
	k.FirstKept = "message " + numfmt.Thousands(cc.FirstKeptUnit+1)
	if cc.KeptRole != "" {
		k.FirstKept += ", " + string(cc.KeptRole)
	}
	if cc.KeptPreview != "" {
		k.FirstKept += ": «" + jsontext.Shorten(cc.KeptPreview, 90) + "»"
	}
	if cc.SummaryCostUSD != nil {
		k.Cost = numfmt.Dollars(*cc.SummaryCostUSD)
	}
	if cc.DurationMS > 0 {
		v := numfmt.Duration(cc.DurationMS)
		if cc.Ahead {
			v += ", written ahead: no request waited"
		}
		k.Facts = append(k.Facts, report.Fact{Label: "Took", Value: v})
	} else if cc.Ahead {
		k.Facts = append(k.Facts, report.Fact{Label: "Took", Value: "written ahead: no request waited"})
	}
	if len(cc.SummaryRequests) > 0 {
		read, prompt := 0, 0
		for _, sr := range cc.SummaryRequests {
			read += sr.CacheRead
			prompt += sr.Input + sr.CacheRead + sr.CacheWrite
		}
		v := strconv.Itoa(len(cc.SummaryRequests)) + " request"
		if len(cc.SummaryRequests) > 1 {
			v += "s"
		}
		if prompt > 0 {
			v += ", " + numfmt.Share(float64(read)/float64(prompt)) + " read from the cache"
		}
		k.Facts = append(k.Facts, report.Fact{Label: "Summary requests", Value: v})
	}
	return k
}

// missName names a cache miss's cause for people.
func missName(c store.MissCause) string {
	switch c {
	case store.MissCompaction:
		return "compaction (expected)"
	case store.MissIdle:
		return "idle past the cache lifetime"
	case store.MissPrefix:
		return "the prefix changed"
	case store.MissProvider:
		return "the provider did not reuse it"
	}
	return "cause unknown"
}

// sentence starts s with a capital letter.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// costText writes an estimated cost: "unknown" when none of the calls
// had known prices, a "+?" after it when some had none.
func costText(usd float64, unpriced int) string {
	switch {
	case unpriced > 0 && usd == 0:
		return "unknown"
	case unpriced > 0:
		return numfmt.Dollars(usd) + " +?"
	}
	return numfmt.Dollars(usd)
}

// renderUI writes the page with status.
func (s *Server) renderUI(w http.ResponseWriter, status int, p *uiPage) {
	css, _ := uiAssets.ReadFile("assets/ui.css") // embedded: there once the package builds
	js, _ := uiAssets.ReadFile("assets/ui.js")
	p.CSS = report.Stylesheet() + template.CSS(css)
	p.JS = report.Script() + template.JS(js)
	if p.Now.IsZero() {
		p.Now = s.now().UTC()
	}
	var buf bytes.Buffer
	if err := uiTemplate.Execute(&buf, p); err != nil {
		s.warnEvery("uirender", "live view: render failed", "err", err)
		http.Error(w, "compact proxy: the live view could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}
