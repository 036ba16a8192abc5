package jsonrec

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestBelow(t *testing.T) {
	_, err := OptString(map[string]json.RawMessage{"model": json.RawMessage("5")}, "model")
	if err == nil {
		t.Fatal("no error for a number")
	}
	if got := fmt.Errorf("field message%w", Below(err)).Error(); got != "field message.model: want a string, have 5" {
		t.Errorf("nested error %q", got)
	}
	if got := Below(fmt.Errorf("[2]: not an object")).Error(); got != ".[2]: not an object" {
		t.Errorf("an error without the field prefix: %q", got)
	}
}
