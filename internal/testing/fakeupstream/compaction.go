package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Provider compaction.
//
// Anthropic on-demand compaction (beta compact-2026-09-04, PROXY.md §1.7,
// §8): a /v1/messages request with top-level "compaction":
// {"type":"summarize"} is answered with only a compaction block (content:
// a readable summary, encrypted_content: an opaque blob to send back
// verbatim; SDK BetaCompactionBlock) and stop_reason "compaction". The
// client puts the block first in messages in place of the messages it
// summarized; thinking blocks of the kept turns that follow them unchanged
// stay valid, because the blob carries the running hash of the replaced
// messages.
//
// OpenAI POST /v1/responses/compact (PROXY.md §1.8; codex
// endpoint/compact.rs; openai-python types/responses/compacted_response.py):
// answered with {"id", "object": "response.compaction", "created_at",
// "output", "usage"}, output being the window to send as the next input:
// every user message of the input followed by one encrypted compaction
// item. Both blobs are sealed to the credential that made them.

// CompactBeta is the anthropic-beta value on-demand compaction needs.
const CompactBeta = "compact-2026-09-04"

// Error texts of the compaction rules. The API's wording for these is not
// published; they mirror its validation style (a missing beta makes the
// field an extra input, as for block_binding, Wei-Shaw/sub2api PR #6677)
// and name the field and place.
const (
	errCompactionBeta    = "compaction: Extra inputs are not permitted"
	errCompactionWithCM  = "compaction: cannot be combined with `context_management` in the same request"
	errCompactionPending = "messages.%d: a compaction request cannot end with an `assistant` message whose `tool_use` blocks have no `tool_result`"
	errCompactionType    = "compaction.type: Input should be 'summarize'"
	errBlockBeta         = "messages.%d.content.%d.type: Input tag 'compaction' found using 'type' does not match any of the expected tags (the `compaction` block requires the `compact-2026-09-04` value in the `anthropic-beta` header)"
	errBlockPlace        = "messages.%d.content.%d: a `compaction` block must be the first block of the first message"
	errBlockInvalid      = "messages.%d.content.%d: Invalid `encrypted_content` in `compaction` block"
	// errEncrypted is OpenAI's refusal of an encrypted item it cannot
	// verify (openai/codex #8145, #8132: code invalid_encrypted_content).
	errEncrypted = "The encrypted content %s could not be verified."
)

// compactionBlob is what a compaction blob carries.
type compactionBlob struct {
	// State is the running hash (see checkThinking) after the replaced
	// messages; zero for a Responses compaction.
	State digest `json:"state"`
	// Step is the highest STEP-n marker of the replaced messages, so the
	// script carries on after a compaction.
	Step int `json:"step"`
	// Items is the number of list items replaced.
	Items int `json:"items"`
}

// hasBeta reports whether the anthropic-beta header (a comma list, maybe
// repeated) holds want.
func hasBeta(h http.Header, want string) bool {
	for _, v := range h.Values("Anthropic-Beta") {
		for _, b := range strings.Split(v, ",") {
			if strings.TrimSpace(b) == want {
				return true
			}
		}
	}
	return false
}

// anthropicCompaction applies the on-demand compaction rules to a
// Messages request: the compaction field's, and those of a compaction
// block sent back. It returns the verified blob of the block that opens
// the request (nil when there is none), or the refusal's message.
func (f *Fake) anthropicCompaction(h http.Header, cred string, b *body) (*compactionBlob, string) {
	if len(b.compaction) > 0 && string(b.compaction) != "null" {
		if !hasBeta(h, CompactBeta) {
			return nil, errCompactionBeta
		}
		var c struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(b.compaction, &c) != nil || c.Type != "summarize" {
			return nil, errCompactionType
		}
		if len(b.contextManagement) > 0 && string(b.contextManagement) != "null" {
			return nil, errCompactionWithCM
		}
		if n := len(b.items); n > 0 {
			if m, ok := parseMessage(b.items[n-1]); ok && m.role == "assistant" {
				for _, bl := range m.blocks {
					if readBlock(bl).Type == "tool_use" {
						return nil, fmt.Sprintf(errCompactionPending, n-1)
					}
				}
			}
		}
	}
	var opened *compactionBlob
	for i, raw := range b.items {
		m, ok := parseMessage(raw)
		if !ok {
			continue
		}
		for j, bl := range m.blocks {
			fields := readBlock(bl)
			if fields.Type != "compaction" {
				continue
			}
			if !hasBeta(h, CompactBeta) {
				return nil, fmt.Sprintf(errBlockBeta, i, j)
			}
			if i != 0 || j != 0 {
				return nil, fmt.Sprintf(errBlockPlace, i, j)
			}
			var blob compactionBlob
			if f.open("anthropic-compaction", cred, fields.EncryptedContent, &blob) != nil {
				return nil, fmt.Sprintf(errBlockInvalid, i, j)
			}
			opened = &blob
		}
	}
	return opened, ""
}

