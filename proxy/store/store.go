package store

import (
	"context"
	"errors"
	"time"

	"github.com/compactkit/compact"
)

// ErrNotFound is returned by Store.Get for a key that has no record.
var ErrNotFound = errors.New("store: no record")

// Store keeps the proxy's per-conversation state between requests: the
// compactions applied so far and the last reported usage. Implementations
// must be safe for concurrent use; Put replaces the record atomically (a
// reader sees the old record or the new one, never a mix), and a record
// may vanish at any time (expiry, eviction): the proxy then only loses the
// chance to reuse it.
//
// Keys are opaque strings of at most 128 bytes made of [0-9a-z:]; they
// never contain a credential or a client id in clear (they are hashes).
type Store interface {
	// Get returns the record stored under key, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, key string) (*Record, error)
	// Put stores rec under key, replacing any record there.
	Put(ctx context.Context, key string, rec *Record) error
	// Close releases the store.
	Close() error
}

// Record is the state of one conversation key.
type Record struct {
	// Checkpoints are the compactions recorded under this key, newest
	// first. Several exist when different histories share a key (a Codex
	// sub-agent reuses its parent's session id); a request uses the one
	// whose chain matches its own prefix. The proxy keeps at most a few.
	Checkpoints []Checkpoint `json:"checkpoints,omitempty"`
	// Pending is a summary written ahead of time, not applied yet: the
	// request that crosses the trigger swaps it in (see Pending); nil when
	// none is waiting.
	Pending *Pending `json:"pending,omitempty"`
	// Last is the last response's accounting, nil before the first one.
	Last *LastCall `json:"last,omitempty"`
	// Summaries counts the summaries the proxy had a model write for this
	// conversation and what they used and cost. It is written with the
	// checkpoints (a compaction is rare), the requests' own counts with
	// the last call (LastCall.Totals), so that neither write clobbers the
	// other.
	Summaries Tally `json:"summaries,omitzero"`
	// Compactions counts the compactions the proxy recorded for this
	// conversation (Checkpoints keeps only the newest few).
	Compactions int `json:"compactions,omitempty"`
	// Updated is when the record was last written.
	Updated time.Time `json:"updated"`
}

// Checkpoint is one compaction: the first Covered items of the list (after
// the head items) are replaced by Summary.
type Checkpoint struct {
	// Covered is the number of units replaced, counted from the first unit
	// after the head.
	Covered int `json:"covered"`
	// Chain is the hex hash chain of the covered units' digests; the
	// checkpoint applies to a request only when its own first Covered
	// units hash to the same chain.
	Chain string `json:"chain"`
	// Item is the summary list element exactly as sent upstream; every
	// later request of the conversation carries these same bytes. A
	// provider compaction's window may be several elements, separated by
	// commas as in the list.
	Item []byte `json:"item"`
	// Native names the provider compaction Item came from ("" for a
	// summary of compact's own): "anthropic" for an on-demand compaction
	// block, "responses" for the window of POST /v1/responses/compact.
	// The items kept after it are sent unchanged.
	Native string `json:"native,omitempty"`
	// Credential, for a provider compaction, identifies (as a hash) the
	// credential that made it: the provider accepts Item only from that
	// credential, so the checkpoint is never applied under another.
	Credential string `json:"credential,omitempty"`
	// Summary is the summary text (file lists included), merged into the
	// next compaction.
	Summary string `json:"summary"`
	// ReadFiles and ModifiedFiles are the file lists of the summary.
	ReadFiles     []string `json:"readFiles,omitempty"`
	ModifiedFiles []string `json:"modifiedFiles,omitempty"`
	// TokensBefore and TokensAfter are the context sizes around the
	// compaction (measured, then estimated).
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
	// Reason is why it ran (compact.ReasonThreshold or ReasonOverflow).
	Reason compact.Reason `json:"reason"`
	// Summarizer names what wrote the summary.
	Summarizer string `json:"summarizer"`
	// Created is when the compaction was recorded.
	Created time.Time `json:"created"`
	// KeptRole and KeptPreview are the role and the opening (at most
	// KeptPreviewRunes, white space folded) of the first message kept
	// verbatim: where the summary ends and the conversation goes on as
	// written. Empty for compactions recorded before they existed.
	KeptRole    compact.Role `json:"keptRole,omitempty"`
	KeptPreview string       `json:"keptPreview,omitempty"`
	// Duration is how long the summary took to write, 0 when unknown;
	// Ahead is true when it was written ahead of time (Pending) and
	// swapped in, so that Duration is time no request waited.
	Duration time.Duration `json:"duration,omitempty"`
	Ahead    bool          `json:"ahead,omitempty"`
	// SummaryCalls are the requests to the summarizer model that wrote
	// the summary, in order, with the usage each reported (none for an
	// offline summary, or when the provider reported none): what the
	// summary cost, and how much of its input the provider read from its
	// prompt cache.
	SummaryCalls []SummaryCall `json:"summaryCalls,omitempty"`
	// AheadCalls are the requests that wrote a summary ahead of time
	// (Ahead), before the swap; they were counted when they were made,
	// so the totals count SummaryCalls only.
	AheadCalls []SummaryCall `json:"aheadCalls,omitempty"`
}

