package fakeupstream

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
)

// Signed thinking, the way the Anthropic Messages API binds it ("preserved
// thinking", docs build-with-claude/preserved-thinking): a thinking block's
// signature covers the block's text and its prefix — the top-level system,
// the tools, and every message and block before it. A request that sends a
// block back after anything in its prefix changed is refused, or the block
// is dropped when the request asks for that.
//
// The fake signs with an HMAC of its own key over a running hash of the
// conversation in a canonical form: every message and block decoded and
// re-encoded, cache_control left out (clients move cache markers from turn
// to turn) and a string content read as the one text block it stands for.

// Error texts of the thinking rules. Sources:
//   - errInvalidSignature: Anthropic 400 "messages.1.content.0: Invalid
//     `signature` in `thinking` block" (kaitranntt/ccs #415,
//     anomalyco/opencode #48637).
//   - errBound: the prefix-check 400, docs page
//     preserved-thinking/fix-bound-to-a-different-conversation and
//     anomalyco/opencode #48637, which also show the closing sentence that
//     names what changed ("The `system` prompt differs from the one this
//     block was created with.").
//   - errBindingBeta: the 400 for block_binding without the
//     thinking-binding-controls-2026-08-01 beta (Wei-Shaw/sub2api PR #6677:
//     "thinking.adaptive.block_binding: Extra inputs are not permitted").
//   - errFinalAssistant: the tool-loop rule (n8n-io/n8n #22550,
//     anomalyco/opencode #3077, PROXY.md §3.1).
const (
	errInvalidSignature = "%s: Invalid `signature` in `thinking` block"
	errBound            = "%s: Invalid `signature` in `thinking` block. The block is bound to a different conversation. " +
		"Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to \"drop_block\". " +
		"That setting requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta` header."
	errBindingBeta    = "thinking.%s.block_binding: Extra inputs are not permitted"
	errFinalAssistant = "messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. " +
		"When `thinking` is enabled, a final `assistant` message must start with a thinking block " +
		"(preceeding the lastmost set of `tool_use` and `tool_result` blocks). " +
		"We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. " +
		"Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)

// BindingBeta is the anthropic-beta value a request needs to set
// thinking.block_binding.
const BindingBeta = "thinking-binding-controls-2026-08-01"

// thinkingConfig is a request's top-level "thinking" object.
type thinkingConfig struct {
	Type         string `json:"type"`
	Display      string `json:"display"`
	BlockBinding *struct {
		PrefixMismatchBehavior string `json:"prefix_mismatch_behavior"`
	} `json:"block_binding"`
}

// on reports whether the request asks the model to think.
func (t *thinkingConfig) on() bool {
	return t != nil && (t.Type == "enabled" || t.Type == "adaptive")
}

// dropBlock reports whether blocks whose prefix changed are to be dropped
// rather than refused.
func (t *thinkingConfig) dropBlock() bool {
	return t != nil && t.BlockBinding != nil && t.BlockBinding.PrefixMismatchBehavior == "drop_block"
}

// digest is a running hash state.
type digest [32]byte

// chain hashes parts onto d, each with its length, so that no two
// sequences of parts collide by concatenation.
func chain(d digest, parts ...[]byte) digest {
	h := sha256.New()
	h.Write(d[:])
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	var out digest
	copy(out[:], h.Sum(nil))
	return out
}

// canonical re-encodes a JSON value with every cache_control key removed
// and object keys sorted; a value that does not parse is returned as it
// is.
func canonical(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	out, err := json.Marshal(stripKey(v, "cache_control"))
	if err != nil {
		return raw
	}
	return out
}

// message is one Anthropic message split into its role and blocks; a
// string content is read as one text block.
type message struct {
	role   string
	blocks []json.RawMessage
}

// parseMessage splits an Anthropic message; ok is false when it is not
// an object with a string or list content.
func parseMessage(raw json.RawMessage) (message, bool) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return message{}, false
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		b, _ := json.Marshal(ordered{{"type", "text"}, {"text", s}})
		return message{role: m.Role, blocks: []json.RawMessage{b}}, true
	}
	var blocks []json.RawMessage
	if json.Unmarshal(m.Content, &blocks) != nil {
		return message{}, false
	}
	return message{role: m.Role, blocks: blocks}, true
}

