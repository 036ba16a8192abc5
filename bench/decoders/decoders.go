// Package decoders compares the hand-written decoder of package session
// (session/fast.go) with maintained JSON decoders on the whole parse of
// a pi session: the same line split, parallel decoding, migration and
// indexing, with each entry line decoded either by the hand decoder or
// by a library into session's wire structs and mapped to entries by the
// same code (session.ParseWith).
//
// It is a module of its own so that the main module needs none of the
// decoders it compares. The tests check that every candidate gives the
// entries the hand decoder gives, field for field, on the real sessions
// and the repository's session files; the benchmarks time the parse and
// report its allocations and the live heap it leaves. The results and
// the decision they led to are in BENCHMARKS.md ("Session decoder:
// hand-written against maintained decoders").
//
//	cd bench/decoders && go test -run '^$' -bench . -count 6
//	GOEXPERIMENT=jsonv2 go test -run '^$' -bench . -count 6   # adds encoding/json/v2
package decoders

import (
	stdjson "encoding/json"
	"unsafe"

	"github.com/bytedance/sonic"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	goccy "github.com/goccy/go-json"
)

// Candidate is one way of decoding entry lines.
type Candidate struct {
	// Name names the decoder and its configuration.
	Name string
	// Unmarshal decodes a line into the wire structs; nil stands for the
	// hand-written decoder that session.Read uses.
	Unmarshal func(data []byte, v any) error
}

// Candidates returns the decoders compared, the hand decoder first. With
// GOEXPERIMENT=jsonv2 the list also has the standard library's
// encoding/json/v2, and encoding/json is then v2's implementation of v1.
func Candidates() []Candidate {
	// The options of encoding/json/v2 (and its prototype) that make it
	// accept what v1 decoders accept: member names matched without regard
	// to case, repeated names, invalid UTF-8 in strings.
	v2Lenient := jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	c := []Candidate{
		{Name: "hand", Unmarshal: nil},
		// The reference path of package session.
		{Name: "goccy", Unmarshal: func(data []byte, v any) error { return goccy.Unmarshal(data, v) }},
		{Name: "goccy-noescape", Unmarshal: func(data []byte, v any) error { return goccy.UnmarshalNoEscape(data, v) }},
		// sonic's Unmarshal copies the line into a string first, then
		// decodes; ConfigStd also copies every string value out of it.
		{Name: "sonic-std", Unmarshal: sonic.ConfigStd.Unmarshal},
		{Name: "sonic-default", Unmarshal: sonic.ConfigDefault.Unmarshal},
		{Name: "sonic-fastest", Unmarshal: sonic.ConfigFastest.Unmarshal},
		// Without the copy of the line: the strings point into the file's
		// buffer, as the hand decoder's do. Sound for the same reason:
		// session never writes to that buffer once parsing starts.
		{Name: "sonic-fastest-nocopy", Unmarshal: func(data []byte, v any) error {
			return sonic.ConfigFastest.UnmarshalFromString(unsafe.String(unsafe.SliceData(data), len(data)), v)
		}},
		// The encoding/json/v2 prototype with its default (v2) semantics:
		// member names match case-sensitively, and duplicate names and
		// invalid UTF-8 are errors. On the pi sessions measured here none
		// of that occurs.
		{Name: "jsonv2-experiment", Unmarshal: func(data []byte, v any) error { return jsonv2.Unmarshal(data, v) }},
		// The same with the options that give back v1's leniency, which
		// the hand decoder and the reference path share.
		{Name: "jsonv2-experiment-lenient", Unmarshal: func(data []byte, v any) error { return jsonv2.Unmarshal(data, v, v2Lenient) }},
		{Name: "stdlib-json", Unmarshal: stdjson.Unmarshal},
	}
	return append(c, stdlibV2()...)
}