// Calls returns every request that wrote the summary: those made ahead
// of time, then those made in line.
func (cp *Checkpoint) Calls() []SummaryCall {
	if len(cp.AheadCalls) == 0 {
		return cp.SummaryCalls
	}
	return append(append([]SummaryCall(nil), cp.AheadCalls...), cp.SummaryCalls...)
}

// SummaryCall is one request to the summarizer model.
type SummaryCall struct {
	// OnConversation is true for a request that was the conversation
	// itself plus one closing instruction (it reads the history from the
	// provider's prompt cache), false for one quoting a transcript.
	OnConversation bool `json:"onConversation,omitempty"`
	// Usage is what the provider reported for it.
	Usage compact.Usage `json:"usage"`
}

// CacheReadShare is the share of the request's prompt the provider read
// from its cache: Usage.CacheRead over Usage.PromptTokens, 0 when the
// usage has no prompt tokens.
func (c SummaryCall) CacheReadShare() float64 {
	share, _ := c.Usage.CacheReadShare()
	return share
}

// Pending is a compaction summarized ahead of time (compact.Prepared)
// for one history of the conversation, kept in the store so that a
// restarted proxy or another replica finds it. It applies to a request
// only when the request's first Covered units hash to Chain and its first
// Units units to UnitsChain (the history it was written from, which the
// request extends), with the checkpoint of chain Base applied ("" none).
type Pending struct {
	// Covered and Chain are the units the summary replaces, as in
	// Checkpoint.
	Covered int    `json:"covered"`
	Chain   string `json:"chain"`
	// Units is how many units the request it was written from had, and
	// UnitsChain their hash chain.
	Units      int    `json:"units"`
	UnitsChain string `json:"unitsChain"`
	// Base is the Chain of the checkpoint applied to that request, ""
	// when it had none: the summary merges that checkpoint's.
	Base string `json:"base,omitempty"`
	// Prepared is the compaction as the engine wrote it.
	Prepared compact.Prepared `json:"prepared"`
	// SummaryCalls are the summarizer's requests that wrote it (see
	// Checkpoint.SummaryCalls), counted in Record.Summaries when it was
	// stored.
	SummaryCalls []SummaryCall `json:"summaryCalls,omitempty"`
}

// LastCall is the accounting of a conversation's latest response.
type LastCall struct {
	// Units is how many units (after the head) the request had; Chain is
	// their hash chain, so a later request can tell whether it extends
	// the same history.
	Units int    `json:"units"`
	Chain string `json:"chain"`
	// Usage is what the provider reported for the request as it was sent
	// upstream (compacted or not).
	Usage compact.Usage `json:"usage"`
	// Applied is the Chain of the checkpoint the request was sent with,
	// "" when it went upstream uncompacted: usage measured on one rewrite
	// says nothing about another.
	Applied string `json:"applied,omitempty"`
	// Bytes is the size of the request body as the client sent it
	// (decoded); Threshold the trigger of its model. Together they let
	// the next request skip the wait for its body when it cannot be near
	// the trigger.
	Bytes     int `json:"bytes,omitempty"`
	Threshold int `json:"threshold,omitempty"`
	// Overflow is true when the response reported a context overflow
	// inside an already started stream: the next request is compacted
	// first.
	Overflow bool `json:"overflow,omitempty"`
	// At is when the response ended: the conversation has been idle
	// since (see the proxy's cold-cache compaction). Zero when unknown.
	At time.Time `json:"at,omitzero"`
	// Model is the model the request named, "" when unknown: the light
	// path, which does not read the next request, prices its answer
	// with it.
	Model string `json:"model,omitempty"`
	// Agent names the client that sent the request, as its headers tell
	// (see the proxy's agentOf: the product of its User-Agent, else its
	// X-App), "" when they tell nothing; IDSource is the signal the
	// conversation was recognised by ("header x-claude-code-session-id",
	// "body", "fingerprint"). Neither ever holds a credential.
	Agent    string `json:"agent,omitempty"`
	IDSource string `json:"idSource,omitempty"`
	// Recent are the conversation's latest answered requests, oldest
	// first and at most MaxRecent (see AppendRecent): its timeline,
	// carried from the previous last call like Totals.
	Recent Timeline `json:"recent,omitempty"`
	// Totals counts every answered request of the conversation so far,
	// this one included: carried from the previous last call and
	// rewritten with it, so keeping them costs no extra write (on Redis
	// no extra round trip). Two requests of one conversation answered at
	// the same moment may count as one.
	Totals Tally `json:"totals,omitzero"`
	// LastMiss is the conversation's latest cache miss (this request's
	// or an earlier one's), carried from the previous last call like
	// Totals, so that later hits keep it; nil before the first.
	LastMiss *CacheMiss `json:"lastMiss,omitempty"`
}

// KeptPreviewRunes bounds Checkpoint.KeptPreview.
const KeptPreviewRunes = 300

