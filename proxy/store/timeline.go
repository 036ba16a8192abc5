package store

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Timeline is a conversation's latest answered requests, oldest first
// (LastCall.Recent).
//
// The record holds it as one JSON string: the marks packed as varints,
// base64-encoded. Every answer rewrites the record with its timeline, and
// read back as objects its 50 marks were most of the record's bytes and
// of the work of decoding it; packed they take about a tenth and decode
// without reflection. The conversation API shows the marks as objects
// (Mark's JSON). A record written before the packing, with the marks as
// an array of objects, reads as well.
type Timeline []Mark

// timelineV1 opens a packed timeline: the version of the packing.
const timelineV1 = 1

// Bits of a packed mark's flags.
const (
	markApplied = 1 << iota
	markCompaction
	markOverflow
	markNoTime // At is the zero time
)

// MarshalJSON packs t: the version byte, then per mark its flags, At as
// the seconds since the previous mark's (since 1970 for the first) and
// its nanoseconds, and Prompt, CacheRead, Output and Client, all
// varints. A time zone is not kept: At reads back in UTC, as the proxy
// writes it.
func (t Timeline) MarshalJSON() ([]byte, error) {
	if t == nil {
		return []byte("null"), nil
	}
	raw := make([]byte, 0, 1+len(t)*16)
	raw = append(raw, timelineV1)
	var prev int64
	for _, m := range t {
		var flags uint64
		if m.Applied {
			flags |= markApplied
		}
		if m.Compaction {
			flags |= markCompaction
		}
		if m.Overflow {
			flags |= markOverflow
		}
		var sec, nsec int64
		if m.At.IsZero() {
			flags |= markNoTime
		} else {
			sec, nsec = m.At.Unix(), int64(m.At.Nanosecond())
		}
		raw = binary.AppendUvarint(raw, flags)
		raw = binary.AppendVarint(raw, sec-prev)
		raw = binary.AppendVarint(raw, nsec)
		prev = sec
		for _, n := range [...]int{m.Prompt, m.CacheRead, m.Output, m.Client} {
			raw = binary.AppendVarint(raw, int64(n))
		}
	}
	out := make([]byte, 0, base64.RawStdEncoding.EncodedLen(len(raw))+2)
	out = append(out, '"')
	out = base64.RawStdEncoding.AppendEncode(out, raw)
	return append(out, '"'), nil
}

// errTimeline reports a packed timeline that cannot be read.
var errTimeline = errors.New("timeline")

// UnmarshalJSON reads a packed timeline (see MarshalJSON), or the marks
// as an array of objects.
func (t *Timeline) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*t = nil
		return nil
	case len(b) > 0 && b[0] == '[':
		var marks []Mark
		if err := json.Unmarshal(b, &marks); err != nil {
			return err
		}
		*t = marks
		return nil
	case len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"':
		return fmt.Errorf("%w: want a string or an array", errTimeline)
	}
	raw, err := base64.RawStdEncoding.AppendDecode(nil, b[1:len(b)-1])
	if err != nil {
		return fmt.Errorf("%w: %w", errTimeline, err)
	}
	if len(raw) == 0 || raw[0] != timelineV1 {
		return fmt.Errorf("%w: unknown packing", errTimeline)
	}
	raw = raw[1:]
	// A mark takes at least seven bytes: no more marks than that allows.
	marks := make([]Mark, 0, min(len(raw)/7, MaxRecent))
	var prev int64
	for len(raw) > 0 {
		var v [6]int64
		flags, n := binary.Uvarint(raw)
		if n <= 0 || flags >= markNoTime<<1 {
			return fmt.Errorf("%w: mark %d: bad flags", errTimeline, len(marks)+1)
		}
		raw = raw[n:]
		for i := range v {
			if v[i], n = binary.Varint(raw); n <= 0 {
				return fmt.Errorf("%w: mark %d is cut short", errTimeline, len(marks)+1)
			}
			raw = raw[n:]
		}
		if v[1] < 0 || v[1] >= 1e9 {
			return fmt.Errorf("%w: mark %d: bad nanoseconds", errTimeline, len(marks)+1)
		}
		m := Mark{Prompt: int(v[2]), CacheRead: int(v[3]), Output: int(v[4]), Client: int(v[5]),
			Applied: flags&markApplied != 0, Compaction: flags&markCompaction != 0, Overflow: flags&markOverflow != 0}
		sec := prev + v[0]
		if flags&markNoTime == 0 {
			m.At = time.Unix(sec, v[1]).UTC()
		}
		prev = sec
		marks = append(marks, m)
	}
	*t = marks
	return nil
}