// blockFields are the fields of a content block the fake reads.
type blockFields struct {
	Type             string `json:"type"`
	Thinking         string `json:"thinking"`
	Signature        string `json:"signature"`
	Data             string `json:"data"`
	EncryptedContent string `json:"encrypted_content"`
}

func readBlock(raw json.RawMessage) blockFields {
	var b blockFields
	_ = json.Unmarshal(raw, &b)
	return b
}

// conversationRoot is the running hash before the first message: it
// covers the system prompt and the tools.
func conversationRoot(system json.RawMessage, tools []json.RawMessage) digest {
	parts := [][]byte{[]byte("system"), canonical(system), []byte("tools")}
	for _, t := range tools {
		parts = append(parts, canonical(t))
	}
	return chain(digest{}, parts...)
}

// partHash is a short hash of one part of the prefix, kept in a signature
// so that a refusal can say which part changed.
func partHash(parts ...[]byte) [8]byte {
	d := chain(digest{}, parts...)
	var out [8]byte
	copy(out[:], d[:8])
	return out
}

// messagePrefix is the hash of everything before block j of a message
// whose conversation state before it is d.
func messagePrefix(d digest, role string, blocks []json.RawMessage) digest {
	parts := [][]byte{[]byte("message"), []byte(role)}
	for _, b := range blocks {
		parts = append(parts, canonical(b))
	}
	return chain(d, parts...)
}

// afterMessage is the conversation state after a whole message.
func afterMessage(d digest, m message) digest {
	return chain(messagePrefix(d, m.role, m.blocks), []byte("end"))
}

// signature layout: magic, system hash, tools hash, the block's prefix,
// then the HMAC of all of them and the thinking text.
const sigMagic = "FKT1"

// sign returns the signature of a thinking block with text whose prefix
// hash is prefix.
func (f *Fake) sign(prefix digest, sys, tools [8]byte, text string) string {
	payload := make([]byte, 0, 4+8+8+32+32)
	payload = append(payload, sigMagic...)
	payload = append(payload, sys[:]...)
	payload = append(payload, tools[:]...)
	payload = append(payload, prefix[:]...)
	mac := hmac.New(sha256.New, f.key[:])
	mac.Write(payload)
	mac.Write([]byte(text))
	return base64.StdEncoding.EncodeToString(mac.Sum(payload))
}

// sigVerdict is what a signature check found.
type sigVerdict int

const (
	sigValid    sigVerdict = iota
	sigForged              // not a signature of this fake for this text
	sigMismatch            // genuine, but its prefix changed
)

// verify checks a signature against the block's text and actual prefix;
// on a mismatch, what names the part that changed ("" when it is the
// messages).
func (f *Fake) verify(sig, text string, prefix digest, sys, tools [8]byte) (v sigVerdict, what string) {
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(raw) != 4+8+8+32+32 || string(raw[:4]) != sigMagic {
		return sigForged, ""
	}
	payload, got := raw[:52], raw[52:]
	mac := hmac.New(sha256.New, f.key[:])
	mac.Write(payload)
	mac.Write([]byte(text))
	if !hmac.Equal(mac.Sum(nil), got) {
		return sigForged, ""
	}
	switch {
	case !bytes.Equal(raw[4:12], sys[:]):
		return sigMismatch, "The `system` prompt differs from the one this block was created with."
	case !bytes.Equal(raw[12:20], tools[:]):
		return sigMismatch, "The `tools` differ from the ones this block was created with."
	case !bytes.Equal(raw[20:52], prefix[:]):
		return sigMismatch, ""
	}
	return sigValid, ""
}

// thinkingCheck is what the thinking rules made of a request.
type thinkingCheck struct {
	verified int    // blocks whose signature and prefix held
	dropped  int    // blocks dropped under drop_block
	refusal  string // the 400's message, "" when the request passes
	state    digest // the conversation state after the last message
	sys      [8]byte
	tools    [8]byte
}

