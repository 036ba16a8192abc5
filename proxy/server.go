package proxy

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// The upstreams used when Config leaves them empty: the providers' public
// APIs.
const (
	DefaultAnthropicUpstream = "https://api.anthropic.com"
	DefaultOpenAIUpstream    = "https://api.openai.com"
)

// DefaultMaxBodyBytes is the largest request body the proxy accepts (64
// MiB, compressed or not); a larger one gets 413.
const DefaultMaxBodyBytes = 64 << 20

// The values of Config.Summarizer.
const (
	// SummarizerUpstream has the conversation's own model (or
	// Config.SummaryModel) write the summary, through the same upstream
	// and with the client's own credentials.
	SummarizerUpstream = "upstream"
	// SummarizerExtractive writes the summary offline, with no model.
	SummarizerExtractive = "extractive"
	// SummarizerNative has the provider compact the history itself, with
	// the client's credentials: Anthropic on-demand compaction (a signed
	// compaction block that keeps later thinking valid) and OpenAI's
	// POST /v1/responses/compact (an encrypted window, replayed only with
	// the credential that made it). Chat Completions has no such endpoint
	// and uses SummarizerUpstream, and so does a model the provider
	// refuses it for (remembered per model until the proxy restarts).
	SummarizerNative = "native"
)

