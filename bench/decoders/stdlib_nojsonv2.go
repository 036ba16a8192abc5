//go:build !goexperiment.jsonv2

package decoders

// stdlibV2 returns nothing: encoding/json/v2 needs GOEXPERIMENT=jsonv2.
func stdlibV2() []Candidate { return nil }