// MaxRecent bounds LastCall.Recent.
const MaxRecent = 50

// Mark is one answered request on a conversation's timeline.
type Mark struct {
	// At is when the answer ended.
	At time.Time `json:"at"`
	// Prompt is the prompt size the provider reported (compact.Usage's
	// PromptTokens: what went upstream, compacted or not), CacheRead the
	// part of it read from the prompt cache and Output the answer's.
	Prompt    int `json:"prompt"`
	CacheRead int `json:"cacheRead,omitempty"`
	Output    int `json:"output,omitempty"`
	// Client is the estimated size of the request as the client sent it,
	// before any compaction; 0 when it was not read (passed through).
	Client int `json:"client,omitempty"`
	// Applied is true when the request went upstream with a compaction
	// applied; Compaction when it is the request that made one (written
	// in line or swapped in from ahead).
	Applied    bool `json:"applied,omitempty"`
	Compaction bool `json:"compaction,omitempty"`
	// Overflow is true when the answer reported a context overflow.
	Overflow bool `json:"overflow,omitempty"`
}

// AppendRecent returns recent with m added in the order of At (after the
// marks of the same time: two answers recorded out of order still come in
// time order), the oldest marks dropped beyond MaxRecent. recent is not
// modified.
func AppendRecent(recent []Mark, m Mark) []Mark {
	i := len(recent)
	for i > 0 && recent[i-1].At.After(m.At) {
		i--
	}
	out := make([]Mark, 0, len(recent)+1)
	out = append(append(append(out, recent[:i]...), m), recent[i:]...)
	if n := len(out) - MaxRecent; n > 0 {
		out = out[n:]
	}
	return out
}

// Tally is what a conversation's model calls used and cost so far: the
// requests the client sent through the proxy (LastCall.Totals) or the
// summaries the proxy had written (Record.Summaries).
type Tally struct {
	// Requests is the number of calls counted: answered requests, or
	// summaries written by a model (one summary may take several calls).
	Requests int `json:"requests"`
	// Input, Output, CacheRead and CacheWrite are the tokens the provider
	// reported (compact.Usage's counts, the provider's own compaction
	// step added in); CacheWrite1h is the part of CacheWrite written to
	// a one-hour cache.
	Input        int `json:"input,omitempty"`
	Output       int `json:"output,omitempty"`
	CacheRead    int `json:"cacheRead,omitempty"`
	CacheWrite   int `json:"cacheWrite,omitempty"`
	CacheWrite1h int `json:"cacheWrite1h,omitempty"`
	// TokensSaved is what the requests would have sent without the
	// conversation's compaction minus what they sent (estimated; 0 for
	// summaries).
	TokensSaved int `json:"tokensSaved,omitempty"`
	// Cost is the estimated cost in US dollars of the calls whose model
	// has known prices (compact.Prices); Unpriced counts the calls whose
	// cost is unknown and not in Cost.
	Cost     float64 `json:"cost,omitempty"`
	Unpriced int     `json:"unpriced,omitempty"`
}

// Add returns t with one more call counted: its usage, the tokens it saved,
// and its cost (priced false: unknown).
func (t Tally) Add(u compact.Usage, saved int, cost compact.Cost, priced bool) Tally {
	t.Requests++
	t.Input += u.Input + u.Compaction.Input
	t.Output += u.Output + u.Compaction.Output
	t.CacheRead += u.CacheRead + u.Compaction.CacheRead
	t.CacheWrite += u.CacheWrite + u.Compaction.CacheWrite
	t.CacheWrite1h += u.CacheWrite1h + u.Compaction.CacheWrite1h
	t.TokensSaved += max(saved, 0)
	if priced {
		t.Cost += cost.Total()
	} else {
		t.Unpriced++
	}
	return t
}

// CacheReadShare is the share of the prompt tokens read from the cache,
// from 0 to 1; ok is false when nothing was counted.
func (t Tally) CacheReadShare() (share float64, ok bool) {
	prompt := t.Input + t.CacheRead + t.CacheWrite
	if prompt <= 0 {
		return 0, false
	}
	return float64(t.CacheRead) / float64(prompt), true
}

// LastStore is implemented by a Store that can replace a record's Last on
// its own, in one write and without reading the record first. The proxy
// records the usage of every answer; on a store shared over the network
// (Redis) that saves a round trip per request, and a checkpoint another
// replica writes meanwhile cannot be overwritten by it.
//
// PutLast leaves the record's checkpoints as they are; on a key without a
// record it stores a record holding last alone.
type LastStore interface {
	PutLast(ctx context.Context, key string, last *LastCall) error
}

// Evicter is implemented by stores that drop the least recently used
// records to stay under their size bound (Memory, the bbolt store).
// Evictions is how many records were dropped so since the store was
// opened. The proxy exports it as compact_proxy_store_evictions_total and
// logs when it grows: an evicted conversation is summarized again on its
// next request, and in a store shared by tenants one tenant's traffic can
// evict another's, which must not go unseen.
type Evicter interface {
	Evictions() uint64
}
