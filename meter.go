package compact

// Meter keeps the measured size of a context current while messages are
// appended, at constant cost per message: an agent re-checks its trigger
// after every message without walking the history again.
//
// Its figures equal Measure's on the same context. The zero value is an
// empty context.
type Meter struct {
	usage    int
	trailing int
	last     int // 1 + index of the message whose usage counts, 0 if none
	n        int // messages seen
}

// NewMeter returns a meter for an existing context (one pass over it).
func NewMeter(c *Context) *Meter {
	m := &Meter{}
	m.Reset(c)
	return m
}

// Reset measures the context again from scratch, as after a compaction.
func (m *Meter) Reset(c *Context) {
	u := Measure(c)
	m.usage, m.trailing, m.last, m.n = u.UsageTokens, u.TrailingTokens, u.LastUsageIndex+1, len(c.Messages)
}

// Add accounts for one message appended to the context. A message with
// valid provider usage replaces the estimate of everything before it.
func (m *Meter) Add(msg *Message) {
	if u, ok := msg.ValidUsage(); ok {
		m.usage = u.ContextTokens()
		m.trailing = 0
		m.last = m.n + 1
	} else {
		m.trailing += msg.Tokens()
	}
	m.n++
}

// Usage returns the current measure.
func (m *Meter) Usage() ContextUsage {
	return ContextUsage{Tokens: m.usage + m.trailing, UsageTokens: m.usage, TrailingTokens: m.trailing, LastUsageIndex: m.last - 1}
}
