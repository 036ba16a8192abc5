package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/proxy"
)

// defaultProxyURL is where "compact proxy status" and "compact proxy
// show" look for the proxy unless told otherwise: the proxy's default
// --listen.
const defaultProxyURL = "http://" + defaultListen

// proxyAPITimeout bounds one call of the conversation API.
const proxyAPITimeout = 15 * time.Second

// maxStatusPages bounds the pages "compact proxy status" reads (of
// store.MaxListLimit conversations each).
const maxStatusPages = 20

// proxyClientFlags are the flags of the commands that read a running
// proxy's conversation API.
type proxyClientFlags struct {
	url, token, tokenFile string
}

func (f *proxyClientFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.url, "url", defaultProxyURL, "base URL of the running proxy (default: the configuration's listen address, else "+defaultProxyURL+")")
	fs.StringVar(&f.token, "auth-token", "", "the proxy's token, when it has one (visible in the process list: prefer --auth-token-file or $"+envProxyToken+")")
	fs.StringVar(&f.tokenFile, "auth-token-file", "", "file holding the proxy's token")
}

func (a *app) proxyStatusCommand() *cobra.Command {
	var pf proxyClientFlags
	var limit int
	cmd := &cobra.Command{
		Use:   "status",
		Short: "List the conversations a running proxy keeps",
		Long: `Status asks a running proxy (GET /api/conversations) for the
conversations it keeps and prints one line each, the most recently active
first: the agent that sent it, its model, its context against the trigger,
when it was last active, its compactions, the share of its prompts read
from the provider's cache, its estimated cost (requests and summaries, at
list prices) and the tokens its compactions kept out of the requests.
With --json it prints the API's answer (every page joined) as it is.

The proxy's token, when it has one, comes from --auth-token,
--auth-token-file, $` + envProxyToken + ` or the configuration, as for
"compact proxy"; a proxy without a token answers loopback clients only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return usagef("--limit must not be negative, got %d", limit)
			}
			c, err := a.proxyClient(cmd, pf)
			if err != nil {
				return err
			}
			a.ran = true
			all := proxy.ConversationList{Conversations: []proxy.ConversationRow{}}
			cursor := ""
			for range maxStatusPages {
				var page proxy.ConversationList
				q := url.Values{"limit": {"500"}}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				if _, err := c.get(cmd.Context(), proxy.ConversationsPath+"?"+q.Encode(), &page); err != nil {
					return err
				}
				all.Conversations = append(all.Conversations, page.Conversations...)
				if cursor = page.Next; cursor == "" {
					break
				}
			}
			all.Next = cursor
			slices.SortStableFunc(all.Conversations, func(x, y proxy.ConversationRow) int {
				return cmp.Or(y.LastActivity.Compare(x.LastActivity), strings.Compare(x.Key, y.Key))
			})
			if limit > 0 && len(all.Conversations) > limit {
				all.Conversations = all.Conversations[:limit]
			}
			if a.jsonOut {
				return writeJSON(a.stdout, all)
			}
			return a.printStatus(all)
		},
	}
	pf.add(cmd)
	cmd.Flags().IntVar(&limit, "limit", 0, "show only the N most recently active conversations (0: all)")
	return cmd
}

func (a *app) proxyShowCommand() *cobra.Command {
	var pf proxyClientFlags
	var full bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one conversation of a running proxy: its compactions and their summaries",
		Long: `Show asks a running proxy (GET /api/conversations/ID) about one
conversation: ID is the short id the proxy's log lines print
(conversation=...), or the full key "compact proxy status --json" gives.
It prints what status prints, then every compaction the proxy keeps for
it, newest first, as a card: why it ran, what wrote the summary, the
context before and after, how long the summary took, which unit the kept
part starts at, what the summary requests cost and read from the cache,
and the summary the model reads now; then the timeline of the latest
requests. With --json it prints the API's answer as it is.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.proxyClient(cmd, pf)
			if err != nil {
				return err
			}
			a.ran = true
			var conv proxy.Conversation
			raw, err := c.get(cmd.Context(), proxy.ConversationsPath+"/"+url.PathEscape(args[0]), &conv)
			if err != nil {
				return err
			}
			if a.jsonOut {
				_, err := a.stdout.Write(raw)
				return err
			}
			return a.printConversation(conv, full)
		},
	}
	pf.add(cmd)
	cmd.Flags().BoolVar(&full, "full", false, "print every summary whole (by default each is cut at 2,000 characters)")
	return cmd
}

