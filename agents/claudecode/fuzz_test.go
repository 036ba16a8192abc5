package claudecode

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// FuzzRead checks that Read never panics, that its errors are one line
// naming the file, and that whatever it accepts imports as a pi session.
func FuzzRead(f *testing.F) {
	readertest.FuzzLines(f, Read,
		userText("u1", "", "hi")+"\n"+assistantLine("a1", "u1", "m", `{"type":"tool_use","id":"c","name":"n","input":[1]}`)+"\n",
		`{"type":"user","uuid":"u","parentUuid":"u","message":{"content":[{"type":"tool_result","tool_use_id":"c","content":[{"type":"image","source":{"type":"url"}}]}]}}`,
		`{"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null,"logicalParentUuid":"zz","compactMetadata":{"preTokens":"x"}}`+"\n"+
			`{"type":"user","uuid":"s","parentUuid":"b","isCompactSummary":true,"message":{"content":[{"type":"text","text":"sum"}]}}`+"\n",
		`{"type":"assistant","uuid":"a","message":{"id":"m","content":"plain"}}`+"\n"+`{"type":"assistant","uuid":"a","message":{"id":"m","content":[]}}`,
		`{"type":"x"}`+"\n"+`null`+"\n",
	)
}
