package proxy

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
	"github.com/compactkit/compact/proxy/store"
	"github.com/compactkit/compact/report"
)

// ConversationsPath is where the proxy serves its conversation API:
// GET ConversationsPath lists the conversations it keeps (a
// ConversationList), GET ConversationsPath + "/" + id shows one (a
// Conversation). Without Config.AuthToken it answers loopback clients
// only; with it, anyone who presents the token.
const ConversationsPath = "/api/conversations"

// conversationPrefix starts the store keys of conversations (see
// identify); the copies kept under a session id ("s:") are not listed.
const conversationPrefix = "c:"

// ConversationList is the answer of GET /api/conversations: one page of
// the conversations the store keeps, in the order of their keys (the
// page itself is sorted by last activity, newest first).
type ConversationList struct {
	Conversations []ConversationRow `json:"conversations"`
	// Next is the cursor of the next page (?cursor=), "" after the last.
	Next string `json:"next,omitempty"`
}

// ConversationRow is one conversation of the list: what it is, how full
// it is, and what it used and cost so far.
type ConversationRow struct {
	// ID is the short id the proxy's log lines print ("conversation"),
	// Key the store key; /api/conversations/{id} takes either.
	ID  string `json:"id"`
	Key string `json:"key"`
	// Agent is the client as its headers name it (User-Agent, X-App),
	// IDSource the signal the conversation was recognised by ("header
	// x-claude-code-session-id", "body", "fingerprint"); Model is the
	// model of the last request.
	Agent    string `json:"agent,omitempty"`
	IDSource string `json:"idSource,omitempty"`
	Model    string `json:"model,omitempty"`
	// Tokens is the context size the provider reported for the last
	// request (as it went upstream); Window the model's context window
	// and Trigger the size at which it is compacted, 0 when unknown;
	// Fill is Tokens over Trigger.
	Tokens  int     `json:"tokens"`
	Window  int     `json:"window,omitempty"`
	Trigger int     `json:"trigger,omitempty"`
	Fill    float64 `json:"fill,omitempty"`
	// LastActivity is when the last answer ended (or the record was last
	// written, when no answer was recorded).
	LastActivity time.Time `json:"lastActivity"`
	// Requests counts the answered requests, Compactions the compactions
	// recorded.
	Requests    int `json:"requests"`
	Compactions int `json:"compactions"`
	// CacheReadShare is the share of the requests' prompt tokens read
	// from the provider's cache, from 0 to 1 (absent before any usage).
	CacheReadShare *float64 `json:"cacheReadShare,omitempty"`
	// CostUSD is the estimated cost of the requests and of the summaries
	// written for them (SummaryCostUSD of it), at list prices; Unpriced
	// counts the calls whose model has no known prices, not in CostUSD.
	CostUSD        float64 `json:"costUSD"`
	SummaryCostUSD float64 `json:"summaryCostUSD,omitempty"`
	Unpriced       int     `json:"unpriced,omitempty"`
	// TokensSaved is what the compactions kept out of the requests
	// (estimated: the context before minus after, per request).
	TokensSaved int `json:"tokensSaved"`
	// The savings apart, at the prices of the conversation's latest model
	// (absent when they are unknown): CacheSavedUSD is what the
	// provider's prompt cache saved the requests (compact.Prices.
	// CacheSavings: their prompts billed as uncached input, less what
	// they cost; negative when cache writes cost more than reads saved);
	// CompactionSavedUSD values TokensSaved at the cache-read price, the
	// least those tokens would have cost had they been sent.
	CacheSavedUSD      *float64 `json:"cacheSavedUSD,omitempty"`
	CompactionSavedUSD *float64 `json:"compactionSavedUSD,omitempty"`
	// Pending is the state of a summary written ahead of time: "writing"
	// (on this replica, now), "ready" (stored, swapped in when the
	// conversation crosses its trigger), "" for none.
	Pending string `json:"pending,omitempty"`
}