// checkThinking verifies every thinking and redacted_thinking block of an
// Anthropic request against its prefix, and applies the rule for the
// final assistant message of a tool loop. comp, when not nil, is the
// verified compaction block that opens the request: the running hash
// continues from the state of the messages it replaced.
func (f *Fake) checkThinking(b *body, comp *compactionBlob) thinkingCheck {
	c := thinkingCheck{
		sys:   partHash(canonical(b.system)),
		tools: partHash(canonicalList(b.rawTools)...),
	}
	d := conversationRoot(b.system, b.rawTools)
	enforce := !f.cfg.OldAccount || (b.thinking != nil && b.thinking.BlockBinding != nil)
	drop := b.thinking.dropBlock()
	invalid := false // once a block failed, every later one is invalid
	for i, raw := range b.items {
		m, ok := parseMessage(raw)
		if !ok {
			continue
		}
		start := 0
		if i == 0 && comp != nil && len(m.blocks) > 0 && readBlock(m.blocks[0]).Type == "compaction" {
			d, start = comp.State, 1
		}
		for j := start; j < len(m.blocks); j++ {
			bl := readBlock(m.blocks[j])
			if bl.Type != "thinking" && bl.Type != "redacted_thinking" {
				continue
			}
			where := fmt.Sprintf("messages.%d.content.%d", i, j)
			sig, text := bl.Signature, bl.Thinking
			if bl.Type == "redacted_thinking" {
				sig, text = bl.Data, ""
			}
			v, what := f.verify(sig, text, messagePrefix(d, m.role, m.blocks[start:j]), c.sys, c.tools)
			if v == sigForged {
				c.refusal = fmt.Sprintf(errInvalidSignature, where)
				return c
			}
			if v == sigMismatch {
				invalid = true
			}
			switch {
			case !invalid:
				c.verified++
			case !enforce:
				// An older account records the mismatch and goes on.
			case drop:
				c.dropped++
			default:
				c.refusal = fmt.Sprintf(errBound, where)
				if what != "" {
					c.refusal += " " + what
				}
				return c
			}
		}
		switch {
		case start == 1 && len(m.blocks) == 1:
			// The compaction block stands for the messages it replaced:
			// the state is theirs.
		case start == 1:
			d = chain(messagePrefix(d, m.role, m.blocks[1:]), []byte("end"))
		default:
			d = afterMessage(d, m)
		}
	}
	c.state = d
	if b.thinking != nil && b.thinking.Type == "enabled" {
		if i, found := finalAssistantWithoutThinking(b.items); i >= 0 {
			c.refusal = fmt.Sprintf(errFinalAssistant, i, found)
		}
	}
	return c
}

// canonicalList is canonical of every element.
func canonicalList(list []json.RawMessage) [][]byte {
	out := make([][]byte, len(list))
	for i, r := range list {
		out[i] = canonical(r)
	}
	return out
}

// finalAssistantWithoutThinking applies the tool-loop rule of extended
// thinking: when the request ends with tool results (a tool loop in
// progress), the assistant message they answer must start with a thinking
// or redacted_thinking block. It returns that message's index and the
// type of its first block when it does not, -1 otherwise.
func finalAssistantWithoutThinking(items []json.RawMessage) (int, string) {
	if len(items) < 2 {
		return -1, ""
	}
	last, ok := parseMessage(items[len(items)-1])
	if !ok || last.role != "user" {
		return -1, ""
	}
	results := false
	for _, bl := range last.blocks {
		if readBlock(bl).Type == "tool_result" {
			results = true
		}
	}
	if !results {
		return -1, ""
	}
	i := len(items) - 2
	m, ok := parseMessage(items[i])
	if !ok || m.role != "assistant" || len(m.blocks) == 0 {
		return -1, ""
	}
	switch t := readBlock(m.blocks[0]).Type; t {
	case "thinking", "redacted_thinking":
		return -1, ""
	default:
		return i, t
	}
}

// thinkingText is what the fake model thinks before answer a.
func thinkingText(a answer) string {
	switch {
	case a.compaction:
		return "The conversation is long; I will summarize what was done and what is next."
	case a.tool != "":
		return fmt.Sprintf("Step %d is next: I will run it with %s and read its output.", a.step, a.tool)
	case strings.HasPrefix(a.text, "DONE"):
		return "Every step ran; I can report that the task is done."
	}
	return "I can answer this directly."
}
