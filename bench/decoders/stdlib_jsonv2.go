//go:build goexperiment.jsonv2

package decoders

import (
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
)

// stdlibV2 returns the standard library's encoding/json/v2, which builds
// only with GOEXPERIMENT=jsonv2 (Go 1.25 and 1.26), with its default
// semantics and with v1's leniency.
func stdlibV2() []Candidate {
	lenient := jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	return []Candidate{
		{Name: "stdlib-jsonv2", Unmarshal: func(data []byte, v any) error { return jsonv2.Unmarshal(data, v) }},
		{Name: "stdlib-jsonv2-lenient", Unmarshal: func(data []byte, v any) error { return jsonv2.Unmarshal(data, v, lenient) }},
	}
}