// Conversation is the answer of GET /api/conversations/{id}.
type Conversation struct {
	ConversationRow
	// Totals counts the requests, Summaries the summaries the proxy had a
	// model write (store.Tally).
	Totals    store.Tally `json:"totals"`
	Summaries store.Tally `json:"summaries"`
	// Text is true when the conversation's text (summaries, file lists)
	// is included; ?text=0 leaves it out.
	Text bool `json:"text"`
	// Cards are the compactions the store keeps for the conversation (at
	// most a few: Compactions counts them all), newest first.
	Cards []CompactionCard `json:"cards"`
	// PendingSummary is the summary written ahead, when one is stored.
	PendingSummary *PendingSummary `json:"pendingSummary,omitempty"`
	// Timeline is the conversation's latest requests, oldest first (at
	// most store.MaxRecent).
	Timeline []store.Mark `json:"timeline"`
	// Request is the latest request as the client sent it beside what
	// went upstream in its place; absent before the first answer.
	Request *RequestShape `json:"request,omitempty"`
	// LastMiss explains the conversation's latest prompt-cache miss (it
	// holds no conversation text); absent before the first.
	LastMiss *store.CacheMiss `json:"lastMiss,omitempty"`
}

// CompactionCard is one compaction of a conversation.
type CompactionCard struct {
	// Reason is why it ran: "threshold", "overflow", "idle" (the prompt
	// cache had gone cold) or "manual"; Summarizer what wrote the summary
	// (a model's name, "extractive"); Native the provider compaction it
	// came from ("anthropic", "responses"), "" for compact's own.
	Reason     compact.Reason `json:"reason"`
	Summarizer string         `json:"summarizer"`
	Native     string         `json:"native,omitempty"`
	// Ahead is true when the summary was written ahead of time and
	// swapped in: no request waited for it.
	Ahead bool `json:"ahead,omitempty"`
	// TokensBefore and TokensAfter are the context sizes around it.
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
	// Created is when it was recorded; DurationMS how long its summary
	// took to write, in milliseconds (0: unknown).
	Created    time.Time `json:"created"`
	DurationMS int64     `json:"durationMs,omitempty"`
	// FirstKeptUnit is the position of the first unit (a user turn, or
	// a tool round) kept verbatim, counted from 0 after the system
	// prompt: the units before it are replaced by the summary.
	FirstKeptUnit int `json:"firstKeptUnit"`
	// KeptRole and KeptPreview are the role and the opening of the first
	// message kept verbatim (KeptPreview absent without
	// Conversation.Text; both absent for compactions recorded before
	// the proxy kept them).
	KeptRole    compact.Role `json:"keptRole,omitempty"`
	KeptPreview string       `json:"keptPreview,omitempty"`
	// Summary is the summary the model reads now, file lists included;
	// Intro and Sections are it split at its "## " headings
	// (report.ParseSummary, the file lists left out), for a page that
	// folds them. ReadFiles and ModifiedFiles are its file lists. All
	// absent without Conversation.Text.
	Summary       string           `json:"summary,omitempty"`
	Intro         []report.Block   `json:"intro,omitempty"`
	Sections      []report.Section `json:"sections,omitempty"`
	ReadFiles     []string         `json:"readFiles,omitempty"`
	ModifiedFiles []string         `json:"modifiedFiles,omitempty"`
	// SummaryRequests are the requests to the summarizer model that
	// wrote it; SummaryCostUSD their estimated cost (absent when their
	// model's prices are unknown).
	SummaryRequests []SummaryRequest `json:"summaryRequests,omitempty"`
	SummaryCostUSD  *float64         `json:"summaryCostUSD,omitempty"`
}

// SummaryRequest is one request to the summarizer model.
type SummaryRequest struct {
	// OnConversation is true for a request that was the conversation
	// itself plus a closing instruction (read from the prompt cache).
	OnConversation bool `json:"onConversation,omitempty"`
	// Input, CacheRead, CacheWrite and Output are the tokens the
	// provider reported; CacheReadShare is CacheRead over the prompt.
	Input          int     `json:"input"`
	CacheRead      int     `json:"cacheRead"`
	CacheWrite     int     `json:"cacheWrite"`
	Output         int     `json:"output"`
	CacheReadShare float64 `json:"cacheReadShare"`
	// CostUSD is its estimated cost, absent when unknown.
	CostUSD *float64 `json:"costUSD,omitempty"`
}

