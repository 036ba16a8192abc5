package summarize

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// TestConversation: with Options.Conversation the summary is asked on the
// conversation (one closing instruction, no transcript), the review and
// its one retry apply to it, the ledger follows the model's text, and the
// summarizer writes from a transcript when the function cannot ask, the
// conversation overflows or the provider refuses the fork as invalid.
func TestConversation(t *testing.T) {
	task := "Rename the parser package to scanner and fix every import"
	msgs := []*compact.Message{user(task), assistant("Renaming now."), user("also update the docs"), assistant("Done.")}
	cases := []struct {
		name string
		// answer is the conversation function's reply to its n-th call.
		answer func(n int, req *ConversationRequest) (*Response, error)
		// asked is how many conversation calls are made, transcript
		// whether the transcript path then ran.
		asked      int
		transcript bool
		refused    bool
		wantErr    error
	}{
		{name: "answered", asked: 1, answer: func(n int, req *ConversationRequest) (*Response, error) {
			return &Response{Text: handover("on the conversation", req.Instruction), Usage: compact.Usage{Input: 5, CacheRead: 95, Output: 20}}, nil
		}},
		{name: "does not fit", asked: 1, transcript: true, answer: func(int, *ConversationRequest) (*Response, error) {
			return nil, ErrNotOnConversation
		}},
		{name: "overflow", asked: 1, transcript: true, answer: func(int, *ConversationRequest) (*Response, error) {
			return nil, &compact.ProviderError{Provider: "anthropic", StatusCode: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`}
		}},
		{name: "invalid fork", asked: 1, transcript: true, answer: func(int, *ConversationRequest) (*Response, error) {
			return nil, &compact.ProviderError{Provider: "anthropic", StatusCode: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid signature in thinking block"}}`}
		}},
		{name: "refused then good", asked: 2, refused: true, answer: func(n int, req *ConversationRequest) (*Response, error) {
			if n == 1 {
				return &Response{Text: "I'm sorry, I can't help with that."}, nil
			}
			if !strings.Contains(req.Instruction, "could not be used") {
				t.Errorf("the second ask does not say what was wrong: %q", req.Instruction)
			}
			return &Response{Text: handover("second", req.Instruction)}, nil
		}},
		{name: "refused twice", asked: 2, wantErr: compact.ErrSummaryRejected, answer: func(int, *ConversationRequest) (*Response, error) {
			return &Response{Text: "I'm sorry, I can't help with that."}, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{}
			var asked []*ConversationRequest
			s, _ := newTest(t, f, model200k, func(o *Options) {
				o.NoLedger = false
				o.Conversation = func(ctx context.Context, req *ConversationRequest) (*Response, error) {
					asked = append(asked, req)
					return tc.answer(len(asked), req)
				}
			})
			sum, err := s.Summarize(context.Background(), &compact.SummaryRequest{Kind: compact.SummaryHistory, Messages: msgs, Instructions: "the imports"})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if len(f.requests()) != 0 {
					t.Error("a refused summary fell back to the transcript path")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(asked) != tc.asked {
				t.Fatalf("%d conversation calls, want %d", len(asked), tc.asked)
			}
			in := asked[0].Instruction
			for _, want := range []string{"Do not call any tool", "## Goal", "## Next Steps", firstRequestLabel + task, "<focus>\nthe imports\n</focus>", "compact attaches a record"} {
				if !strings.Contains(in, want) {
					t.Errorf("the instruction lacks %q", want)
				}
			}
			if strings.Contains(in, "<transcript>") {
				t.Error("the instruction quotes a transcript")
			}
			if asked[0].Summary.Messages[len(msgs)-1] != msgs[len(msgs)-1] {
				t.Error("the request does not carry the span's messages")
			}
			if got := len(f.requests()) > 0; got != tc.transcript {
				t.Fatalf("transcript path ran: %v, want %v", got, tc.transcript)
			}
			if !strings.Contains(sum.Text, "## Goal\n- "+task) {
				t.Errorf("the summary lost the request:\n%s", sum.Text)
			}
			if !strings.Contains(sum.Text, "User messages") && !strings.Contains(sum.Text, task) {
				t.Errorf("no ledger:\n%s", sum.Text)
			}
			if (len(sum.Refused) > 0) != tc.refused {
				t.Errorf("refused = %v", sum.Refused)
			}
			if tc.name == "answered" && (sum.Usage == nil || sum.Usage.CacheRead != 95) {
				t.Errorf("usage = %+v, want the conversation call's", sum.Usage)
			}
		})
	}
}

// TestConversationTurnPrefix: a split turn's prefix is asked for with the
// turn's headings and without the session's first request.
func TestConversationTurnPrefix(t *testing.T) {
	var got string
	s, _ := newTest(t, &fake{}, model200k, func(o *Options) {
		o.Conversation = func(ctx context.Context, req *ConversationRequest) (*Response, error) {
			got = req.Instruction
			return &Response{Text: handover("prefix", req.Instruction)}, nil
		}
	})
	_, err := s.Summarize(context.Background(), &compact.SummaryRequest{Kind: compact.SummaryTurnPrefix,
		Messages: []*compact.Message{user("now port the tests"), assistant("Looking at the tests.")}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "## Turn Request") || strings.Contains(got, "## Goal") || strings.Contains(got, firstRequestLabel) {
		t.Errorf("turn prefix instruction:\n%s", got)
	}
}