// compactionRequested reports whether a Messages request asks for
// on-demand compaction.
func compactionRequested(b *body) bool {
	return len(b.compaction) > 0 && string(b.compaction) != "null"
}

// transcript renders a message list as the plain transcript Handover
// reads: "[role]\ntext" per message, text blocks and tool results only.
func transcript(api API, items []json.RawMessage) string {
	var sb strings.Builder
	sb.WriteString(transcriptTag)
	for _, raw := range items {
		var m struct {
			Role    string          `json:"role"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		role, text := m.Role, contentText(m.Content)
		if api == Responses && strings.HasSuffix(m.Type, "_call_output") {
			role, text = "tool", contentText(m.Output)
		}
		if role == "" || strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Fprintf(&sb, "[%s]\n%s\n\n", role, text)
	}
	sb.WriteString("</transcript>\n")
	return sb.String()
}

// stepsIn is the highest STEP-n marker in the tool results of items and
// in the compaction blobs among them that this fake can open for cred.
func (f *Fake) stepsIn(api API, cred string, items []json.RawMessage) int {
	best := 0
	for i := range items {
		if res, ok := lastToolResult(api, items[i:i+1]); ok {
			if n, found := highestStep(res); found && n > best {
				best = n
			}
		}
		if blob, ok := f.compactionIn(api, cred, items[i]); ok && blob.Step > best {
			best = blob.Step
		}
	}
	return best
}

// compactionIn opens the compaction blob an item carries: a Responses
// compaction item, or an Anthropic message whose first block is a
// compaction block.
func (f *Fake) compactionIn(api API, cred string, item json.RawMessage) (compactionBlob, bool) {
	var blob compactionBlob
	switch api {
	case Responses:
		var it struct {
			Type             string `json:"type"`
			EncryptedContent string `json:"encrypted_content"`
		}
		if json.Unmarshal(item, &it) != nil || it.Type != "compaction" {
			return blob, false
		}
		return blob, f.open("responses-compaction", cred, it.EncryptedContent, &blob) == nil
	case Anthropic:
		m, ok := parseMessage(item)
		if !ok || len(m.blocks) == 0 {
			return blob, false
		}
		bl := readBlock(m.blocks[0])
		if bl.Type != "compaction" {
			return blob, false
		}
		return blob, f.open("anthropic-compaction", cred, bl.EncryptedContent, &blob) == nil
	}
	return blob, false
}

// responsesCompaction checks the compaction items of a Responses input:
// each must have been made by this fake for cred. It returns the refusal's
// message, "" when they all verify.
func (f *Fake) responsesCompaction(cred string, items []json.RawMessage) string {
	for _, raw := range items {
		var it struct {
			Type             string `json:"type"`
			EncryptedContent string `json:"encrypted_content"`
		}
		if json.Unmarshal(raw, &it) != nil || it.Type != "compaction" {
			continue
		}
		var blob compactionBlob
		if f.open("responses-compaction", cred, it.EncryptedContent, &blob) != nil {
			return fmt.Sprintf(errEncrypted, abbreviate(it.EncryptedContent))
		}
	}
	return ""
}

// abbreviate shortens an opaque value the way OpenAI quotes one in an
// error: its first and last four characters.
func abbreviate(s string) string {
	if len(s) <= 12 {
		return s
	}
	return s[:4] + "..." + s[len(s)-4:]
}

// compact answers POST /v1/responses/compact: the user messages of the
// input, then a compaction item sealed to the credential, and usage.
func (f *Fake) compact(w http.ResponseWriter, r *http.Request, rec *Request) {
	b, ok := f.admit(w, r, Responses, rec)
	if !ok || f.overWindow(w, Responses, b, rec) {
		return
	}
	rec.Compaction, rec.Summary = true, true
	f.account(Responses, b, rec)
	var output []json.RawMessage
	for _, raw := range b.items {
		var it struct {
			Type string `json:"type"`
			Role string `json:"role"`
		}
		if json.Unmarshal(raw, &it) == nil && (it.Type == "message" || it.Type == "") && it.Role == "user" {
			output = append(output, raw)
		}
	}
	id := f.nextID()
	blob := f.seal("responses-compaction", rec.Credential, compactionBlob{
		Step: f.stepsIn(Responses, rec.Credential, b.items), Items: len(b.items)})
	item, _ := json.Marshal(ordered{{"id", "cmp_fake" + id}, {"type", "compaction"}, {"encrypted_content", blob}})
	output = append(output, item)
	rec.Text = Handover(transcript(Responses, b.items))
	if !f.pause(r, f.cfg.SummaryLatency.total()) {
		return
	}
	rec.Status = http.StatusOK
	w.Header().Set("X-Request-Id", "req_fake"+id)
	out := outputTokens(answer{text: rec.Text})
	rec.Output = out
	writeJSON(w, http.StatusOK, ordered{
		{"id", "resp_fake" + id}, {"object", "response.compaction"}, {"created_at", f.cfg.Now().Unix()},
		{"output", output},
		{"usage", responsesUsage(usageOf(rec), out)},
	})
}
