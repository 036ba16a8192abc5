package proxy

import (
	"github.com/compactkit/compact"
	"github.com/compactkit/compact/openai"
)

// responsesCodec reads and writes OpenAI's Responses API (Codex). What an
// item means is package openai's (openai.ReadResponsesItem); the codec
// cuts the list into units, one per response of the model, and keeps the
// bytes.
type responsesCodec struct{ cache *itemCache }

func (responsesCodec) api() API { return Responses }

// itemKinds are the itemInfo kinds of openai's item kinds.
var itemKinds = [...]string{openai.ItemOther: "other", openai.ItemInput: "message", openai.ItemModel: "call", openai.ItemOutput: "output"}

func (c responsesCodec) parse(body []byte) (*Parsed, error) {
	p, _, err := readList(Responses, body, "input")
	if err != nil {
		return nil, err
	}
	infos := make([]*itemInfo, len(p.Items))
	for i, raw := range p.Items {
		if infos[i], err = c.cache.read(Responses, raw, decodeResponsesItem); err != nil {
			return nil, err
		}
		if infos[i].compaction {
			p.StandDown = "the conversation carries a compaction item"
		}
	}
	i := 0
	for i < len(infos) && infos[i].kind == "message" && (infos[i].role == "system" || infos[i].role == "developer") {
		i++
	}
	p.Head = i
	for i < len(infos) {
		start := i
		var msgs []*compact.Message
		if infos[i].kind == "call" {
			// One unit for the model's whole turn: reasoning, text and
			// parallel tool calls stay together.
			m := &compact.Message{Role: compact.RoleAssistant}
			for i < len(infos) && infos[i].kind == "call" {
				m.Content = append(m.Content, infos[i].msgs[0].Content...)
				i++
			}
			msgs = []*compact.Message{m}
		} else {
			msgs = infos[i].messages()
			i++
		}
		p.Units = append(p.Units, Unit{Start: start, End: i, Messages: msgs, Digest: unitDigest(infos[start:i])})
	}
	pairCalls(p.Units)
	return p, nil
}

// decodeResponsesItem reads one input item.
func decodeResponsesItem(raw []byte) (*itemInfo, error) {
	it, err := openai.ReadResponsesItem(raw)
	if err != nil {
		return nil, err
	}
	return &itemInfo{role: it.Role, kind: itemKinds[it.Kind], compaction: it.Compaction, msgs: []*compact.Message{lean(it.Message)}}, nil
}

func (responsesCodec) summaryItem(text string) []byte {
	return append(append([]byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":`), quote(text)...), `}]}`...)
}

// prepareKept keeps the items as they are: encrypted reasoning travels
// with the turn it belongs to and is never edited.
func (responsesCodec) prepareKept(p *Parsed, from int) ([][]byte, func([]byte) []byte) {
	return p.Items[from:], nil
}

func (responsesCodec) newObserver(stream bool) observer { return newUsageObserver(Responses, stream) }