// proxyAPIClient calls a running proxy's conversation API.
type proxyAPIClient struct {
	base  string
	token string
	http  *http.Client
}

// proxyClient settles the proxy's URL and token from the flags, the
// environment and the configuration.
func (a *app) proxyClient(cmd *cobra.Command, pf proxyClientFlags) (*proxyAPIClient, error) {
	st, err := a.loadSettings(cmd, nil)
	if err != nil {
		return nil, err
	}
	base := pf.url
	if !cmd.Flags().Changed("url") && st.proxy.Listen != "" {
		base = "http://" + dialable(st.proxy.Listen)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--url %q: want the proxy's base URL, such as %s", base, defaultProxyURL)
	}
	token, _, err := a.proxyToken(cmd.Flags(), st.proxy, pf.token, pf.tokenFile)
	if err != nil {
		return nil, err
	}
	if token != "" {
		a.apiKeys = append(a.apiKeys, token)
	}
	return &proxyAPIClient{base: strings.TrimRight(u.String(), "/"), token: token, http: &http.Client{Timeout: proxyAPITimeout}}, nil
}

// dialable turns a listen address into one to connect to: a wildcard or
// empty host becomes the loopback address.
func dialable(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// get fetches path, decodes the answer into v and returns it raw. An
// error answer becomes an error carrying the proxy's message.
func (c *proxyAPIClient) get(ctx context.Context, path string, v any) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set(proxy.TokenHeader, c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return nil, fmt.Errorf("no proxy answers at %s (is compact proxy running there? --url names another): %w", c.base, err)
		}
		return nil, fmt.Errorf("asking the proxy at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the proxy's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e proxy.APIError
		msg := strings.TrimSpace(string(body))
		if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
			msg = strings.TrimPrefix(e.Error.Message, "compact proxy: ")
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		if resp.StatusCode == http.StatusUnauthorized && c.token == "" {
			msg += " (give the token with --auth-token-file or $" + envProxyToken + ")"
		}
		return nil, fmt.Errorf("the proxy at %s answered %d: %s", c.base, resp.StatusCode, msg)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("the proxy at %s answered something that is not its conversation API (%v); is --url a compact proxy?", c.base, err)
	}
	return body, nil
}

// now is the app's clock.
func (a *app) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

// printStatus prints the table of conversations.
func (a *app) printStatus(l proxy.ConversationList) error {
	if len(l.Conversations) == 0 {
		_, err := fmt.Fprintln(a.stdout, "The proxy keeps no conversation yet.")
		return err
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tMODEL\tCONTEXT\tACTIVE\tCOMPACTIONS\tCACHE READ\tCOST\tSAVED\tAHEAD")
	now := a.clock()
	for _, r := range l.Conversations {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, dash(r.Agent), dash(r.Model), contextCell(r), numfmt.Ago(now, r.LastActivity),
			numfmt.Thousands(r.Compactions), shareText(r.CacheReadShare), costText(r.CostUSD, r.Unpriced), tokensText(r.TokensSaved), dash(r.Pending))
	}
	tw.Flush()
	more := ""
	if l.Next != "" {
		more = " (more not read)"
	}
	fmt.Fprintf(&b, "%s%s\n", plural(len(l.Conversations), "conversation"), more)
	_, err := a.stdout.Write(b.Bytes())
	return err
}