// Config configures a Server. The zero value proxies to the providers'
// public APIs, keeps state in memory and has models summarize through the
// upstream.
type Config struct {
	// AnthropicUpstream and OpenAIUpstream are the base URLs requests are
	// sent to; the request path is appended ("/v1/messages"). Empty means
	// DefaultAnthropicUpstream and DefaultOpenAIUpstream.
	AnthropicUpstream string
	OpenAIUpstream    string
	// Window, when positive, is the context window of every model,
	// whatever the registry says (for tests and local servers); at least
	// compact.MinWindow.
	Window int
	// Registry gives each model's window when Window is 0; nil means the
	// registry shipped with compact. A model it does not know is passed
	// through without compaction (logged once per model).
	Registry *compact.Registry
	// Policy decides when to compact; nil means compact.DefaultPolicy{}
	// (a reserve of 16,384 tokens, or a fifth of a smaller window, under
	// the model's input limit), the trigger of the Guard and the command
	// line too.
	Policy compact.Policy
	// KeepRecentTokens is the size of the newest part kept verbatim; 0
	// means compact.DefaultKeepRecentTokens. It shrinks on small windows;
	// set, it is positive and smaller than Window.
	KeepRecentTokens int
	// Summarizer is SummarizerUpstream ("" means it),
	// SummarizerExtractive or SummarizerNative. A failed model summary
	// falls back to the extractive one.
	Summarizer string
	// SummaryModel, with SummarizerUpstream, is the model that writes
	// summaries instead of the conversation's own.
	SummaryModel string
	// Store keeps the compactions; nil means an in-memory store.
	Store store.Store
	// LocalFallback keeps the proxy compacting while a shared Store (Redis)
	// is down: state goes to memory on this replica and is written back
	// to the store when it answers again. Without it, requests pass
	// through uncompacted while the store is down (an overflow still
	// gets its compaction).
	LocalFallback bool
	// MaxBodyBytes is the largest request body accepted; 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Transport sends the upstream requests; nil means a transport with
	// net/http's default dial and TLS timeouts, no overall timeout (streams
	// last as long as they last) and no transparent compression (the
	// client's Accept-Encoding is forwarded as it came).
	Transport http.RoundTripper
	// SummaryTimeout bounds the writing of one compaction's summary, all
	// its model calls together (summarize.Deadline); 0 means 3 minutes.
	// When it runs out the offline summary is used.
	SummaryTimeout time.Duration
	// AheadMark is the share of a conversation's trigger at which its
	// summary starts being written ahead of time, in the background: the
	// request that crosses the trigger then swaps the ready summary in
	// at once instead of waiting for it; one over the trigger before it
	// is ready goes uncompacted unless it would overflow the window (then
	// it waits). 0 means DefaultAheadMark with SummarizerUpstream, off
	// with SummarizerExtractive (in line it costs nothing) and with
	// SummarizerNative (the provider's compaction belongs to the request
	// that asks for it); a negative value switches it off. At most 0.95.
	AheadMark float64
	// NoColdCompaction switches cold-cache compaction off: by default a
	// request that arrives after its conversation was idle longer than
	// the provider's prompt-cache lifetime, with a context above ColdMark
	// of its trigger, is compacted at once (reason compact.ReasonIdle),
	// since it writes the whole cache again anyway.
	NoColdCompaction bool
	// CacheTTL is the provider's prompt-cache lifetime; 0 means
	// DefaultCacheTTL. A request that marks a cache breakpoint with
	// "ttl":"1h" (Anthropic's extended cache) is held to an hour, or to
	// CacheTTL when that is longer.
	CacheTTL time.Duration
	// ColdMark is the share of the trigger above which an idle
	// conversation is compacted; 0 means DefaultColdMark. Below 1.
	ColdMark float64
	// LockTTL is the lifetime of a conversation lock in a store shared by
	// replicas (a Locker), extended while its summary is written; 0 means
	// DefaultLockTTL.
	LockTTL time.Duration
	// LockWait is how long a replica waits for another replica's
	// compaction of the same conversation before it sends the request
	// uncompacted; 0 means SummaryTimeout plus 10 seconds.
	LockWait time.Duration
	// Logger receives one line per request and the warnings; nil discards.
	Logger *slog.Logger
	// Registry for the metrics; nil makes a private one (see
	// Server.Metrics).
	Metrics *prometheus.Registry
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// AuthToken, when not empty, is the proxy's own token: every request
	// but /healthz and /readyz must present it in the X-Compact-Token
	// header (TokenHeader) or as "Proxy-Authorization: Bearer <token>",
	// or gets 401. It is compared in constant time, never logged, and
	// neither header is forwarded upstream. Empty means anyone who can
	// connect may use the proxy. At least MinAuthTokenLen bytes.
	AuthToken string
	// TenantHeader names a request header that tells tenants apart when
	// their provider credential is not in a request header (a gateway in
	// front of the proxy sets it, and the key is added behind the proxy).
	// Its value joins the conversation keys, counts as a credential (see
	// the credential-less rule in ServeHTTP), and is not forwarded
	// upstream. Empty means no such header.
	TenantHeader string

	// MaxInFlightBytes bounds the request bodies the proxy holds in memory
	// at once (as sent, plus decoded when compressed); 0 means
	// DefaultMaxInFlightBytes. A request whose body does not fit waits up
	// to AdmitWait for room, then gets 503 with Retry-After. A body larger
	// than the whole budget waits for all of it. Bodies passed through
	// unread (other paths, credential-less requests) are streamed and not
	// counted. The process needs a few times this much memory at peak:
	// bodies are parsed and rewritten while held.
	MaxInFlightBytes int64
	// AdmitWait is how long a request waits for room under
	// MaxInFlightBytes; 0 means DefaultAdmitWait.
	AdmitWait time.Duration
	// MaxMessages bounds the history one request may have for the proxy
	// to read it: the items of its message list (messages; for Responses,
	// also tool calls and their outputs). A request with more is passed
	// through uncompacted, counted before it is parsed. 0 means
	// DefaultMaxMessages.
	MaxMessages int
	// MaxSummaryCalls bounds the model calls one compaction may make (a
	// history too long for one call is summarized in chunks); beyond it
	// the compaction is abandoned and the request passed through. 0 means
	// DefaultMaxSummaryCalls.
	MaxSummaryCalls int

	// OnCompactionURL, when set, receives every compaction the proxy
	// records (in line, swapped in from ahead, after an idle spell or an
	// overflow) as a POST of a CompactionHook in JSON; OnCompactionCmd,
	// when set, is run by /bin/sh -c with the same JSON on its stdin
	// (and the proxy's environment). Both are delivered in the
	// background, one compaction at a time, from a bounded queue: a slow
	// or failing receiver never holds a request up; its failures are
	// logged and counted (compact_proxy_hook_deliveries_total), a full
	// queue drops events. Only the writer of a compaction sends it (one
	// event per compaction, whatever replica).
	OnCompactionURL string
	OnCompactionCmd string
	// HookSummary adds the summary text to the hooks' payload; without
	// it they carry figures only.
	HookSummary bool
	// HookTimeout bounds one delivery (the POST, or the command's run); 0
	// means DefaultHookTimeout.
	HookTimeout time.Duration

	// BodyTimeout is how long a client has to send a request body in
	// full, counted from the start of the request; a slower one gets 408
	// and its connection is closed. 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// WriteIdleTimeout bounds each write of a response to the client: a
	// client that stops reading for this long is cut off. It is extended
	// on every write, so a healthy stream may last as long as it lasts.
	// 0 means DefaultWriteIdleTimeout.
	WriteIdleTimeout time.Duration
}

