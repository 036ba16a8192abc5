package codex

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// tokenUsage is the last_token_usage of a token_count event.
type tokenUsage struct {
	input, cached, output, reasoning, total, cacheWrite int
	raw                                                 json.RawMessage
}

// same reports whether u and v count the same tokens.
func (u *tokenUsage) same(v *tokenUsage) bool {
	return u.input == v.input && u.cached == v.cached && u.output == v.output &&
		u.reasoning == v.reasoning && u.total == v.total && u.cacheWrite == v.cacheWrite
}

// event reads the events that bear on messages: token counts and
// aborted turns.
func (b *builder) event(r *record) error {
	switch r.ptype {
	case "task_started":
		if err := b.window(r.payload, "payload"); err != nil {
			return err
		}
	case "token_count":
		if info, ok, _ := jsonrec.OptObject(r.payload, "info"); ok {
			if err := b.window(info, "payload.info"); err != nil {
				return err
			}
		}
		u, err := lastUsage(r.payload)
		if err != nil {
			return err
		}
		if u == nil {
			return nil
		}
		b.seen = u
		switch {
		case b.applied != nil && u.same(b.applied):
			// A repeat of the count already applied.
		case b.resp != nil && b.resp.Usage == nil:
			b.apply(b.resp, u)
		case b.resp == nil && b.last != nil && b.last.Usage == nil:
			b.apply(b.last, u)
		default:
			b.pending = u
		}
	case "thread_rolled_back":
		n, err := jsonrec.OptInt(r.payload, "num_turns")
		if err != nil {
			return fmt.Errorf("field payload%w", jsonrec.Below(err))
		}
		b.close()
		b.rollback(n)
	case "turn_aborted":
		if b.resp != nil && b.resp.Usage == nil {
			b.aborted = true
		}
		b.close()
	}
	return nil
}

// window records the model_context_window of an event, when it has one,
// as the transcript's ContextWindow: the latest recorded wins, since it
// belongs to the model the agent ran last. where prefixes the field in
// an error.
func (b *builder) window(fields map[string]json.RawMessage, where string) error {
	w, err := jsonrec.OptInt(fields, "model_context_window")
	if err != nil {
		return fmt.Errorf("field %s%w", where, jsonrec.Below(err))
	}
	if w > 0 {
		b.t.ContextWindow = w
	}
	return nil
}

// lastUsage reads info.last_token_usage, or the counts of the early
// token_count events that carried them at the top level; nil when the
// event has none (a rate limit update).
func lastUsage(p map[string]json.RawMessage) (*tokenUsage, error) {
	src, where := p, "payload"
	if info, ok, err := jsonrec.OptObject(p, "info"); err != nil {
		return nil, fmt.Errorf("field payload%w", jsonrec.Below(err))
	} else if ok {
		last, ok, err := jsonrec.OptObject(info, "last_token_usage")
		if err != nil {
			return nil, fmt.Errorf("field payload.info%w", jsonrec.Below(err))
		}
		if !ok {
			return nil, nil
		}
		src, where = last, "payload.info.last_token_usage"
	} else if _, ok := p["input_tokens"]; !ok {
		return nil, nil
	}
	u := &tokenUsage{}
	for key, dst := range map[string]*int{
		"input_tokens": &u.input, "cached_input_tokens": &u.cached, "output_tokens": &u.output,
		"reasoning_output_tokens": &u.reasoning, "total_tokens": &u.total, "cache_write_input_tokens": &u.cacheWrite,
	} {
		v, err := jsonrec.OptInt(src, key)
		if err != nil {
			return nil, fmt.Errorf("field %s%w", where, jsonrec.Below(err))
		}
		*dst = v
	}
	if where == "payload." {
		u.raw, _ = json.Marshal(jsonrec.Extras(src, "type"))
	} else {
		u.raw, _ = json.Marshal(src)
	}
	return u, nil
}

// apply puts u on m.
func (b *builder) apply(m *compact.Message, u *tokenUsage) {
	in := u.input - u.cached
	if in < 0 {
		in = 0
	}
	m.Usage = &compact.Usage{Input: in, CacheRead: u.cached, CacheWrite: u.cacheWrite, Output: u.output, Total: u.total}
	m.Extra = setExtra(m.Extra, "tokenUsage", u.raw)
	b.applied = u
}