// PendingSummary is a summary written ahead of time, not applied yet.
type PendingSummary struct {
	// TokensBefore is the context size it was written from; Summarizer
	// what wrote it; Created when; DurationMS how long it took.
	TokensBefore int       `json:"tokensBefore"`
	Summarizer   string    `json:"summarizer"`
	Created      time.Time `json:"created"`
	DurationMS   int64     `json:"durationMs,omitempty"`
	// FirstKeptUnit is as in CompactionCard.
	FirstKeptUnit int `json:"firstKeptUnit"`
	// Summary is its text, absent without Conversation.Text.
	Summary string `json:"summary,omitempty"`
}

// APIError is the body of the conversation API's error answers.
type APIError struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// serveConversations answers the conversation API. The caller has
// checked the proxy token (when one is set); without one, only loopback
// clients are answered, since the answers hold the conversations' text.
func (s *Server) serveConversations(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !s.authOn && !loopbackClient(r) {
		apiError(w, http.StatusForbidden, "forbidden",
			"compact proxy: the conversation API answers loopback clients only unless the proxy has a token (--auth-token-file)")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		apiError(w, http.StatusMethodNotAllowed, "method_not_allowed", "compact proxy: the conversation API answers GET only")
		return
	}
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, ConversationsPath), "/")
	q := r.URL.Query()
	if rest == "" {
		s.listConversations(w, r, q.Get("limit"), q.Get("cursor"))
		return
	}
	s.showConversation(w, r, rest, q.Get("text") != "0")
}

// loopbackClient reports whether r comes from a loopback address.
func loopbackClient(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listConversations answers GET /api/conversations.
func (s *Server) listConversations(w http.ResponseWriter, r *http.Request, limitArg, cursor string) {
	l, ok := s.store.(store.Lister)
	if !ok {
		apiError(w, http.StatusNotImplemented, "not_implemented", "compact proxy: the store cannot list its conversations")
		return
	}
	limit := 0
	if limitArg != "" {
		n, err := strconv.Atoi(limitArg)
		if err != nil || n < 1 {
			apiError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("compact proxy: limit %q: want a whole number from 1 to %d", limitArg, store.MaxListLimit))
			return
		}
		limit = n
	}
	if cursor != "" && (!strings.HasPrefix(cursor, conversationPrefix) || store.CheckKey(cursor) != nil) {
		apiError(w, http.StatusBadRequest, "invalid_request", "compact proxy: cursor: not one a page of this API gave")
		return
	}
	page, err := l.List(r.Context(), store.ListQuery{Prefix: conversationPrefix, After: cursor, Limit: limit})
	if err != nil {
		s.storeError(w, err)
		return
	}
	out := ConversationList{Conversations: []ConversationRow{}, Next: page.Next}
	for _, e := range page.Records {
		out.Conversations = append(out.Conversations, s.conversationRow(e.Key, e.Record))
	}
	byActivity(out.Conversations)
	writeJSON(w, out)
}

// byActivity sorts rows by last activity, newest first (then by key):
// the order of the API's pages and of the live view's table.
func byActivity(rows []ConversationRow) {
	slices.SortStableFunc(rows, func(a, b ConversationRow) int {
		return cmp.Or(b.LastActivity.Compare(a.LastActivity), strings.Compare(a.Key, b.Key))
	})
}

// showConversation answers GET /api/conversations/{id}.
func (s *Server) showConversation(w http.ResponseWriter, r *http.Request, id string, text bool) {
	key, rec, err := s.findByID(r.Context(), id)
	switch {
	case errors.Is(err, errBadID):
		apiError(w, http.StatusBadRequest, "invalid_request", "compact proxy: conversation id: want the 12 hex digits the log prints, or the full key (c:...)")
		return
	case errors.Is(err, errAmbiguousID):
		apiError(w, http.StatusConflict, "ambiguous", "compact proxy: conversation id "+id+" names several conversations; give the full key")
		return
	case errors.Is(err, store.ErrNotFound):
		apiError(w, http.StatusNotFound, "not_found", "compact proxy: no conversation "+id+" (it never came, or expired)")
		return
	case err != nil:
		s.storeError(w, err)
		return
	}
	writeJSON(w, s.conversation(key, rec, text))
}

