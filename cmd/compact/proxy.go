package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy"
	"github.com/compactkit/compact/proxy/store"
	"github.com/compactkit/compact/proxy/store/bolt"
	"github.com/compactkit/compact/proxy/store/redis"
)

// proxyConfig holds the configuration file's keys for "compact proxy".
// Flags override them.
type proxyConfig struct {
	// Listen is the address to listen on (default 127.0.0.1:8787).
	Listen string `json:"listen,omitempty"`
	// AnthropicUpstream and OpenAIUpstream are the providers' base URLs.
	AnthropicUpstream string `json:"anthropicUpstream,omitempty"`
	OpenAIUpstream    string `json:"openaiUpstream,omitempty"`
	// Store is the state file, or "memory".
	Store string `json:"store,omitempty"`
	// Redis is the URL of a Redis shared by several replicas; it replaces
	// the state file.
	Redis string `json:"redis,omitempty"`
	// AuthTokenFile is a file holding the proxy's own token (see
	// --auth-token-file); AuthToken is the token itself, for files that
	// are secrets already.
	AuthTokenFile string `json:"authTokenFile,omitempty"`
	AuthToken     string `json:"authToken,omitempty"`
	// TenantHeader is --tenant-header.
	TenantHeader string `json:"tenantHeader,omitempty"`
	// OnCompactionURL and OnCompactionCmd are --on-compaction-url and
	// --on-compaction-cmd: where every compaction's event goes.
	OnCompactionURL string `json:"onCompactionURL,omitempty"`
	OnCompactionCmd string `json:"onCompactionCmd,omitempty"`
}

// envProxyToken is the environment variable that may hold the proxy's
// token, below --auth-token and --auth-token-file.
const envProxyToken = "COMPACT_PROXY_TOKEN"

// proxyHeaderTimeout bounds the reading of a request's headers, and
// proxyIdleTimeout how long an idle keep-alive connection stays open.
const (
	proxyHeaderTimeout = 30 * time.Second
	proxyIdleTimeout   = 5 * time.Minute
)

// defaultListen is where the proxy listens unless told otherwise: loopback
// only, since it forwards the credentials of whoever connects.
const defaultListen = "127.0.0.1:8787"

// storeMemory is the --store value that keeps state in memory only.
const storeMemory = "memory"