// The defaults of Config's admission and timeout fields.
const (
	// DefaultMaxInFlightBytes is the default Config.MaxInFlightBytes:
	// 256 MiB of request bodies in memory at once.
	DefaultMaxInFlightBytes = 256 << 20
	// DefaultAdmitWait is the default Config.AdmitWait.
	DefaultAdmitWait = 10 * time.Second
	// DefaultMaxMessages is the default Config.MaxMessages.
	DefaultMaxMessages = 50000
	// DefaultMaxSummaryCalls is the default Config.MaxSummaryCalls.
	DefaultMaxSummaryCalls = 16
	// DefaultBodyTimeout is the default Config.BodyTimeout.
	DefaultBodyTimeout = 2 * time.Minute
	// DefaultWriteIdleTimeout is the default Config.WriteIdleTimeout.
	DefaultWriteIdleTimeout = time.Minute
	// DefaultAheadMark is the default Config.AheadMark (with the upstream
	// summarizer): the summary is written ahead from 80 % of the trigger.
	DefaultAheadMark = 0.8
	// DefaultCacheTTL is the default Config.CacheTTL: the providers'
	// default prompt-cache lifetime (Anthropic's ephemeral cache; OpenAI
	// keeps prefixes 5 to 10 minutes).
	DefaultCacheTTL = 5 * time.Minute
	// extendedCacheTTL is the lifetime of a cache breakpoint marked
	// "ttl":"1h".
	extendedCacheTTL = time.Hour
	// DefaultColdMark is the default Config.ColdMark: an idle
	// conversation is compacted from half its trigger.
	DefaultColdMark = 0.5
)