// printConversation prints one conversation: its figures, its compaction
// cards and its timeline.
func (a *app) printConversation(c proxy.Conversation, full bool) error {
	var b bytes.Buffer
	now := a.clock()
	fmt.Fprintf(&b, "Conversation %s (%s)\n", c.ID, c.Key)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	agent := dash(c.Agent)
	if c.IDSource != "" {
		agent += ", recognised by " + c.IDSource
	}
	fmt.Fprintf(tw, "  agent\t%s\n", agent)
	model := dash(c.Model)
	if c.Window > 0 {
		model += ", window " + tokensText(c.Window)
	}
	fmt.Fprintf(tw, "  model\t%s\n", model)
	fmt.Fprintf(tw, "  context\t%s\n", contextCell(c.ConversationRow))
	fmt.Fprintf(tw, "  last active\t%s (%s)\n", c.LastActivity.UTC().Format("2006-01-02 15:04:05 MST"), numfmt.Ago(now, c.LastActivity))
	fmt.Fprintf(tw, "  requests\t%s, %s of their prompts read from the cache\n", numfmt.Thousands(c.Requests), shareText(c.CacheReadShare))
	cost := costText(c.CostUSD, c.Unpriced)
	if c.Summaries.Requests > 0 {
		cost += fmt.Sprintf(" (summaries %s in %s)", costText(c.SummaryCostUSD, 0), plural(c.Summaries.Requests, "request"))
	}
	fmt.Fprintf(tw, "  cost\t%s\n", cost)
	saved := fmt.Sprintf("%s kept out of the requests by %s", tokensText(c.TokensSaved), plural(c.Compactions, "compaction"))
	if v := c.CompactionSavedUSD; v != nil {
		saved += fmt.Sprintf(" (at least %s)", numfmt.Dollars(*v))
	}
	if v := c.CacheSavedUSD; v != nil {
		saved += fmt.Sprintf("; the provider's prompt cache saved %s", numfmt.Dollars(*v))
	}
	fmt.Fprintf(tw, "  saved\t%s\n", saved)
	if r := c.Request; r != nil {
		fmt.Fprintf(tw, "  last request\t%s\n", requestText(r))
	}
	if m := c.LastMiss; m != nil {
		fmt.Fprintf(tw, "  last cache miss\t%s, request %s (%s): %s of %s read; %s\n", m.Cause, numfmt.Thousands(m.Request), numfmt.Ago(now, m.At),
			tokensText(m.Read), tokensText(m.Expected), m.Detail)
		if m.ProviderReason != "" {
			fmt.Fprintf(tw, "  \tthe provider's diagnostics: %s, %s missed\n", m.ProviderReason, tokensText(m.ProviderMissed))
		}
	}
	if p := c.PendingSummary; p != nil {
		fmt.Fprintf(tw, "  ahead\ta summary written ahead from %s is ready (%s)\n", tokensText(p.TokensBefore), dash(p.Summarizer))
	} else if c.Pending != "" {
		fmt.Fprintf(tw, "  ahead\t%s\n", c.Pending)
	}
	tw.Flush()

	if len(c.Cards) > 0 {
		kept := ""
		if c.Compactions > len(c.Cards) {
			kept = fmt.Sprintf("; the proxy keeps the newest %d", len(c.Cards))
		}
		fmt.Fprintf(&b, "\nCompactions (%s%s, newest first)\n", numfmt.Thousands(c.Compactions), kept)
	}
	for i, card := range c.Cards {
		n := c.Compactions - i
		fmt.Fprintf(&b, "\n#%d  %s, %s → %s (%s freed), %s\n", n, reasonText(card), tokensText(card.TokensBefore), tokensText(card.TokensAfter),
			tokensText(card.TokensBefore-card.TokensAfter), card.Created.UTC().Format("2006-01-02 15:04:05 MST"))
		line := "    by " + dash(card.Summarizer)
		if card.DurationMS > 0 {
			line += ", written in " + numfmt.Duration(card.DurationMS)
			if card.Ahead {
				line += " ahead of time"
			}
		}
		line += fmt.Sprintf(", kept verbatim from unit %s on", numfmt.Thousands(card.FirstKeptUnit))
		fmt.Fprintln(&b, line)
		if card.KeptPreview != "" {
			fmt.Fprintf(&b, "    which opens with %s: %q\n", card.KeptRole, preview(card.KeptPreview, 100))
		}
		if len(card.SummaryRequests) > 0 {
			read, prompt := 0, 0
			for _, r := range card.SummaryRequests {
				read += r.CacheRead
				prompt += r.Input + r.CacheRead + r.CacheWrite
			}
			line := fmt.Sprintf("    %s, %s read from the cache", plural(len(card.SummaryRequests), "summary request"), percentText(read, prompt))
			if card.SummaryCostUSD != nil {
				line += ", " + costText(*card.SummaryCostUSD, 0)
			}
			fmt.Fprintln(&b, line)
		}
		if card.Summary != "" {
			text := card.Summary
			if !full {
				text = shorten(text, 2000)
			}
			fmt.Fprintln(&b)
			for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
				fmt.Fprintln(&b, strings.TrimRight("    "+l, " "))
			}
		}
	}

	if len(c.Timeline) > 0 {
		fmt.Fprintf(&b, "\nTimeline (the latest %s, oldest first)\n", plural(len(c.Timeline), "request"))
		rows := [][]string{{"TIME", "SENT", "CACHED", "CLIENT SENT", ""}}
		for _, m := range c.Timeline {
			client := "-"
			if m.Client > 0 {
				client = numfmt.Thousands(m.Client)
			}
			var notes []string
			if m.Compaction {
				notes = append(notes, "compacted here")
			} else if m.Applied {
				notes = append(notes, "summary applied")
			}
			if m.Overflow {
				notes = append(notes, "overflow")
			}
			rows = append(rows, []string{m.At.UTC().Format("15:04:05"), numfmt.Thousands(m.Prompt), percentText(m.CacheRead, m.Prompt),
				client, strings.Join(notes, ", ")})
		}
		// Numbers right-aligned, the notes left.
		width := make([]int, 4)
		for _, r := range rows {
			for i := range width {
				width[i] = max(width[i], len(r[i]))
			}
		}
		for _, r := range rows {
			line := fmt.Sprintf("  %-*s  %*s  %*s  %*s  %s", width[0], r[0], width[1], r[1], width[2], r[2], width[3], r[3], r[4])
			fmt.Fprintln(&b, strings.TrimRight(line, " "))
		}
	}
	_, err := a.stdout.Write(b.Bytes())
	return err
}