func (a *app) proxyCommand() *cobra.Command {
	var lf limitFlags
	var listen, anthropicUp, openaiUp, storePath, redisURL, redisCA, summarizer, summaryModel, logFormat, storeKeyFile string
	var lockTTL time.Duration
	var maxBody int64
	var storeMaxMB int
	var storeTTL, summaryTimeout, drainTimeout time.Duration
	var aheadMark, coldMark float64
	var cacheTTL time.Duration
	var noCold bool
	var authToken, authTokenFile, tenantHeader string
	var allowOpen bool
	var maxInFlightMB, maxMessages, maxSummaryCalls int
	var admitWait, bodyTimeout, writeIdleTimeout time.Duration
	var hookURL, hookCmd string
	var hookSummary bool
	var hookTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Serve an HTTP proxy that compacts any agent's conversations in flight",
		Long: `Proxy serves the Anthropic Messages API (/v1/messages and
/v1/messages/count_tokens), OpenAI Chat Completions (/v1/chat/completions)
and OpenAI Responses (/v1/responses) in front of the real providers. Point
an agent's base URL at it (docs/proxy.md gives the set-up of Claude Code,
Codex, opencode, aider and pi). Every other path is passed through unchanged; WebSocket
upgrades are refused with 501 so that clients fall back to HTTP.

A request that needs no compaction reaches the upstream byte for byte as the
client sent it, and every response, streamed or not, comes back unchanged
while the proxy reads the usage numbers from a copy. When a conversation
passes the trigger (the default policy: less than --reserve tokens, or a
fifth of a smaller window, left under the model's input limit), the proxy summarizes its older part and sends
the system prompt and tools unchanged, the summary, and the newest messages
verbatim. The compaction is stored, and every later request of the
conversation is rewritten to the same bytes, so the provider's prompt cache
keeps hitting. An upstream overflow error triggers one forced compaction
and one retry before the client sees anything.

Summaries are written by the conversation's own model through the same
upstream with the client's own credentials (--summarizer upstream, the
default), by --summary-model, or offline (--summarizer extractive); a
failed model summary falls back to the offline one. Whatever fails on the
proxy's side, the original request is forwarded: the client never fails
because of compaction.

Conversations are told apart by the session id clients send
(X-Claude-Code-Session-Id, Codex's session_id, opencode's
x-opencode-session, x-session-id) and always verified by a hash chain over
the messages. State is kept in --store (default under
$XDG_STATE_HOME/compact), bounded by --store-max-mb and --store-ttl, or in
the Redis that several replicas share (--redis), where one replica writes
each summary under a per-conversation lock while the others wait for it.
/readyz answers 503 while that store cannot be reached.

Windows come from --window (every model), the config's models, or the
registry; a model with an unknown window is passed through uncompacted
until an overflow error names its window (then it is compacted and the
request retried).
/healthz answers "ok"; /metrics serves Prometheus metrics. One log line per
request goes to stderr (--log-format text or json); keys and auth headers
never appear in logs, metrics or the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.loadSettings(cmd, &lf)
			if err != nil {
				return err
			}
			a.ran = true
			flags := cmd.Flags()
			set := func(name string) bool { return flags.Changed(name) }
			pc := st.proxy
			if set("listen") || pc.Listen == "" {
				pc.Listen = listen
			}
			if set("anthropic-upstream") || pc.AnthropicUpstream == "" {
				pc.AnthropicUpstream = anthropicUp
			}
			if set("openai-upstream") || pc.OpenAIUpstream == "" {
				pc.OpenAIUpstream = openaiUp
			}
			if set("store") || pc.Store == "" {
				pc.Store = storePath
			}
			if set("redis") || pc.Redis == "" {
				pc.Redis = redisURL
			}
			if pc.Redis != "" && set("store") {
				return usagef("--redis and --store both name where the state goes; give one")
			}
			if redisCA != "" && !strings.HasPrefix(pc.Redis, "rediss://") {
				return usagef("--redis-ca is for a rediss:// (TLS) --redis URL")
			}
			if lockTTL < time.Second {
				return usagef("--lock-ttl must be at least 1s, got %s", lockTTL)
			}
			switch summarizer {
			case proxy.SummarizerUpstream, proxy.SummarizerExtractive, proxy.SummarizerNative:
			default:
				return usagef("--summarizer %q: want upstream, extractive or native", summarizer)
			}
			if summaryModel != "" && summarizer == proxy.SummarizerExtractive {
				return usagef("--summary-model needs --summarizer upstream")
			}
			if maxBody <= 0 {
				return usagef("--max-body must be a positive number of bytes, got %d", maxBody)
			}
			if storeMaxMB <= 0 {
				return usagef("--store-max-mb must be positive, got %d", storeMaxMB)
			}
			if storeTTL <= 0 {
				return usagef("--store-ttl must be a positive duration, got %s", storeTTL)
			}
			if drainTimeout <= 0 {
				return usagef("--drain-timeout must be a positive duration, got %s", drainTimeout)
			}
			if summaryTimeout <= 0 {
				return usagef("--summary-timeout must be a positive duration, got %s", summaryTimeout)
			}
			// The proxy's own default (off with the extractive
			// summarizer) unless the flag is given; 0 switches it off.
			ahead := 0.0
			if set("ahead-mark") {
				if aheadMark < 0 || aheadMark > 0.95 {
					return usagef("--ahead-mark must be a share of the trigger from 0 (off) to 0.95, got %g", aheadMark)
				}
				ahead = cmp.Or(aheadMark, -1)
			}
			if coldMark <= 0 || coldMark >= 1 {
				return usagef("--cold-mark must be a share of the trigger between 0 and 1, got %g", coldMark)
			}
			if cacheTTL <= 0 {
				return usagef("--cache-ttl must be a positive duration, got %s", cacheTTL)
			}
			for _, d := range []struct {
				name string
				v    time.Duration
			}{{"--admit-wait", admitWait}, {"--body-timeout", bodyTimeout}, {"--write-idle-timeout", writeIdleTimeout}} {
				if d.v <= 0 {
					return usagef("%s must be a positive duration, got %s", d.name, d.v)
				}
			}
			if hookTimeout <= 0 {
				return usagef("--hook-timeout must be a positive duration, got %s", hookTimeout)
			}
			if !set("on-compaction-url") && pc.OnCompactionURL != "" {
				hookURL = pc.OnCompactionURL
			}
			if !set("on-compaction-cmd") && pc.OnCompactionCmd != "" {
				hookCmd = pc.OnCompactionCmd
			}
			if hookSummary && hookURL == "" && hookCmd == "" {
				return usagef("--hook-summary needs --on-compaction-url or --on-compaction-cmd")
			}
			for _, n := range []struct {
				name string
				v    int
			}{{"--max-inflight-mb", maxInFlightMB}, {"--max-messages", maxMessages}, {"--max-summary-calls", maxSummaryCalls}} {
				if n.v <= 0 {
					return usagef("%s must be positive, got %d", n.name, n.v)
				}
			}
			if set("tenant-header") || pc.TenantHeader == "" {
				pc.TenantHeader = tenantHeader
			}
			token, tokenFrom, err := a.proxyToken(flags, pc, authToken, authTokenFile)
			if err != nil {
				return err
			}
			if token != "" {
				a.apiKeys = append(a.apiKeys, token)
			}
			if open := !loopbackOnly(pc.Listen); open && token == "" {
				if !allowOpen {
					return usagef("--listen %s is reachable from other machines and no proxy token is set: anyone who connects would use the proxy and the credentials it forwards; set --auth-token-file (or %s), or pass --allow-open", pc.Listen, envProxyToken)
				}
				fmt.Fprintf(a.stderr, "compact proxy: warning: listening on %s without a proxy token (--allow-open): anyone who can connect may use it\n", pc.Listen)
			}
			var handler slog.Handler
			level := slog.LevelInfo
			if a.verbose {
				level = slog.LevelDebug
			}
			switch logFormat {
			case "text":
				handler = slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level})
			case "json":
				handler = slog.NewJSONHandler(a.stderr, &slog.HandlerOptions{Level: level})
			default:
				return usagef("--log-format %q: want text or json", logFormat)
			}
			logger := slog.New(handler)

			// The same trigger as inspect and run: compact.DefaultPolicy
			// unless the settings choose another.
			policy, err := st.cfg.TriggerPolicy()
			if err != nil {
				return err
			}
			reg, err := compact.LoadRegistry()
			if err != nil {
				return err
			}
			reg = reg.With(st.cfg.Models...)
			recordKey, err := a.storeKey(storeKeyFile)
			if err != nil {
				return err
			}

			var state store.Store
			if pc.Redis != "" {
				redis.QuietClientLogs()
				ropts := redis.Options{TTL: storeTTL, Logger: logger, RecordKey: recordKey}
				if redisCA != "" {
					pem, err := os.ReadFile(redisCA)
					if err != nil {
						return fmt.Errorf("--redis-ca: %w", err)
					}
					ropts.RootCAs = x509.NewCertPool()
					if !ropts.RootCAs.AppendCertsFromPEM(pem) {
						return usagef("--redis-ca %s: no PEM certificate in the file", redisCA)
					}
				}
				rs, err := redis.Open(cmd.Context(), pc.Redis, ropts)
				if err != nil {
					return usagef("--redis: %s", strings.TrimPrefix(err.Error(), "redis "))
				}
				state = rs
			} else if pc.Store == storeMemory {
				state = store.NewMemory(store.MemoryOptions{MaxBytes: int64(storeMaxMB) << 20, TTL: storeTTL, RecordKey: recordKey})
			} else {
				path := pc.Store
				if path == "" {
					if path, err = bolt.DefaultPath(); err != nil {
						return fmt.Errorf("--store: %w", err)
					}
				}
				bs, err := bolt.Open(path, bolt.Options{MaxBytes: int64(storeMaxMB) << 20, TTL: storeTTL, RecordKey: recordKey})
				if err != nil {
					return fmt.Errorf("--store %s: %w", path, err)
				}
				state = bs
			}
			srv, err := proxy.New(proxy.Config{
				AnthropicUpstream: pc.AnthropicUpstream,
				OpenAIUpstream:    pc.OpenAIUpstream,
				Window:            st.cfg.Window,
				Registry:          reg,
				Policy:            policy,
				KeepRecentTokens:  st.cfg.KeepRecentTokens,
				Summarizer:        summarizer,
				SummaryModel:      summaryModel,
				Store:             state,
				MaxBodyBytes:      maxBody,
				SummaryTimeout:    summaryTimeout,
				AheadMark:         ahead,
				NoColdCompaction:  noCold,
				CacheTTL:          cacheTTL,
				ColdMark:          coldMark,
				LockTTL:           lockTTL,
				LocalFallback:     pc.Redis != "",
				Logger:            logger,
				AuthToken:         token,
				TenantHeader:      pc.TenantHeader,
				MaxInFlightBytes:  int64(maxInFlightMB) << 20,
				AdmitWait:         admitWait,
				MaxMessages:       maxMessages,
				MaxSummaryCalls:   maxSummaryCalls,
				BodyTimeout:       bodyTimeout,
				WriteIdleTimeout:  writeIdleTimeout,
				OnCompactionURL:   hookURL,
				OnCompactionCmd:   hookCmd,
				HookSummary:       hookSummary,
				HookTimeout:       hookTimeout,
			})
			if err != nil {
				state.Close()
				msg := strings.TrimPrefix(err.Error(), "proxy: ")
				if strings.HasPrefix(msg, "auth token: ") {
					msg = "proxy token from " + tokenFrom + ": " + strings.TrimPrefix(msg, "auth token: ")
				}
				return usagef("%s", msg)
			}
			defer srv.Close()
			return serveProxy(cmd.Context(), pc.Listen, srv, drainTimeout, logger, a)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", defaultListen, "address to listen on (host:port; port 0 picks a free one)")
	f.StringVar(&anthropicUp, "anthropic-upstream", proxy.DefaultAnthropicUpstream, "base URL the Anthropic API requests go to")
	f.StringVar(&openaiUp, "openai-upstream", proxy.DefaultOpenAIUpstream, "base URL the OpenAI API requests go to")
	f.StringVar(&storePath, "store", "", `state file (default $XDG_STATE_HOME/compact/proxy.db), or "memory"`)
	f.StringVar(&redisURL, "redis", "", "redis://[user:password@]host:port/db (or rediss:// for TLS) shared by several replicas, instead of --store")
	f.StringVar(&redisCA, "redis-ca", "", "with a rediss:// URL: PEM file of the CA that signed the Redis server's certificate (default: the system's CAs)")
	f.StringVar(&storeKeyFile, "store-key-file", "", "file holding the key (at least 16 bytes) that authenticates the stored records with HMAC-SHA256; default $"+envStoreKey+", else none")
	f.DurationVar(&lockTTL, "lock-ttl", proxy.DefaultLockTTL, "with --redis: lifetime of a conversation's lock, extended while its summary is written")
	f.IntVar(&storeMaxMB, "store-max-mb", int(store.DefaultMaxBytes>>20), "size cap of the stored state in MiB; the least recently used conversations go first")
	f.DurationVar(&storeTTL, "store-ttl", store.DefaultTTL, "how long a conversation's state is kept after its last use")
	f.StringVar(&summarizer, "summarizer", proxy.SummarizerUpstream, "who writes summaries: upstream (the conversation's model, the client's credentials), extractive (offline) or native (the provider's own compaction where the API has one, else upstream)")
	f.StringVar(&summaryModel, "summary-model", "", "model that writes summaries through the upstream, instead of the conversation's own")
	f.DurationVar(&summaryTimeout, "summary-timeout", 3*time.Minute, "how long a model summary may take before the offline one is used instead")
	f.Float64Var(&aheadMark, "ahead-mark", proxy.DefaultAheadMark, "share of the trigger at which a conversation's summary starts being written ahead, so that the request crossing the trigger need not wait for it; 0 switches it off (off by default with --summarizer extractive)")
	f.BoolVar(&noCold, "no-cold-compaction", false, "do not compact a conversation on its first request after it was idle longer than the provider's cache lifetime")
	f.DurationVar(&cacheTTL, "cache-ttl", proxy.DefaultCacheTTL, `the provider's prompt-cache lifetime (an hour for requests that mark their cache "ttl":"1h")`)
	f.Float64Var(&coldMark, "cold-mark", proxy.DefaultColdMark, "share of the trigger above which a conversation idle past --cache-ttl is compacted")
	f.Int64Var(&maxBody, "max-body", proxy.DefaultMaxBodyBytes, "largest request body accepted, in bytes; larger ones get 413")
	f.StringVar(&authToken, "auth-token", "", "the proxy's own token, required from clients in the X-Compact-Token header (or Proxy-Authorization: Bearer); visible to other local users in the process list, so prefer --auth-token-file or $"+envProxyToken)
	f.StringVar(&authTokenFile, "auth-token-file", "", "file holding the proxy's token (surrounding whitespace ignored)")
	f.BoolVar(&allowOpen, "allow-open", false, "serve on an address beyond loopback without a proxy token (a warning is printed)")
	f.StringVar(&tenantHeader, "tenant-header", "", "request header naming the tenant, for deployments whose clients send no provider credential (a gateway adds it behind the proxy); keys their conversations apart, not forwarded")
	f.IntVar(&maxInFlightMB, "max-inflight-mb", proxy.DefaultMaxInFlightBytes>>20, "MiB of request bodies held in memory at once; a request that finds no room waits --admit-wait, then gets 503 with Retry-After")
	f.DurationVar(&admitWait, "admit-wait", proxy.DefaultAdmitWait, "how long a request waits for room under --max-inflight-mb")
	f.IntVar(&maxMessages, "max-messages", proxy.DefaultMaxMessages, "requests with more messages than this are passed through uncompacted")
	f.IntVar(&maxSummaryCalls, "max-summary-calls", proxy.DefaultMaxSummaryCalls, "model calls one compaction may make (long histories are summarized in chunks); beyond it the request is passed through")
	f.DurationVar(&bodyTimeout, "body-timeout", proxy.DefaultBodyTimeout, "time a client has to send a request body in full; slower ones get 408")
	f.DurationVar(&writeIdleTimeout, "write-idle-timeout", proxy.DefaultWriteIdleTimeout, "a client that reads nothing of its answer for this long is cut off (streams that keep moving are not)")
	f.StringVar(&hookURL, "on-compaction-url", "", "POST every compaction the proxy records to this URL as JSON (the library's compaction event with the conversation's id, model and costs), in the background")
	f.StringVar(&hookCmd, "on-compaction-cmd", "", "run this shell command for every compaction the proxy records, the same JSON on its stdin, in the background")
	f.BoolVar(&hookSummary, "hook-summary", false, "add the summary text to the compaction hooks' JSON (by default they carry figures only)")
	f.DurationVar(&hookTimeout, "hook-timeout", proxy.DefaultHookTimeout, "how long one hook delivery (the POST, or the command) may take")
	f.StringVar(&logFormat, "log-format", "text", "log format on stderr: text or json")
	f.DurationVar(&drainTimeout, "drain-timeout", 30*time.Second, "on Ctrl-C or SIGTERM, how long requests in flight (streams included) may take to finish")
	lf.addWindow(cmd)
	_ = f.MarkHidden("model")
	lf.addReserve(cmd)
	lf.addKeepRecent(cmd)
	lf.addPolicy(cmd)
	cmd.AddCommand(a.proxyStatusCommand(), a.proxyShowCommand())
	return cmd
}

