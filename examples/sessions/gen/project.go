package main

// The files of the small Go project the agent works on in the demo
// session, before and after its fixes. They are shown to the model through
// read tool results, and the edits in the session apply to them.

const transactionGo = `// Package ledger reads the CSV export of a bank account and totals the
// transactions by calendar month and category.
package ledger

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cents is an amount of money in hundredths of the currency unit. Money
// never goes through float64 in this package.
type Cents int64

// String formats the amount as "-1234.56".
func (c Cents) String() string {
	sign := ""
	if c < 0 {
		sign = "-"
		c = -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// ParseCents reads an amount as the bank writes it: "1234.56",
// "1,234.56", "-12.00" or, for debits in some exports, "(12.00)".
func ParseCents(s string) (Cents, error) {
	s = strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		neg = true
		s = s[1 : len(s)-1]
	}
	if strings.HasPrefix(s, "-") {
		neg = !neg
		s = s[1:]
	}
	s = strings.ReplaceAll(s, ",", "")
	whole, frac, ok := strings.Cut(s, ".")
	if !ok {
		frac = "00"
	}
	if len(frac) == 1 {
		frac += "0"
	}
	if len(frac) != 2 || whole == "" {
		return 0, fmt.Errorf("amount %q: want digits with two decimals", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", s, err)
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", s, err)
	}
	c := Cents(w*100 + f)
	if neg {
		c = -c
	}
	return c, nil
}

// Transaction is one line of a statement. Amount is negative for money
// that left the account.
type Transaction struct {
	Date        time.Time
	Description string
	Category    string
	Amount      Cents
}

// IsTransfer reports whether the transaction moves money between the
// user's own accounts; those are not income or spending.
func (t Transaction) IsTransfer() bool {
	if strings.EqualFold(t.Category, "transfer") {
		return true
	}
	d := strings.ToUpper(t.Description)
	return strings.HasPrefix(d, "TRANSFER TO ") || strings.HasPrefix(d, "TRANSFER FROM ")
}
`

const parseGo = `package ledger

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// dateLayouts are the date formats seen in exports, tried in order.
var dateLayouts = []string{"2006-01-02", "02/01/2006", "2 Jan 2006"}

// ErrNoHeader means the first line of the file is not the expected header.
var ErrNoHeader = errors.New("ledger: missing header date,description,category,amount")

// ReadCSV reads a statement export. The first line must be the header
// "date,description,category,amount" (in any letter case); blank lines
// are skipped.
func ReadCSV(r io.Reader) ([]Transaction, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 4
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("ledger: reading header: %w", err)
	}
	want := []string{"date", "description", "category", "amount"}
	for i, h := range header {
		if !strings.EqualFold(strings.TrimSpace(h), want[i]) {
			return nil, ErrNoHeader
		}
	}
	var txs []Transaction
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return txs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		line, _ := cr.FieldPos(0)
		tx, err := parseRecord(rec)
		if err != nil {
			return nil, fmt.Errorf("ledger: line %d: %w", line, err)
		}
		txs = append(txs, tx)
	}
}

func parseRecord(rec []string) (Transaction, error) {
	date, err := parseDate(rec[0])
	if err != nil {
		return Transaction{}, err
	}
	amount, err := ParseCents(rec[3])
	if err != nil {
		return Transaction{}, err
	}
	return Transaction{Date: date, Description: rec[1], Category: rec[2], Amount: amount}, nil
}

func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("date %q: want YYYY-MM-DD, DD/MM/YYYY or D Mon YYYY", s)
}
`

const reportGo = `package ledger

import (
	"fmt"
	"strings"
	"time"
)

// MonthTotal sums the transactions of one category in one calendar month.
type MonthTotal struct {
	Year     int
	Month    time.Month
	Category string
	In       Cents
	Out      Cents
	Count    int
}

// Net is the money that came in minus the money that went out.
func (t MonthTotal) Net() Cents { return t.In - t.Out }

// Label is the month as "2025-01".
func (t MonthTotal) Label() string { return fmt.Sprintf("%04d-%02d", t.Year, int(t.Month)) }

// MonthlyTotals groups transactions by calendar month and category.
// Transfers between the user's own accounts are left out.
func MonthlyTotals(txs []Transaction) []MonthTotal {
	byMonth := make(map[time.Month]map[string]*MonthTotal)
	for _, tx := range txs {
		if tx.IsTransfer() {
			continue
		}
		month := tx.Date.Month()
		cats, ok := byMonth[month]
		if !ok {
			cats = make(map[string]*MonthTotal)
			byMonth[month] = cats
		}
		cat := strings.ToLower(tx.Category)
		mt, ok := cats[cat]
		if !ok {
			mt = &MonthTotal{Year: tx.Date.Year(), Month: month, Category: cat}
			cats[cat] = mt
		}
		if tx.Amount < 0 {
			mt.Out -= tx.Amount
		} else {
			mt.In += tx.Amount
		}
		mt.Count++
	}
	totals := make([]MonthTotal, 0, len(byMonth))
	for _, cats := range byMonth {
		for _, mt := range cats {
			totals = append(totals, *mt)
		}
	}
	return totals
}

// Summary returns the net amount of every month, keyed by its label.
func Summary(totals []MonthTotal) map[string]Cents {
	out := make(map[string]Cents)
	for _, t := range totals {
		out[t.Label()] += t.Net()
	}
	return out
}
`