// contextCell is a conversation's context against its trigger: "4,986 /
// 9,000 (55%)".
func contextCell(r proxy.ConversationRow) string {
	if r.Trigger <= 0 {
		return numfmt.Thousands(r.Tokens)
	}
	return fmt.Sprintf("%s / %s (%.0f%%)", numfmt.Thousands(r.Tokens), numfmt.Thousands(r.Trigger), 100*r.Fill)
}

// requestText says what the latest request sent upstream in place of
// what the client sent: "the client's 49 messages (~68,208 tokens) went
// upstream as a summary and the 10 after message 39: 14,506 tokens".
func requestText(r *proxy.RequestShape) string {
	client := plural(r.ClientMessages, "message")
	if r.ClientTokens > 0 {
		client += " (~" + tokensText(r.ClientTokens) + ")"
	}
	switch {
	case r.ClientMessages == 0:
		return "passed through unread, " + tokensText(r.UpstreamTokens) + " as the provider counted it"
	case r.Replaced == 0:
		return "the client's " + client + " went upstream as they came: " + tokensText(r.UpstreamTokens)
	}
	by := "a summary"
	if r.Native != "" {
		by = "the provider's compaction (" + r.Native + ")"
	}
	return fmt.Sprintf("the client's %s went upstream as %s and the %s after message %s: %s",
		client, by, numfmt.Thousands(r.ClientMessages-r.Replaced), numfmt.Thousands(r.Replaced), tokensText(r.UpstreamTokens))
}

// reasonText names why a compaction ran, for people.
func reasonText(c proxy.CompactionCard) string {
	s := string(c.Reason)
	switch c.Reason {
	case "idle":
		s = "idle (cold cache)"
	case "threshold":
		s = "threshold"
	}
	if c.Native != "" {
		s += ", the provider's own (" + c.Native + ")"
	}
	return s
}

// shareText renders a share from 0 to 1 as a percentage; "-" when absent.
func shareText(s *float64) string {
	if s == nil {
		return "-"
	}
	return numfmt.Share(*s)
}

// percentText renders part of whole as a percentage; "-" for no whole.
func percentText(part, whole int) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", percent(part, whole))
}

// costText renders US dollars: four decimals under a dollar, two above;
// calls of a model without known prices are said apart.
func costText(usd float64, unpriced int) string {
	s := numfmt.Dollars(usd)
	switch {
	case unpriced > 0 && usd == 0:
		return "unknown (no prices)"
	case unpriced > 0:
		s += fmt.Sprintf(" + %s unpriced", plural(unpriced, "call"))
	}
	return s
}

// tokensText renders a token count with its unit.
func tokensText(n int) string { return numfmt.Thousands(n) + " tokens" }

// dash is s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
