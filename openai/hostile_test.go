package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/clienttest"
)

// TestNoChoicesCarriesNoKey checks the one error that quotes a 2xx body
// without a ProviderError: an answer without choices.
func TestNoChoicesCarriesNoKey(t *testing.T) {
	fs := clienttest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]any{"echo": r.Header})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	c := newClient(t, Config{BaseURL: fs.URL + "/v1", APIKey: clienttest.CanaryKey})
	req := baseReq
	_, err := c.Complete(context.Background(), &req)
	if err == nil || !strings.Contains(err.Error(), "no choices") {
		t.Fatalf("error %v, want one about the missing choices", err)
	}
	if strings.Contains(err.Error(), "7QpXz") {
		t.Errorf("the error shows the key: %v", err)
	}
}
