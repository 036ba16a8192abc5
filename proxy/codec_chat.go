package proxy

import (
	"github.com/compactkit/compact"
	"github.com/compactkit/compact/openai"
)

// chatCodec reads and writes OpenAI's Chat Completions API. What a
// message means is package openai's (openai.ReadChatMessage); the codec
// only cuts the list into units and keeps the bytes.
type chatCodec struct{ cache *itemCache }

func (chatCodec) api() API { return Chat }

func (c chatCodec) parse(body []byte) (*Parsed, error) {
	p, _, err := readList(Chat, body, "messages")
	if err != nil {
		return nil, err
	}
	head := true
	for i, it := range p.Items {
		in, err := c.cache.read(Chat, it, decodeChatItem)
		if err != nil {
			return nil, err
		}
		if head && (in.role == "system" || in.role == "developer") {
			p.Head = i + 1
			continue
		}
		head = false
		p.Units = append(p.Units, Unit{Start: i, End: i + 1, Messages: in.messages(), Digest: in.digest})
	}
	pairCalls(p.Units)
	return p, nil
}

// decodeChatItem reads one message.
func decodeChatItem(raw []byte) (*itemInfo, error) {
	m, err := openai.ReadChatMessage(raw)
	if err != nil {
		return nil, err
	}
	return &itemInfo{role: m.Role, msgs: []*compact.Message{lean(m.Message)}}, nil
}

// lean drops from a decoded message the members kept for a reader's
// round trip, which the proxy never writes back, keeping only the markers
// openai.Calls reads. The cache then holds little more than the text.
func lean(m *compact.Message) *compact.Message {
	if m.Extra[openai.ExtraLegacyResult] == nil {
		m.Extra = nil
	}
	for i := range m.Content {
		if p := &m.Content[i]; p.Extra[openai.ExtraLegacyCall] == nil {
			p.Extra = nil
		}
	}
	return m
}

// pairCalls names each tool result after its call and numbers legacy
// function calls (openai.Calls), on the request's own copies of the
// messages.
func pairCalls(units []Unit) {
	var calls openai.Calls
	for _, u := range units {
		for _, m := range u.Messages {
			calls.Add(m)
		}
	}
}

func (chatCodec) summaryItem(text string) []byte {
	return append(append([]byte(`{"role":"user","content":`), quote(text)...), '}')
}

// prepareKept keeps Chat messages as they are: nothing in them is bound to
// what precedes them.
func (chatCodec) prepareKept(p *Parsed, from int) ([][]byte, func([]byte) []byte) {
	return p.Items[from:], nil
}

func (chatCodec) newObserver(stream bool) observer { return newUsageObserver(Chat, stream) }