// Server is the proxy: an http.Handler serving the three model APIs, every
// other path passed through, /healthz and /metrics.
type Server struct {
	cfg       Config
	anthropic *url.URL
	openai    *url.URL
	client    *http.Client
	store     store.Store
	// evicter is the store's eviction count, when it keeps one (see
	// Evicter); evictionsSeen is the count noticed last (see noteEvictions).
	evicter       store.Evicter
	evictionsSeen atomic.Uint64
	log           *slog.Logger
	reg           *prometheus.Registry
	metrics       *metrics
	// nativeOff holds the "api model" pairs whose provider refused its own
	// compaction (see SummarizerNative): they use the upstream summarizer.
	nativeOff  sync.Map
	metricsH   http.Handler
	now        func() time.Time
	registry   *compact.Registry
	policy     compact.Policy
	summaryTTL time.Duration
	lockTTL    time.Duration
	lockWait   time.Duration

	// authOn is set when Config.AuthToken is; authSum is its SHA-256.
	authOn  bool
	authSum [32]byte
	// tenantHeader is Config.TenantHeader in canonical form.
	tenantHeader string
	// admit bounds the request bodies in memory (see admit.go).
	admit *admission

	items  *itemCache
	flight singleflight.Group
	locks  [64]mutex

	mu     sync.Mutex
	warned map[string]bool
	calib  compact.Calibrator
	// failLast is when each warnEvery key was last logged.
	failLast map[string]time.Time
	// refused holds the conversations whose compacted requests the
	// provider refused; they are passed through from then on.
	refused map[string]bool
	// learned holds windows read from overflow errors, by scope and
	// model (see learnWindow).
	learned map[string]int
	// held are the conversation locks this server holds now.
	held map[store.Lock]struct{}
	// pending counts the background work after answers, by conversation
	// key (see afterResponse); bg waits for all of it.
	pending map[string]*pendingWork
	bg      sync.WaitGroup
	// light caches the last calls of conversations without a
	// compaction (see lightcache.go).
	light map[string]lightEntry
	// prints keeps what was sent upstream last for each conversation, to
	// explain cache misses (see cachemiss.go).
	prints sentPrints
	// ahead holds the summaries being written ahead of time on this
	// replica, by conversation key (see ahead.go); aheadMark, coldMark
	// and cacheTTL are the settled Config values (0: off).
	ahead     map[string]*aheadJob
	aheadCtx  context.Context
	stopAhead context.CancelFunc
	aheadMark float64
	coldMark  float64
	cacheTTL  time.Duration
	// hooks delivers the compaction events (see hooks.go); nil without
	// any.
	hooks *hooks
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, warned: map[string]bool{}, failLast: map[string]time.Time{}, refused: map[string]bool{}}
	var err error
	if s.anthropic, err = parseUpstream("anthropic upstream", cfg.AnthropicUpstream, DefaultAnthropicUpstream); err != nil {
		return nil, err
	}
	if s.openai, err = parseUpstream("openai upstream", cfg.OpenAIUpstream, DefaultOpenAIUpstream); err != nil {
		return nil, err
	}
	switch cfg.Summarizer {
	case "", SummarizerUpstream, SummarizerExtractive, SummarizerNative:
	default:
		return nil, fmt.Errorf("proxy: summarizer %q: want %q, %q or %q", cfg.Summarizer, SummarizerUpstream, SummarizerExtractive, SummarizerNative)
	}
	// The settings the proxy shares with the library and the command
	// line follow their rules (compact.Config.Validate).
	if err := (compact.Config{Window: cfg.Window, KeepRecentTokens: cfg.KeepRecentTokens}).Validate(); err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if cfg.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("proxy: max body bytes %d: must not be negative", cfg.MaxBodyBytes)
	}
	if s.cfg.MaxBodyBytes == 0 {
		s.cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.AuthToken != "" {
		if err := checkAuthToken(cfg.AuthToken); err != nil {
			return nil, fmt.Errorf("proxy: %w", err)
		}
		s.authOn, s.authSum = true, sha256.Sum256([]byte(cfg.AuthToken))
		s.cfg.AuthToken = "" // kept as its hash only
	}
	if cfg.TenantHeader != "" {
		if strings.ContainsAny(cfg.TenantHeader, " \t\r\n:") {
			return nil, fmt.Errorf("proxy: tenant header %q: not a header name", cfg.TenantHeader)
		}
		s.tenantHeader = http.CanonicalHeaderKey(cfg.TenantHeader)
	}
	if err := s.setLimits(); err != nil {
		return nil, err
	}
	s.now = cfg.Now
	if s.now == nil {
		s.now = time.Now
	}
	s.log = cfg.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.store = cfg.Store
	if s.store == nil {
		s.store = store.NewMemory(store.MemoryOptions{Now: s.now})
	}
	s.evicter, _ = s.store.(store.Evicter)
	if cfg.Store != nil && cfg.LocalFallback {
		s.store = store.NewFallback(s.store, s.now, func(err error) { s.failOpen(stageStore, err) })
	}
	s.registry = cfg.Registry
	if s.registry == nil {
		if s.registry, err = compact.LoadRegistry(); err != nil {
			return nil, err
		}
	}
	s.policy = cfg.Policy
	s.summaryTTL = cfg.SummaryTimeout
	if s.summaryTTL == 0 {
		s.summaryTTL = 3 * time.Minute
	}
	if err := s.setMarks(); err != nil {
		return nil, err
	}
	s.aheadCtx, s.stopAhead = context.WithCancel(context.Background())
	s.lockTTL = cfg.LockTTL
	if s.lockTTL <= 0 {
		s.lockTTL = DefaultLockTTL
	}
	s.lockWait = cfg.LockWait
	if s.lockWait <= 0 {
		s.lockWait = s.summaryTTL + 10*time.Second
	}
	tr := cfg.Transport
	if tr == nil {
		tr = newTransport()
	}
	// Redirects are the client's business: pass them on as they come.
	s.client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s.reg = cfg.Metrics
	if s.reg == nil {
		s.reg = prometheus.NewRegistry()
	}
	s.items = newItemCache(defaultItemCacheBytes)
	s.metrics = newMetrics(s.reg)
	s.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "compact", Subsystem: "proxy", Name: "inflight_body_bytes",
		Help: "Bytes of request bodies reserved now under the in-flight budget (Config.MaxInFlightBytes)."},
		func() float64 { return float64(s.admit.held.Load()) }))
	if s.evicter != nil {
		s.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "compact", Subsystem: "proxy", Name: "store_evictions_total",
			Help: "Conversation records the store dropped to stay under its size bound (--store-max-mb); each costs its conversation a new summary."},
			func() float64 { return float64(s.evicter.Evictions()) }))
	}
	if s.hooks, err = newHooks(cfg, s.log, s.reg); err != nil {
		return nil, err
	}
	s.metricsH = metricsHandler(s.reg)
	return s, nil
}

