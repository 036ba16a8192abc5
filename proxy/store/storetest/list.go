package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/proxy/store"
)

// RunList checks a store.Lister: key order, prefixes, pages that join
// up without a gap or a repeat, the limits, records stored by PutLast
// alone, and that listing is no use of a record (expiry goes on). RunBasic
// runs it; a store that is not a Lister skips it.
func RunList(t *testing.T, open Opener) {
	ctx := context.Background()
	lister := func(t *testing.T, h *harness) store.Lister {
		l, ok := h.store.(store.Lister)
		if !ok {
			t.Skip("the store does not implement store.Lister")
		}
		return l
	}
	list := func(t *testing.T, l store.Lister, q store.ListQuery) store.ListPage {
		t.Helper()
		page, err := l.List(ctx, q)
		if err != nil {
			t.Fatalf("List(%+v): %v", q, err)
		}
		return page
	}
	keysOf := func(p store.ListPage) string {
		var ks []string
		for _, r := range p.Records {
			ks = append(ks, r.Key)
		}
		return strings.Join(ks, ",")
	}

	t.Run("OrderAndPrefix", func(t *testing.T) {
		h := newHarness(t, open, -1, -1)
		l := lister(t, h)
		for _, k := range []string{"c:3", "s:1", "c:1", "c:2"} {
			h.put(k, fullRecord())
		}
		if ls, ok := h.store.(store.LastStore); ok {
			// A key holding a last call alone is a record too.
			if err := ls.PutLast(ctx, "c:4", &store.LastCall{Units: 7}); err != nil {
				t.Fatal(err)
			}
		} else {
			h.put("c:4", &store.Record{Last: &store.LastCall{Units: 7}})
		}
		page := list(t, l, store.ListQuery{Prefix: "c:"})
		if got := keysOf(page); got != "c:1,c:2,c:3,c:4" || page.Next != "" {
			t.Fatalf("List(prefix c:) = %q next %q; want c:1,c:2,c:3,c:4 and no next page", got, page.Next)
		}
		sameRecord(t, page.Records[0].Record, fullRecord())
		if last := page.Records[3].Record.Last; last == nil || last.Units != 7 {
			t.Fatalf("record stored by its last call alone listed as %+v", page.Records[3].Record)
		}
		if got := keysOf(list(t, l, store.ListQuery{})); got != "c:1,c:2,c:3,c:4,s:1" {
			t.Fatalf("List() = %q; want every key", got)
		}
	})

	t.Run("Pages", func(t *testing.T) {
		h := newHarness(t, open, -1, -1)
		l := lister(t, h)
		var want []string
		for i := range 7 {
			k := fmt.Sprintf("c:%02d", i)
			want = append(want, k)
			h.put(k, &store.Record{Last: &store.LastCall{Units: i}})
		}
		var got []string
		q := store.ListQuery{Prefix: "c:", Limit: 3}
		for pages := 0; ; pages++ {
			if pages > 3 {
				t.Fatalf("more than 3 pages of 3 for 7 records: %v", got)
			}
			page := list(t, l, q)
			if len(page.Records) > 3 {
				t.Fatalf("page of %d records for limit 3", len(page.Records))
			}
			for _, r := range page.Records {
				got = append(got, r.Key)
			}
			if page.Next == "" {
				break
			}
			// A record written between pages, before the cursor, is
			// not listed again; one after it is.
			h.put("c:00", &store.Record{})
			q.After = page.Next
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("pages listed %v; want %v", got, want)
		}
	})

	t.Run("Limits", func(t *testing.T) {
		h := newHarness(t, open, -1, -1)
		l := lister(t, h)
		if _, err := l.List(ctx, store.ListQuery{Limit: -1}); err == nil {
			t.Error("List with a negative limit succeeded")
		}
		for i := range store.DefaultListLimit + 1 {
			h.put(fmt.Sprintf("c:%03d", i), &store.Record{})
		}
		page := list(t, l, store.ListQuery{})
		if len(page.Records) != store.DefaultListLimit || page.Next != fmt.Sprintf("c:%03d", store.DefaultListLimit-1) {
			t.Fatalf("List() returned %d records, next %q; want %d and the last key listed", len(page.Records), page.Next, store.DefaultListLimit)
		}
		if page := list(t, l, store.ListQuery{After: page.Next}); keysOf(page) != fmt.Sprintf("c:%03d", store.DefaultListLimit) || page.Next != "" {
			t.Fatalf("second page = %q next %q", keysOf(page), page.Next)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		h := newHarness(t, open, -1, -1)
		l := lister(t, h)
		if page := list(t, l, store.ListQuery{Prefix: "c:"}); len(page.Records) != 0 || page.Next != "" {
			t.Fatalf("List of an empty store = %+v", page)
		}
	})
}

// runListTTL checks that a listing leaves expired records out and does
// not count as a use. RunTTL runs it.
func runListTTL(t *testing.T, open Opener, ttl time.Duration) {
	h := newHarness(t, open, -1, ttl)
	l, ok := h.store.(store.Lister)
	if !ok {
		t.Skip("the store does not implement store.Lister")
	}
	h.put("c:a", fullRecord())
	h.put("c:b", fullRecord())
	h.clock.Advance(ttl - time.Minute)
	h.get("c:a")
	if page, err := l.List(context.Background(), store.ListQuery{}); err != nil || len(page.Records) != 2 {
		t.Fatalf("List before expiry = %d records (%v); want 2", len(page.Records), err)
	}
	h.clock.Advance(2 * time.Minute)
	page, err := l.List(context.Background(), store.ListQuery{})
	if err != nil || len(page.Records) != 1 || page.Records[0].Key != "c:a" {
		t.Fatalf("List after b's TTL = %+v (%v); want c:a alone (a listing is no use)", page, err)
	}
}