// envStoreKey is the environment variable that holds the store's record
// key when --store-key-file is not given.
const envStoreKey = "COMPACT_STORE_KEY"

// storeKey returns the key that authenticates stored records: the content
// of file (surrounding white space trimmed), else $COMPACT_STORE_KEY, else
// nil (no authentication). The key itself never appears in an error.
func (a *app) storeKey(file string) ([]byte, error) {
	var key []byte
	what := envStoreKey
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, usagef("--store-key-file: %v", err)
		}
		key, what = bytes.TrimSpace(b), "--store-key-file "+file
	} else if v := a.getenv(envStoreKey); v != "" {
		key = []byte(strings.TrimSpace(v))
	} else {
		return nil, nil
	}
	if len(key) < store.MinRecordKeyLen {
		return nil, usagef("%s: the key is %d bytes; want at least %d (for example: head -c 32 /dev/urandom | base64)", what, len(key), store.MinRecordKeyLen)
	}
	return key, nil
}

// serveProxy listens on addr and serves srv until ctx ends (Ctrl-C,
// SIGTERM), then shuts down gracefully: no new connections, and requests
// in flight, streams included, get up to drain to finish.
func serveProxy(ctx context.Context, addr string, srv http.Handler, drain time.Duration, logger *slog.Logger, a *app) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usagef("--listen %s: %v", addr, err)
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: proxyHeaderTimeout,
		// No ReadTimeout or WriteTimeout: a streamed answer lasts as long
		// as the model writes. The proxy bounds the body read and each
		// write itself (--body-timeout, --write-idle-timeout).
		IdleTimeout: proxyIdleTimeout,
		ErrorLog:    log.New(serverLog{logger}, "", 0),
	}
	fmt.Fprintf(a.stdout, "compact proxy listening on http://%s\n", ln.Addr())
	fmt.Fprintf(a.stdout, "compact proxy live view: http://%s%s\n", ln.Addr(), proxy.UIPath)
	logger.Info("listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("draining", "timeout", drain.String())
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// serverLog turns the lines net/http logs itself (a panic it recovered,
// an accept error) into one slog warning each: their first line only,
// never a stack trace.
type serverLog struct{ log *slog.Logger }

// Write logs p's first line.
func (l serverLog) Write(p []byte) (int, error) {
	msg, _, _ := strings.Cut(strings.TrimSpace(string(p)), "\n")
	l.log.Warn("http server: " + msg)
	return len(p), nil
}

// proxyToken returns the proxy's token from, first to last, --auth-token,
// --auth-token-file, $COMPACT_PROXY_TOKEN and the configuration file's
// authToken and authTokenFile; "" when none is given. from names where it
// came from, for error messages. The flags may not both be given.
func (a *app) proxyToken(flags interface{ Changed(string) bool }, pc proxyConfig, flagToken, flagFile string) (tok, from string, err error) {
	if flags.Changed("auth-token") && flags.Changed("auth-token-file") {
		return "", "", usagef("--auth-token and --auth-token-file both give the proxy token; give one")
	}
	readFile := func(what, path string) (string, string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", what, err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", "", usagef("%s %s: the file is empty", what, path)
		}
		return tok, what + " " + path, nil
	}
	switch {
	case flags.Changed("auth-token"):
		if flagToken == "" {
			return "", "", usagef("--auth-token is empty")
		}
		return flagToken, "--auth-token", nil
	case flags.Changed("auth-token-file"):
		return readFile("--auth-token-file", flagFile)
	}
	if a.getenv != nil {
		if v := strings.TrimSpace(a.getenv(envProxyToken)); v != "" {
			return v, "$" + envProxyToken, nil
		}
	}
	if pc.AuthToken != "" {
		return pc.AuthToken, "the configuration's authToken", nil
	}
	if pc.AuthTokenFile != "" {
		return readFile("authTokenFile", pc.AuthTokenFile)
	}
	return "", "", nil
}

// loopbackOnly reports whether a --listen address can only be reached
// from this machine: a loopback IP or "localhost". An empty host, a
// wildcard or any other name counts as reachable from elsewhere.
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
