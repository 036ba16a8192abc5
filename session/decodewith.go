package session

// This file is the seam through which bench/decoders (a module of its
// own, so that this one needs none of the decoders it compares) measures
// maintained JSON decoders against the hand-written decoder of fast.go on
// the whole parse. Nothing else uses it.

// lineDecoder decodes entry lines; one is used by one goroutine at a time.
type lineDecoder interface {
	decode(line []byte) decodedLine
}

// reserver is implemented by decoders that can set aside the scratch
// space for lines up to a given length before they decode the first.
type reserver interface {
	reserve(longest int)
}

// newFastDecoder returns the decoder Read and Open use: the fast path of
// fast.go, which leaves what it cannot decode to the reference path.
func newFastDecoder() lineDecoder { return new(fastDecoder) }

// wireDecoder decodes every line on the reference path (wire structs,
// toEntry, messageExtras), with its own unmarshal for the wire structs.
type wireDecoder struct {
	unmarshal func([]byte, any) error
}

func (d wireDecoder) decode(line []byte) decodedLine { return decodeLineWith(line, d.unmarshal) }

// ParseWith parses a session held in memory exactly as Read does (the
// same line split, parallel decoding, migration and indexing), except
// that each entry line is decoded by unmarshal into the package's wire
// structs, which are then mapped to entries by the same code as on the
// reference path. (Compaction details and custom_message content, a
// few lines a session, are still decoded with goccy/go-json.) A nil
// unmarshal means the hand-written decoder that Read uses, except that
// it copies every decoded string with escapes out of data, as the other
// decoders do, where Read unescapes most of them in place: ParseWith
// leaves data as it is, so that one buffer serves every call. data must
// not be changed afterwards: the session may point into it.
//
// ParseWith exists for the comparison in bench/decoders (whose results
// are in BENCHMARKS.md); use Read or Open otherwise.
func ParseWith(data []byte, name string, opts Options, unmarshal func(data []byte, v any) error) (*Session, error) {
	if unmarshal == nil {
		return parseWith(data, name, opts, newFastDecoder)
	}
	return parseWith(data, name, opts, func() lineDecoder { return wireDecoder{unmarshal} })
}
