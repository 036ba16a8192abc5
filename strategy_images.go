package compact

import "fmt"

// StripImages replaces every image older than the current turn with a
// short text marker naming its type and the entry that holds it. Images
// of the current turn (from the newest user message on) stay. The zero
// value is ready to use.
type StripImages struct {
	// MinFree is the least the pass must free: a token count,
	// CacheRewriteCost, or 0 for any saving.
	MinFree int
}

// Name returns "strip_images".
func (StripImages) Name() string { return "strip_images" }

// Plan proposes the image-stripping pass; see StripImages.
func (s StripImages) Plan(path []*Entry, env StrategyEnv) (*ContextEdit, error) {
	return s.planView(newStrategyView(path), env)
}

// planView is Plan on a view of the path already built.
func (s StripImages) planView(v *strategyView, _ StrategyEnv) (*ContextEdit, error) {
	current := -1
	for i := len(v.cur.Messages) - 1; i >= v.start; i-- {
		if startsTurn(v.cur.Messages[i]) {
			current = i
			break
		}
	}
	p := newPass(v)
	for i := v.start; i < current; i++ {
		content := v.cur.Messages[i].Content
		var out []Part
		for j, part := range content {
			if part.Type != PartImage {
				continue
			}
			if out == nil {
				out = make([]Part, len(content))
				copy(out, content)
			}
			mime := part.Picture().MimeType
			if mime == "" {
				mime = "image"
			}
			out[j] = Part{Type: PartText, Text: fmt.Sprintf("[%s removed by %s: ~%d tokens; original in entry %s]",
				mime, s.Name(), ImageTokens, v.cur.EntryIDs[i])}
		}
		if out != nil {
			p.propose(i, out)
		}
	}
	return p.result(s.Name(), s.MinFree), nil
}