const reportTestGo = `package ledger

import (
	"testing"
	"time"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func find(totals []MonthTotal, label, category string) (MonthTotal, bool) {
	for _, t := range totals {
		if t.Label() == label && t.Category == category {
			return t, true
		}
	}
	return MonthTotal{}, false
}

func TestMonthlyTotalsOneMonth(t *testing.T) {
	txs := []Transaction{
		{Date: day("2024-03-02"), Description: "Corner Grocer", Category: "Groceries", Amount: -4120},
		{Date: day("2024-03-09"), Description: "Corner Grocer", Category: "groceries", Amount: -2875},
		{Date: day("2024-03-25"), Description: "ACME Payroll", Category: "Salary", Amount: 310000},
	}
	totals := MonthlyTotals(txs)
	g, ok := find(totals, "2024-03", "groceries")
	if !ok {
		t.Fatalf("no groceries total for 2024-03 in %v", totals)
	}
	if g.Out != 6995 || g.Count != 2 {
		t.Errorf("groceries: out %v count %d, want 69.95 and 2", g.Out, g.Count)
	}
	s, _ := find(totals, "2024-03", "salary")
	if s.In != 310000 {
		t.Errorf("salary in = %v, want 3100.00", s.In)
	}
}

func TestMonthlyTotalsSkipsTransfers(t *testing.T) {
	txs := []Transaction{
		{Date: day("2024-05-01"), Description: "TRANSFER TO SAVINGS", Category: "Misc", Amount: -50000},
		{Date: day("2024-05-03"), Description: "Bakery", Category: "Groceries", Amount: -650},
	}
	totals := MonthlyTotals(txs)
	if len(totals) != 1 {
		t.Fatalf("got %d totals, want 1 (the transfer must be skipped): %v", len(totals), totals)
	}
}

func TestSummary(t *testing.T) {
	totals := []MonthTotal{
		{Year: 2024, Month: time.June, Category: "rent", Out: 95000},
		{Year: 2024, Month: time.June, Category: "salary", In: 310000},
	}
	got := Summary(totals)["2024-06"]
	if got != 215000 {
		t.Errorf("net for 2024-06 = %v, want 2150.00", got)
	}
}
`

const mainGo = `// Command ledger prints the monthly totals of a bank statement export.
//
// Usage:
//
//	ledger report FILE.csv
package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"example.com/ledger"
)

func main() {
	if len(os.Args) != 3 || os.Args[1] != "report" {
		fmt.Fprintln(os.Stderr, "usage: ledger report FILE.csv")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger:", err)
		os.Exit(1)
	}
	defer f.Close()
	txs, err := ledger.ReadCSV(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "month\tcategory\tcount\tin\tout\tnet\t")
	for _, t := range ledger.MonthlyTotals(txs) {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t\n", t.Label(), t.Category, t.Count, t.In, t.Out, t.Net())
	}
	w.Flush()
}
`

const readmeMd = `# ledger

Totals a bank account's CSV export by month and category.

    go run ./cmd/ledger report testdata/statement.csv

The export must start with the header date,description,category,amount.
Amounts use a dot for decimals; thousands separators and debits written
in parentheses are accepted. Transfers between your own accounts
(category "transfer", or a description starting with "TRANSFER TO" or
"TRANSFER FROM") are not counted.
`

// mainGoYear is cmd/ledger/main.go after the agent added -year and the
// monthly TOTAL lines.
const mainGoYear = `// Command ledger prints the monthly totals of a bank statement export.
//
// Usage:
//
//	ledger report [-year YYYY] FILE.csv
package main

import (
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"example.com/ledger"
)

const usage = "usage: ledger report [-year YYYY] FILE.csv"

func main() {
	if len(os.Args) < 2 || os.Args[1] != "report" {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	flags := flag.NewFlagSet("report", flag.ExitOnError)
	year := flags.Int("year", 0, "report only this year (default: every year in the file)")
	flags.Parse(os.Args[2:])
	if flags.NArg() != 1 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	f, err := os.Open(flags.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger:", err)
		os.Exit(1)
	}
	defer f.Close()
	txs, err := ledger.ReadCSV(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "month\tcategory\tcount\tin\tout\tnet\t")
	row := func(t ledger.MonthTotal) {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t\n", t.Label(), t.Category, t.Count, t.In, t.Out, t.Net())
	}
	// MonthlyTotals is sorted by month, so each month's rows are together
	// and a TOTAL line can close them.
	var sum ledger.MonthTotal
	open := false
	for _, t := range ledger.MonthlyTotals(txs) {
		if *year != 0 && t.Year != *year {
			continue
		}
		if open && t.Label() != sum.Label() {
			row(sum)
			open = false
		}
		if !open {
			sum = ledger.MonthTotal{Year: t.Year, Month: t.Month, Category: "TOTAL"}
			open = true
		}
		sum.In += t.In
		sum.Out += t.Out
		sum.Count += t.Count
		row(t)
	}
	if open {
		row(sum)
	}
	w.Flush()
}
`