var (
	errBadID       = errors.New("proxy: not a conversation id")
	errAmbiguousID = errors.New("proxy: ambiguous conversation id")
)

// shortIDLen is the length of the short id (identity.short).
const shortIDLen = 12

// findByID returns the conversation id names: its key ("c:" and 48 hex
// digits), or the short id of the log (12 hex digits), which is looked up
// by listing (a store that cannot list takes the key only).
func (s *Server) findByID(ctx context.Context, id string) (string, *store.Record, error) {
	hexID := strings.TrimPrefix(id, conversationPrefix)
	if !isLowerHex(hexID) || (len(hexID) != shortIDLen && len(hexID) != 48) || (hexID != id && len(hexID) != 48) {
		return "", nil, errBadID
	}
	if len(hexID) == 48 {
		key := conversationPrefix + hexID
		rec, err := s.store.Get(ctx, key)
		return key, rec, err
	}
	l, ok := s.store.(store.Lister)
	if !ok {
		return "", nil, fmt.Errorf("the store cannot look up a short id: %w", store.ErrNotFound)
	}
	page, err := l.List(ctx, store.ListQuery{Prefix: conversationPrefix + hexID, Limit: 2})
	switch {
	case err != nil:
		return "", nil, err
	case len(page.Records) == 0:
		return "", nil, store.ErrNotFound
	case len(page.Records) > 1:
		return "", nil, errAmbiguousID
	}
	return page.Records[0].Key, page.Records[0].Record, nil
}

// isLowerHex reports whether s is made of 0-9a-f only.
func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// conversationRow summarizes one stored conversation.
func (s *Server) conversationRow(key string, rec *store.Record) ConversationRow {
	row := ConversationRow{ID: strings.TrimPrefix(key, conversationPrefix), Key: key, LastActivity: rec.Updated,
		Compactions: max(rec.Compactions, len(rec.Checkpoints))}
	if len(row.ID) > shortIDLen {
		row.ID = row.ID[:shortIDLen]
	}
	var totals store.Tally
	if last := rec.Last; last != nil {
		totals = last.Totals
		row.Agent, row.IDSource, row.Model = last.Agent, last.IDSource, last.Model
		row.Tokens = last.Usage.PromptTokens()
		row.Trigger = last.Threshold
		if !last.At.IsZero() {
			row.LastActivity = last.At
		}
	}
	if info, ok := s.modelInfo("", row.Model); ok {
		row.Window = info.ContextWindow
		if row.Trigger == 0 {
			row.Trigger, _ = s.policyFor(info).Threshold(info)
		}
	}
	if row.Trigger > 0 {
		row.Fill = round(float64(row.Tokens)/float64(row.Trigger), 4)
	}
	row.Requests = totals.Requests
	if share, ok := totals.CacheReadShare(); ok {
		share = round(share, 4)
		row.CacheReadShare = &share
	}
	row.CostUSD = round(totals.Cost+rec.Summaries.Cost, 6)
	row.SummaryCostUSD = round(rec.Summaries.Cost, 6)
	row.Unpriced = totals.Unpriced + rec.Summaries.Unpriced
	row.TokensSaved = totals.TokensSaved
	if p := s.pricesFor(row.Model); p != nil && totals.Requests > 0 {
		cache := round(p.CacheSavings(compact.Usage{Input: totals.Input, CacheRead: totals.CacheRead, CacheWrite: totals.CacheWrite,
			CacheWrite1h: totals.CacheWrite1h, Output: totals.Output}), 6)
		saved := round(p.CacheReadCost(totals.TokensSaved), 6)
		row.CacheSavedUSD, row.CompactionSavedUSD = &cache, &saved
	}
	switch {
	case s.aheadRunning(key):
		row.Pending = "writing"
	case rec.Pending != nil:
		row.Pending = "ready"
	}
	return row
}