// setMarks settles the ahead-of-time and cold-cache settings of Config
// (their defaults, or 0 for off).
func (s *Server) setMarks() error {
	c := s.cfg
	switch {
	case c.AheadMark > 0.95:
		return fmt.Errorf("proxy: ahead mark %g: want a share of the trigger below 0.95 (negative: off)", c.AheadMark)
	case c.AheadMark < 0:
	case c.AheadMark > 0 && c.Summarizer == SummarizerNative:
		return fmt.Errorf("proxy: ahead mark %g: not with the native summarizer (its compaction is bound to the request that asks it)", c.AheadMark)
	case c.AheadMark > 0:
		s.aheadMark = c.AheadMark
	case c.Summarizer == SummarizerNative:
		// The provider's compaction block belongs to the request that
		// asked for it: it is not written ahead.
	case c.Summarizer != SummarizerExtractive:
		s.aheadMark = DefaultAheadMark
	}
	if c.ColdMark < 0 || c.ColdMark >= 1 {
		return fmt.Errorf("proxy: cold mark %g: want a share of the trigger from 0 to below 1", c.ColdMark)
	}
	if c.CacheTTL < 0 {
		return fmt.Errorf("proxy: cache ttl %v: must not be negative", c.CacheTTL)
	}
	s.cacheTTL = cmp.Or(c.CacheTTL, DefaultCacheTTL)
	if !c.NoColdCompaction {
		s.coldMark = cmp.Or(c.ColdMark, DefaultColdMark)
	}
	return nil
}

// newTransport is net/http's default transport without transparent
// compression, and with room to keep a connection per concurrent stream:
// a proxy talks to one or two hosts with many streams at once, and the
// default pool (100 idle connections in all) would close and redial
// connections all the time under a few hundred concurrent streams.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.IdleConnTimeout = 60 * time.Second
	t.MaxIdleConns = maxIdleConns
	t.MaxIdleConnsPerHost = maxIdleConns
	return t
}

// maxIdleConns bounds the idle upstream connections kept for reuse.
const maxIdleConns = 1024

