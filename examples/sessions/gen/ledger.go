package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// rng is a small deterministic generator (xorshift64*), so that the
// session is the same on every run.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s ^= r.s >> 12
	r.s ^= r.s << 25
	r.s ^= r.s >> 27
	return r.s * 2685821657736338717
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// tx is one row of the generated statement.
type tx struct {
	date        time.Time
	description string
	category    string
	cents       int64
}

func (t tx) transfer() bool {
	return strings.EqualFold(t.category, "transfer") || strings.HasPrefix(strings.ToUpper(t.description), "TRANSFER TO ")
}

func money(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// statement returns the transactions from January 2024 to February 2025,
// newest first, the way the bank exports them.
func statement() []tx {
	r := &rng{s: 0x9e3779b97f4a7c15}
	var txs []tx
	add := func(y int, m time.Month, d int, desc, cat string, cents int64) {
		txs = append(txs, tx{time.Date(y, m, d, 0, 0, 0, 0, time.UTC), desc, cat, cents})
	}
	grocers := []string{"Corner Grocer", "Market Hall", "Green Basket", "Bakery Rossi", "FreshWay Superstore"}
	dining := []string{"Noodle Bar", "Cafe Aurora", "Pizzeria Sole", "Taqueria Luna", "The Lunch Box"}
	transport := []string{"City Transit top-up", "Fuel Station 24", "Bike Repair Co", "Rail Ticket Office"}
	shops := []string{"Hardware Depot", "Bookshop on Main", "Online Marketplace", "Home Goods Outlet"}
	fun := []string{"Cinema Lumen", "Climbing Hall", "Concert tickets", "Board Game Cafe"}
	pets := []string{"Pet Supplies", "Vet Clinic", "Dog Groomer"}
	for i := 0; i < 14; i++ {
		y, m := 2024, time.Month(i+1)
		if i >= 12 {
			y, m = 2025, time.Month(i-11)
		}
		days := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
		salary := int64(310000)
		if y == 2025 || m >= time.September {
			salary = 325000
		}
		// spend adds lo to hi payments (their number drawn first) in
		// category cat, each to one of names, on a random day, of
		// fromCents to toCents.
		spend := func(lo, hi int, names []string, cat string, fromCents, toCents int) {
			for n := r.between(lo, hi); n > 0; n-- {
				add(y, m, r.between(1, days), names[r.intn(len(names))], cat, -int64(r.between(fromCents, toCents)))
			}
		}
		add(y, m, 1, "Flat rent", "Rent", -95000)
		add(y, m, 3, "Streaming Plus", "Subscriptions", -1299)
		add(y, m, 5, "Mobile Network", "Utilities", -int64(r.between(2500, 3200)))
		add(y, m, 11, "Music Monthly", "Subscriptions", -999)
		add(y, m, 14, "City Power & Water", "Utilities", -int64(r.between(6000, 14500)))
		add(y, m, 20, "Cloud Storage", "Subscriptions", -299)
		add(y, m, 25, "ACME Payroll", "Salary", salary)
		add(y, m, 26, "TRANSFER TO SAVINGS", "Transfer", -50000)
		spend(22, 30, grocers, "Groceries", 450, 9800)
		spend(8, 14, dining, "Dining", 900, 6400)
		spend(12, 18, transport, "Transport", 250, 7200)
		spend(3, 8, shops, "Shopping", 1500, 18000)
		if r.intn(3) == 0 {
			add(y, m, r.between(1, days), "Pharmacy", "Health", -int64(r.between(600, 4500)))
		}
		add(y, m, 2, "Home & Contents Cover", "Insurance", -4870)
		spend(1, 3, fun, "Entertainment", 1200, 5600)
		spend(1, 2, pets, "Pets", 900, 7400)
		if r.intn(2) == 0 {
			add(y, m, r.between(1, days), "Evening language course", "Education", -int64(r.between(4000, 12000)))
		}
		if r.intn(3) == 0 {
			add(y, m, r.between(1, days), "Gift shop", "Gifts", -int64(r.between(1500, 8000)))
		}
		if r.intn(4) == 0 {
			add(y, m, r.between(1, days), "Refund Online Marketplace", "Shopping", int64(r.between(1500, 9000)))
		}
	}
	sort.SliceStable(txs, func(i, j int) bool { return txs[i].date.After(txs[j].date) })
	return txs
}

// statementCSV renders the export.
func statementCSV(txs []tx) string {
	var b strings.Builder
	b.WriteString("date,description,category,amount\n")
	for _, t := range txs {
		fmt.Fprintf(&b, "%s,%s,%s,%s\n", t.date.Format("2006-01-02"), t.description, t.category, money(t.cents))
	}
	return b.String()
}

// total mirrors ledger.MonthTotal.
type total struct {
	year     int
	month    time.Month
	category string
	in, out  int64
	count    int
}

// monthlyTotals mirrors ledger.MonthlyTotals. With byYear false it has
// the bug the session fixes: months of different years share a bucket,
// labelled with the year of the first transaction seen. The result is in
// a shuffled order (seed) standing for Go's map iteration, or sorted
// when seed is 0.
func monthlyTotals(txs []tx, byYear bool, seed uint64) []total {
	type key struct {
		year  int
		month time.Month
	}
	buckets := map[key]map[string]*total{}
	var keys []key
	for _, t := range txs {
		if t.transfer() {
			continue
		}
		k := key{month: t.date.Month()}
		if byYear {
			k.year = t.date.Year()
		}
		cats := buckets[k]
		if cats == nil {
			cats = map[string]*total{}
			buckets[k] = cats
			keys = append(keys, k)
		}
		cat := strings.ToLower(t.category)
		mt := cats[cat]
		if mt == nil {
			mt = &total{year: t.date.Year(), month: t.date.Month(), category: cat}
			cats[cat] = mt
		}
		if t.cents < 0 {
			mt.out -= t.cents
		} else {
			mt.in += t.cents
		}
		mt.count++
	}
	var out []total
	for _, k := range keys {
		for _, mt := range buckets[k] {
			out = append(out, *mt)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.year != b.year {
			return a.year < b.year
		}
		if a.month != b.month {
			return a.month < b.month
		}
		return a.category < b.category
	})
	if seed != 0 {
		r := &rng{s: seed}
		for i := len(out) - 1; i > 0; i-- {
			j := r.intn(i + 1)
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// report renders totals the way cmd/ledger prints them.
func report(totals []total) string { return reportYear(totals, 0, false) }

// reportYear renders totals the way the later cmd/ledger prints them:
// only the given year (0: every year), with a TOTAL line closing each
// month when monthTotals is set.
func reportYear(totals []total, year int, monthTotals bool) string {
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "month\tcategory\tcount\tin\tout\tnet\t")
	row := func(t total) {
		fmt.Fprintf(w, "%04d-%02d\t%s\t%d\t%s\t%s\t%s\t\n", t.year, int(t.month), t.category, t.count, money(t.in), money(t.out), money(t.in-t.out))
	}
	var sum total
	open := false
	for _, t := range totals {
		if year != 0 && t.year != year {
			continue
		}
		if monthTotals && open && (t.year != sum.year || t.month != sum.month) {
			row(sum)
			open = false
		}
		if !open {
			sum, open = total{year: t.year, month: t.month, category: "TOTAL"}, true
		}
		sum.in += t.in
		sum.out += t.out
		sum.count += t.count
		row(t)
	}
	if monthTotals && open {
		row(sum)
	}
	w.Flush()
	return b.String()
}

// find returns the total of a month and category.
func find(totals []total, year int, month time.Month, category string) (total, bool) {
	for _, t := range totals {
		if t.year == year && t.month == month && t.category == category {
			return t, true
		}
	}
	return total{}, false
}

// grepRows renders the statement rows of one month and category, both
// years, as grep prints them.
func grepRows(txs []tx, month time.Month, category string) string {
	var b strings.Builder
	for _, t := range txs {
		if t.date.Month() == month && t.category == category {
			fmt.Fprintf(&b, "%s,%s,%s,%s\n", t.date.Format("2006-01-02"), t.description, t.category, money(t.cents))
		}
	}
	return b.String()
}