// conversation builds the answer about one conversation; text says
// whether its summaries and file lists are included.
func (s *Server) conversation(key string, rec *store.Record, text bool) Conversation {
	c := Conversation{ConversationRow: s.conversationRow(key, rec), Summaries: rec.Summaries, Text: text,
		Cards: []CompactionCard{}, Timeline: []store.Mark{}}
	if rec.Last != nil {
		c.Totals, c.LastMiss = rec.Last.Totals, rec.Last.LastMiss
		c.Timeline = append(c.Timeline, rec.Last.Recent...)
	}
	c.Request = s.requestShape(rec)
	cps := slices.Clone(rec.Checkpoints)
	slices.SortStableFunc(cps, func(a, b store.Checkpoint) int { return b.Created.Compare(a.Created) })
	for i := range cps {
		c.Cards = append(c.Cards, s.card(&cps[i], text))
	}
	if p := rec.Pending; p != nil {
		ps := &PendingSummary{TokensBefore: p.Prepared.TokensBefore, Summarizer: p.Prepared.Summarizer, Created: p.Prepared.Created,
			DurationMS: p.Prepared.Duration.Milliseconds(), FirstKeptUnit: p.Covered}
		if text {
			ps.Summary = p.Prepared.Summary
		}
		c.PendingSummary = ps
	}
	return c
}

// card describes one compaction.
func (s *Server) card(cp *store.Checkpoint, text bool) CompactionCard {
	c := CompactionCard{Reason: cp.Reason, Summarizer: cp.Summarizer, Native: cp.Native, Ahead: cp.Ahead,
		TokensBefore: cp.TokensBefore, TokensAfter: cp.TokensAfter, Created: cp.Created,
		DurationMS: cp.Duration.Milliseconds(), FirstKeptUnit: cp.Covered, KeptRole: cp.KeptRole}
	if text {
		c.Summary, c.ReadFiles, c.ModifiedFiles, c.KeptPreview = cp.Summary, cp.ReadFiles, cp.ModifiedFiles, cp.KeptPreview
		c.Intro, c.Sections = report.ParseSummary(compact.StripFileLists(cp.Summary))
	}
	calls := cp.Calls()
	p := s.summaryPrices(cp)
	var total float64
	for _, call := range calls {
		u := call.Usage
		sr := SummaryRequest{OnConversation: call.OnConversation, Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
			Output: u.Output, CacheReadShare: round(call.CacheReadShare(), 4)}
		if p != nil {
			cost := round(p.Cost(u).Total(), 6)
			total += cost
			sr.CostUSD = &cost
		}
		c.SummaryRequests = append(c.SummaryRequests, sr)
	}
	if p != nil && len(calls) > 0 {
		total = round(total, 6)
		c.SummaryCostUSD = &total
	}
	return c
}

// keptPreview is the opening of a kept message for
// Checkpoint.KeptPreview: its text, else its tool calls with their
// arguments ("Bash {"command":"ls"}"), white space folded, at most
// store.KeptPreviewRunes runes, an ellipsis when cut.
func keptPreview(m *compact.Message) string {
	text := m.Text()
	if strings.TrimSpace(text) == "" {
		var calls []string
		for _, c := range m.ToolCalls() {
			calls = append(calls, c.Name+" "+string(c.Arguments))
		}
		text = strings.Join(calls, "; ")
	}
	return jsontext.Shorten(strings.Join(strings.Fields(text), " "), store.KeptPreviewRunes)
}

// round rounds x to n decimals, so that the answers do not carry float
// noise.
func round(x float64, n int) float64 {
	p, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
	return p
}

// storeError answers a store failure: 503, the error named without any
// record content (the stores' errors never quote one).
func (s *Server) storeError(w http.ResponseWriter, err error) {
	s.warnEvery("apistore", "conversation API: store failed", "err", err)
	apiError(w, http.StatusServiceUnavailable, "store_unavailable", "compact proxy: the store did not answer: "+err.Error())
}

// writeJSON writes v as an indented JSON answer.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		apiError(w, http.StatusInternalServerError, "internal", "compact proxy: encoding the answer: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// apiError writes an APIError answer.
func apiError(w http.ResponseWriter, status int, typ, msg string) {
	var e APIError
	e.Error.Type, e.Error.Message = typ, msg
	b, _ := json.Marshal(e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