// parseUpstream checks an upstream base URL.
func parseUpstream(what, raw, def string) (*url.URL, error) {
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("proxy: %s %q: want an absolute http or https URL", what, raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("proxy: %s: credentials in the URL are not supported; clients send their own", what)
	}
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// Metrics returns the registry the proxy's metrics are registered in.
func (s *Server) Metrics() *prometheus.Registry { return s.reg }

// Close releases the conversation locks the server still holds and closes
// the store. Call it after the HTTP server has shut down.
func (s *Server) Close() error {
	// Summaries being written ahead are given up: the conversation is
	// compacted in line when it crosses its trigger.
	s.stopAhead()
	s.bg.Wait()
	// Compaction events still queued get a few seconds to go out.
	ctx, cancel := context.WithTimeout(context.Background(), hookDrain)
	s.hooks.close(ctx)
	cancel()
	s.releaseLocks()
	return s.store.Close()
}

// ServeHTTP routes a request: /healthz and /readyz are answered here for
// anyone; with Config.AuthToken set, every other path needs the proxy's
// token. /metrics and the conversation API (ConversationsPath) are
// answered here, WebSocket upgrades are refused, the
// model APIs are read and maybe compacted, and everything else is passed
// through to the upstream as it came. A request to a model API that
// carries no credential at all (see hasCredential) is passed through
// unread as well: nothing is compacted or stored on its behalf.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	aw := &answerWriter{ResponseWriter: w}
	w = aw
	defer s.recoverRequest(aw, r, API(""))
	switch r.URL.Path {
	case "/healthz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
		return
	case "/readyz":
		s.ready(w, r)
		return
	}
	if r.URL.Path == UIPath || strings.HasPrefix(r.URL.Path, UIPath+"/") {
		// The page signs a browser in itself (see UIPath).
		s.serveUI(w, r)
		return
	}
	if !s.authorized(r) {
		s.refuseUnauthorized(w, r)
		return
	}
	if r.URL.Path == "/metrics" {
		s.metricsH.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == ConversationsPath || strings.HasPrefix(r.URL.Path, ConversationsPath+"/") {
		s.serveConversations(w, r)
		return
	}
	r, tenant := s.withTenant(r)
	r = s.withoutOwnHeaders(r)
	aw.ResponseWriter = newIdleWriter(aw.ResponseWriter, s.cfg.WriteIdleTimeout)
	if iw, ok := aw.ResponseWriter.(*idleWriter); ok {
		// net/http writes the end of the answer after the handler
		// returns, possibly long after its last write.
		defer iw.extend()
	}
	r = s.limitBodyTime(w, r)
	api, compactable := route(r)
	defer s.recoverRequest(aw, r, api)
	if isUpgrade(r) {
		s.metrics.request(api, http.StatusNotImplemented)
		writeError(w, api, http.StatusNotImplemented, "invalid_request_error",
			"compact proxy does not support WebSocket; send the request over HTTP (for Codex: supports_websockets = false)")
		return
	}
	if compactable {
		if s.hasCredential(r, tenant) {
			s.serveAPI(w, r, api)
			return
		}
		s.warnEvery("nocredential", "request without a provider credential passed through uncompacted (if a gateway behind the proxy adds the key, name tenants with a tenant header)", "api", api, "path", r.URL.Path)
	}
	s.passthrough(w, r, api)
}

// route tells which API a request belongs to and whether the proxy reads
// it. Paths shared by both providers (/v1/models) go to Anthropic when the
// request carries Anthropic's headers.
func route(r *http.Request) (API, bool) {
	p := r.URL.Path
	switch {
	case p == "/v1/messages" || p == "/v1/messages/count_tokens":
		return Anthropic, r.Method == http.MethodPost
	case p == "/v1/chat/completions":
		return Chat, r.Method == http.MethodPost
	case p == "/v1/responses":
		return Responses, r.Method == http.MethodPost
	case strings.HasPrefix(p, "/v1/messages/") || strings.HasPrefix(p, "/v1/complete"):
		return Anthropic, false
	case r.Header.Get("Anthropic-Version") != "" || r.Header.Get("X-Api-Key") != "":
		return Anthropic, false
	case strings.HasPrefix(p, "/v1/responses"):
		return Responses, false
	}
	return Chat, false
}

// isUpgrade reports a protocol upgrade request (a WebSocket handshake).
func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return r.Header.Get("Upgrade") != ""
}

// upstreamFor returns the base URL of an API's upstream.
func (s *Server) upstreamFor(api API) *url.URL {
	if api == Anthropic {
		return s.anthropic
	}
	return s.openai
}

// codec returns the codec of api, reading through the server's item cache.
func (s *Server) codec(api API) codec { return cachedCodec(api, s.items) }

// ready answers /readyz: 200 when the store answers (stores that can be
// pinged, such as Redis), 503 otherwise. A load balancer uses it to send
// traffic elsewhere; the proxy itself would still pass requests through.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if p, ok := s.store.(store.Pinger); ok {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := p.Ping(ctx); err != nil {
			// The stores' errors name the store (a path, a URL without
			// its password) and never a record's content.
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "store unavailable: "+err.Error()+"\n")
			return
		}
	}
	_, _ = io.WriteString(w, "ready\n")
}
