package main

import (
	"fmt"
	"strings"
	"time"
)

// Test names of the project's existing parse tests, printed by go test -v.
var parseTests = []string{
	"TestParseCents/whole_number", "TestParseCents/two_decimals", "TestParseCents/one_decimal",
	"TestParseCents/thousands_separator", "TestParseCents/millions", "TestParseCents/negative",
	"TestParseCents/debit_in_parentheses", "TestParseCents/negative_in_parentheses", "TestParseCents/surrounding_spaces",
	"TestParseCents/zero", "TestParseCents/leading_zeros", "TestParseCents/rejects_three_decimals",
	"TestParseCents/rejects_empty", "TestParseCents/rejects_letters", "TestParseCents/rejects_lone_dot",
	"TestParseDate/iso", "TestParseDate/day_month_year", "TestParseDate/short_month_name",
	"TestParseDate/rejects_us_order_when_ambiguous", "TestParseDate/rejects_empty",
	"TestReadCSV/minimal", "TestReadCSV/header_in_capitals", "TestReadCSV/blank_lines",
	"TestReadCSV/quoted_description_with_comma", "TestReadCSV/wrong_header", "TestReadCSV/missing_column",
	"TestReadCSV/bad_amount_names_line", "TestReadCSV/bad_date_names_line",
	"TestCentsString/positive", "TestCentsString/negative", "TestCentsString/small",
	"TestIsTransfer/category", "TestIsTransfer/description_to", "TestIsTransfer/description_from",
	"TestIsTransfer/ordinary_payment", "TestIsTransfer/lower_case_description", "TestIsTransfer/category_in_capitals",
	"TestParseCents/plus_sign_rejected", "TestParseCents/space_as_thousands_separator_rejected", "TestParseCents/comma_decimal_rejected",
	"TestParseCents/very_large", "TestParseCents/overflow", "TestParseCents/only_parentheses", "TestParseCents/unbalanced_parenthesis",
	"TestParseCents/double_negative", "TestParseCents/trailing_minus_rejected", "TestParseCents/currency_symbol_rejected",
	"TestParseDate/leap_day", "TestParseDate/invalid_leap_day", "TestParseDate/end_of_month", "TestParseDate/surrounding_spaces",
	"TestParseDate/two_digit_year_rejected", "TestParseDate/time_of_day_rejected", "TestParseDate/full_month_name_rejected",
	"TestReadCSV/crlf_line_endings", "TestReadCSV/byte_order_mark", "TestReadCSV/trailing_newline_missing",
	"TestReadCSV/extra_column", "TestReadCSV/empty_file", "TestReadCSV/header_only", "TestReadCSV/description_with_quotes",
	"TestReadCSV/unicode_description", "TestReadCSV/amount_with_spaces", "TestReadCSV/many_rows",
	"TestCentsString/zero", "TestCentsString/one_cent", "TestCentsString/minus_one_cent", "TestCentsString/large",
	"TestTransactionZeroValue/not_a_transfer", "TestTransactionZeroValue/amount_zero",
}

// verboseTests renders go test -v output for the parse tests and the
// given report tests.
func verboseTests(reportTests []string, elapsed string) string {
	var b strings.Builder
	parents := []string{}
	seen := map[string]bool{}
	for _, t := range parseTests {
		p, _, _ := strings.Cut(t, "/")
		if !seen[p] {
			seen[p] = true
			parents = append(parents, p)
		}
	}
	for _, p := range parents {
		fmt.Fprintf(&b, "=== RUN   %s\n", p)
		for _, t := range parseTests {
			if strings.HasPrefix(t, p+"/") {
				fmt.Fprintf(&b, "=== RUN   %s\n", t)
			}
		}
		fmt.Fprintf(&b, "--- PASS: %s (0.00s)\n", p)
		for _, t := range parseTests {
			if strings.HasPrefix(t, p+"/") {
				fmt.Fprintf(&b, "    --- PASS: %s (0.00s)\n", t)
			}
		}
	}
	for _, t := range reportTests {
		fmt.Fprintf(&b, "=== RUN   %s\n--- PASS: %s (0.00s)\n", t, t)
	}
	fmt.Fprintf(&b, "PASS\nok  \texample.com/ledger\t%s\n?   \texample.com/ledger/cmd/ledger\t[no test files]\n", elapsed)
	return b.String()
}

const regressionTest = `
func TestMonthlyTotalsSeparatesYears(t *testing.T) {
	// Exports list the newest transactions first, and an export that
	// covers more than a year has the same month twice. The two must
	// stay separate totals.
	txs := []Transaction{
		{Date: day("2025-01-14"), Description: "Corner Grocer", Category: "Groceries", Amount: -5300},
		{Date: day("2024-01-20"), Description: "Corner Grocer", Category: "Groceries", Amount: -4100},
		{Date: day("2024-01-06"), Description: "Market Hall", Category: "Groceries", Amount: -2250},
	}
	totals := MonthlyTotals(txs)
	jan25, ok := find(totals, "2025-01", "groceries")
	if !ok || jan25.Out != 5300 || jan25.Count != 1 {
		t.Errorf("2025-01 groceries = %+v (found %v), want out 53.00 from 1 transaction", jan25, ok)
	}
	jan24, ok := find(totals, "2024-01", "groceries")
	if !ok || jan24.Out != 6350 || jan24.Count != 2 {
		t.Errorf("2024-01 groceries = %+v (found %v), want out 63.50 from 2 transactions", jan24, ok)
	}
}
`

const orderTest = `package ledger

import (
	"reflect"
	"testing"
)

func TestMonthlyTotalsOrder(t *testing.T) {
	txs := []Transaction{
		{Date: day("2025-02-03"), Description: "Bus pass", Category: "Transport", Amount: -4900},
		{Date: day("2024-12-24"), Description: "Corner Grocer", Category: "Groceries", Amount: -8730},
		{Date: day("2025-02-01"), Description: "Flat rent", Category: "Rent", Amount: -95000},
		{Date: day("2024-12-28"), Description: "Pharmacy", Category: "Health", Amount: -1299},
		{Date: day("2025-02-10"), Description: "Corner Grocer", Category: "Groceries", Amount: -3810},
	}
	want := []string{"2024-12 groceries", "2024-12 health", "2025-02 groceries", "2025-02 rent", "2025-02 transport"}
	// Map iteration order differs from run to run; repeating the call
	// makes a missing sort fail reliably instead of now and then.
	for i := 0; i < 20; i++ {
		var got []string
		for _, mt := range MonthlyTotals(txs) {
			got = append(got, mt.Label()+" "+mt.Category)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("call %d: order %q, want %q", i, got, want)
		}
	}
}
`

const changelog = `# Changelog

## Unreleased

### Fixed

- Monthly totals no longer merge the same month of different years. An
  export running from January 2024 to February 2025 used to show one
  combined January and one combined February, labelled 2025, and no
  2024-01 or 2024-02 rows at all.
- "ledger report" prints months oldest first and, within a month, the
  categories in alphabetical order. The order used to change from one
  run to the next. MonthlyTotals returns its totals in the same order.

### Added

- "ledger report" closes each month with a TOTAL line.
- "ledger report -year YYYY" reports a single year.
`

func script(w *writer) {
	txs := statement()
	csv := statementCSV(txs)
	buggy := monthlyTotals(txs, false, 0x51ed270b)
	fixedShuffled := monthlyTotals(txs, true, 0x2545f491)
	sorted := monthlyTotals(txs, true, 0)

	// The figures the agent quotes are computed, not made up.
	jan25Bug, _ := find(buggy, 2025, time.January, "groceries")
	jan25, _ := find(sorted, 2025, time.January, "groceries")
	jan24, _ := find(sorted, 2024, time.January, "groceries")
	var grocOut int64
	grocMonths := 0
	for _, t := range sorted {
		if t.category == "groceries" && t.month > time.February {
			grocOut += t.out
			grocMonths++
		}
	}
	typical := grocOut / int64(grocMonths)

	// ---- Turn 0: a tour, and a first look at the numbers.
	w.user(0, "I've inherited this small ledger tool. Can you give me a quick tour of the code and run the monthly report on testdata/statement.csv? "+
		"I'd like to know whether the numbers look plausible before I rely on them.")

	w.assistant("A tour first: layout, then the code path from CSV to report, then run it on the sample export and sanity-check the figures.",
		"I'll start with the layout of the repository.",
		bash("find . -type f -not -path './.git/*' | sort && go version"))
	w.result(0, "bash", "./README.md\n./cmd/ledger/main.go\n./go.mod\n./parse.go\n./parse_test.go\n./report.go\n./report_test.go\n./testdata/statement.csv\n./transaction.go\ngo version go1.23.4 linux/amd64", false)

	w.assistant("", "A small library with one command. Reading the README and the report code.", read("README.md"), read("report.go"))
	w.result(0, "read", readmeMd, false)
	w.result(1, "read", reportGo, false)

	w.assistant("", "Now the types and the CSV reader that feed it.", read("transaction.go"), read("parse.go"))
	w.result(0, "read", transactionGo, false)
	w.result(1, "read", parseGo, false)

	w.assistant("", "Running the report on the sample export:", bash("go run ./cmd/ledger report testdata/statement.csv"))
	w.result(0, "bash", report(buggy), false)

	w.assistant("", fmt.Sprintf("Some of these figures look off: 2025-01 groceries is %s out over %d transactions, roughly twice a normal month, and I see no 2024-01 groceries row at all. Let me check which months the export covers.",
		money(jan25Bug.out), jan25Bug.count),
		read("testdata/statement.csv"))
	w.result(0, "read", csv, false)

	w.assistant("The file runs newest first from 2025-02 down to 2024-01: fourteen months, so January and February occur twice. MonthlyTotals keys by time.Month only. That is the bug. The user asked for a tour and a plausibility check, not a fix, so report and ask.",
		fmt.Sprintf("**The tour**\n\n"+
			"- transaction.go: the Transaction type, Cents (money as integer hundredths, never floats) and ParseCents, which accepts thousands separators and debits in parentheses; IsTransfer spots moves between your own accounts.\n"+
			"- parse.go: ReadCSV checks the header date,description,category,amount and parses three date formats; errors name the line.\n"+
			"- report.go: MonthlyTotals groups by month and category and skips transfers; Summary nets each month.\n"+
			"- cmd/ledger: reads the file and prints MonthlyTotals as a table.\n\n"+
			"**Are the numbers plausible? Not entirely.** The export covers fourteen months, January 2024 to February 2025, newest first. "+
			"MonthlyTotals groups by the month alone, without the year, so January 2024 and January 2025 end up in the same bucket (February too), labelled with the year of the first row seen, 2025. "+
			"That is why 2025-01 groceries shows %s while a typical month is around %s, and why 2024-01 and 2024-02 are missing.\n\n"+
			"The other months look right. Do you want me to fix it?", money(jan25Bug.out), money(typical)))

	// ---- Turn 1: the fix.
	w.user(3*time.Minute, "Yes, that's exactly what looked off to me. Please fix it. Keep the exported API the way it is, and add a test that would have caught this.")

	w.assistant("", "First the existing tests and a baseline run.", read("report_test.go"), bash("go test ./..."))
	w.result(0, "read", reportTestGo, false)
	w.result(1, "bash", "ok  \texample.com/ledger\t0.004s\n?   \texample.com/ledger/cmd/ledger\t[no test files]", false)

	fixedTests := reportTestGo + regressionTest
	anchor := "\tif got != 215000 {\n\t\tt.Errorf(\"net for 2024-06 = %v, want 2150.00\", got)\n\t}\n}\n"
	w.assistant("", "Every existing test uses dates from a single year, which is why nothing caught it. I'll add a regression test with a newest-first list spanning two Januaries and watch it fail before touching the code.",
		edit("report_test.go", anchor, anchor+regressionTest))
	w.result(0, "edit", editResult("report_test.go", anchor, anchor+regressionTest), false)

	w.assistant("", "", bash("go test ./..."))
	l1 := lineOf(fixedTests, "t.Errorf(\"2025-01 groceries")
	l2 := lineOf(fixedTests, "t.Errorf(\"2024-01 groceries")
	failure := fmt.Sprintf("--- FAIL: TestMonthlyTotalsSeparatesYears (0.00s)\n"+
		"    report_test.go:%d: 2025-01 groceries = {Year:2025 Month:January Category:groceries In:0.00 Out:116.50 Count:3} (found true), want out 53.00 from 1 transaction\n"+
		"    report_test.go:%d: 2024-01 groceries = {Year:0 Month:%%!Month(0) Category: In:0.00 Out:0.00 Count:0} (found false), want out 63.50 from 2 transactions\n"+
		"FAIL\nFAIL\texample.com/ledger\t0.005s\n?   \texample.com/ledger/cmd/ledger\t[no test files]\nFAIL\n\n(command exited with status 1)", l1, l2)
	w.result(0, "bash", failure, true)

	oldKey := "\tbyMonth := make(map[time.Month]map[string]*MonthTotal)\n\tfor _, tx := range txs {\n\t\tif tx.IsTransfer() {\n\t\t\tcontinue\n\t\t}\n\t\tmonth := tx.Date.Month()\n\t\tcats, ok := byMonth[month]\n\t\tif !ok {\n\t\t\tcats = make(map[string]*MonthTotal)\n\t\t\tbyMonth[month] = cats\n\t\t}"
	newKey := "\t// Key by year and month: an export that covers more than twelve\n\t// months has the same month twice.\n\ttype monthKey struct {\n\t\tyear  int\n\t\tmonth time.Month\n\t}\n\tbyMonth := make(map[monthKey]map[string]*MonthTotal)\n\tfor _, tx := range txs {\n\t\tif tx.IsTransfer() {\n\t\t\tcontinue\n\t\t}\n\t\tmonth := tx.Date.Month()\n\t\tkey := monthKey{tx.Date.Year(), month}\n\t\tcats, ok := byMonth[key]\n\t\tif !ok {\n\t\t\tcats = make(map[string]*MonthTotal)\n\t\t\tbyMonth[key] = cats\n\t\t}"
	fixedReport := mustReplace(reportGo, oldKey, newKey)
	w.assistant("", "It fails the same way the report does: one merged January labelled 2025, and no 2024-01. Now the fix: the map key becomes year plus month.",
		edit("report.go", oldKey, newKey))
	w.result(0, "edit", editResult("report.go", oldKey, newKey), false)

	w.assistant("", "", bash("gofmt -l . && go vet ./... && go test -v -count=1 ./..."))
	w.result(0, "bash", verboseTests([]string{"TestMonthlyTotalsOneMonth", "TestMonthlyTotalsSkipsTransfers", "TestSummary", "TestMonthlyTotalsSeparatesYears"}, "0.006s"), false)

	w.assistant("", "All green; gofmt and vet are clean. The report again:", bash("go run ./cmd/ledger report testdata/statement.csv"))
	w.result(0, "bash", report(fixedShuffled), false)

	w.assistant("", "2024-01 and 2024-02 are back. Cross-checking the January grocery figures against the raw rows:",
		bash("grep -E '^202[45]-01-[0-9]+,[^,]*,Groceries,' testdata/statement.csv"))
	w.result(0, "bash", grepRows(txs, time.January, "Groceries"), false)

	w.assistant("", fmt.Sprintf("Fixed.\n\n"+
		"**Cause:** MonthlyTotals grouped by calendar month without the year, so the two Januaries and the two Februaries of your fourteen-month export were added together.\n\n"+
		"**Fix:** report.go keys the totals by year and month. The exported API is unchanged.\n\n"+
		"**Test:** TestMonthlyTotalsSeparatesYears in report_test.go; it failed before the fix and passes now.\n\n"+
		"With your export, 2025-01 groceries is now %s over %d transactions, and 2024-01 groceries is back with %s over %d.\n\n"+
		"Side note: the rows come out in a different order on every run, because the totals are collected from a map. I left that alone since you didn't ask, but it is a small change if you want it.",
		money(jan25.out), jan25.count, money(jan24.out), jan24.count))

	// ---- Turn 2: stable order.
	w.user(6*time.Minute, "Yes, please sort them. The order changing on every run makes it impossible to diff two reports. "+
		"Oldest month first, and categories alphabetically within a month.")

	w.assistant("", "Checking where the order comes from and whether the command does anything to it.",
		bash("grep -n 'range' report.go cmd/ledger/main.go"), read("cmd/ledger/main.go"))
	w.result(0, "bash", "report.go:38:\tfor _, tx := range txs {\nreport.go:61:\tfor _, cats := range byMonth {\nreport.go:62:\t\tfor _, mt := range cats {\nreport.go:73:\tfor _, t := range totals {\ncmd/ledger/main.go:36:\tfor _, t := range ledger.MonthlyTotals(txs) {", false)
	w.result(1, "read", mainGo, false)

	oldImport := "import (\n\t\"fmt\"\n\t\"strings\"\n\t\"time\"\n)"
	newImport := "import (\n\t\"fmt\"\n\t\"sort\"\n\t\"strings\"\n\t\"time\"\n)"
	oldLoop := "\t\tfor _, mt := range cats {\n\t\t\ttotals = append(totals, *mt)\n\t\t}\n\t}\n\treturn totals"
	newLoop := "\t\tfor _, mt := range cats {\n\t\t\ttotals = append(totals, *mt)\n\t\t}\n\t}\n\t// Map order is random: sort, so that two reports of the same data\n\t// are the same.\n\tsort.Slice(totals, func(i, j int) bool {\n\t\ta, b := totals[i], totals[j]\n\t\tif a.Year != b.Year {\n\t\t\treturn a.Year < b.Year\n\t\t}\n\t\tif a.Month != b.Month {\n\t\t\treturn a.Month < b.Month\n\t\t}\n\t\treturn a.Category < b.Category\n\t})\n\treturn totals"
	fixedReport = mustReplace(mustReplace(fixedReport, oldImport, newImport), oldLoop, newLoop)
	w.assistant("The command prints in whatever order MonthlyTotals returns. Sorting inside MonthlyTotals gives every caller the stable order.",
		"The command prints whatever MonthlyTotals returns, so I'll sort there: every caller then gets the same order, not only the command.",
		edit("report.go", oldImport, newImport), edit("report.go", oldLoop, newLoop))
	w.result(0, "edit", editResult("report.go", oldImport, newImport), false)
	w.result(1, "edit", editResult("report.go", oldLoop, newLoop), false)

	w.assistant("", "And a test for the order. It calls MonthlyTotals repeatedly, since with a handful of map entries a missing sort only shows up some of the time.",
		write("report_order_test.go", orderTest))
	w.result(0, "write", fmt.Sprintf("Wrote %d bytes to report_order_test.go.", len(orderTest)), false)

	w.assistant("", "Reading the whole function once more after the two edits.", read("report.go"))
	w.result(0, "read", fixedReport, false)

	w.assistant("", "", bash("gofmt -l . && go vet ./... && go test -v -count=1 ./..."))
	w.result(0, "bash", verboseTests([]string{"TestMonthlyTotalsOrder", "TestMonthlyTotalsOneMonth", "TestMonthlyTotalsSkipsTransfers", "TestSummary", "TestMonthlyTotalsSeparatesYears"}, "0.007s"), false)

	w.assistant("", "Now two runs of the real report, compared:",
		bash("go run ./cmd/ledger report testdata/statement.csv > /tmp/r1.txt && go run ./cmd/ledger report testdata/statement.csv > /tmp/r2.txt && diff /tmp/r1.txt /tmp/r2.txt && echo identical && cat /tmp/r1.txt"))
	w.result(0, "bash", "identical\n"+report(sorted), false)

	w.assistant("", "Done: MonthlyTotals returns its totals sorted by year, month and category, so the report is the same on every run, oldest month first. "+
		"TestMonthlyTotalsOrder in report_order_test.go checks the order over twenty calls, and two runs of the report on your export are byte-identical.")

	// ---- Turn 3: a small feature.
	w.user(5*time.Minute, "Nice. Two small additions to the command while you're at it: a line with the month's total after each month, "+
		"and a -year flag so I can look at one year only. No changes to the library for this, please.")

	w.assistant("Only cmd/ledger changes. MonthlyTotals is sorted now, so one pass can close each month with a TOTAL row. Rewrite main.go with a FlagSet for the report subcommand.",
		"Both fit in cmd/ledger alone. Since MonthlyTotals is now sorted by month, one pass over it can close each month with a TOTAL line. I'll rewrite main.go with a flag set for the report subcommand.",
		write("cmd/ledger/main.go", mainGoYear))
	w.result(0, "write", fmt.Sprintf("Wrote %d bytes to cmd/ledger/main.go.", len(mainGoYear)), false)

	w.assistant("", "", bash("gofmt -l . && go vet ./... && go run ./cmd/ledger report -year 2024 testdata/statement.csv"))
	w.result(0, "bash", reportYear(sorted, 2024, true), false)

	w.assistant("", "That works for 2024. Checking the bad-usage path, 2025 on its own, and that without the flag every month is still there:",
		bash("go run ./cmd/ledger report; echo \"exit $?\"; go run ./cmd/ledger report -year 2025 testdata/statement.csv && go run ./cmd/ledger report testdata/statement.csv"))
	w.result(0, "bash", "usage: ledger report [-year YYYY] FILE.csv\nexit status 2\nexit 1\n"+reportYear(sorted, 2025, true)+reportYear(sorted, 0, true), false)

	w.assistant("", "Done, in cmd/ledger/main.go only:\n\n"+
		"- Each month now ends with a TOTAL line (count, in, out and net over all its categories).\n"+
		"- `ledger report -year 2024 FILE.csv` limits the report to one year; without the flag every year is shown.\n\n"+
		"The library is untouched. The usage message mentions the flag, and a missing file argument still exits with status 2 (go run reports it as exit 1).")

	// ---- Turn 4: changelog and README.
	w.user(4*time.Minute, "Looks good. Last thing: add a CHANGELOG entry for all of this and check that the README still describes the behaviour. "+
		"Don't bump the version, I'll do the release myself.")

	w.assistant("", "", bash("ls CHANGELOG.md; git log --oneline -6"))
	w.result(0, "bash", "ls: cannot access 'CHANGELOG.md': No such file or directory\n3f9c2ab Accept amounts written in parentheses\n91d04e7 Read DD/MM/YYYY dates\n5be1a70 Skip transfers between own accounts\n0c7d3e2 Monthly totals by category\n8a41f02 Add ledger report command\ne41a9f8 Initial import", false)

	oldReadme := "    go run ./cmd/ledger report testdata/statement.csv\n"
	newReadme := "    go run ./cmd/ledger report testdata/statement.csv\n    go run ./cmd/ledger report -year 2024 testdata/statement.csv\n\n" +
		"The report lists months oldest first and, within a month, categories in\nalphabetical order; a TOTAL line closes each month. -year limits it to\none year.\n"
	w.assistant("", "There is no changelog yet, so I'll create one with an Unreleased section. The README I read earlier says nothing about the order, the TOTAL line or -year; one short paragraph covers them.",
		write("CHANGELOG.md", changelog), edit("README.md", oldReadme, newReadme))
	w.result(0, "write", fmt.Sprintf("Wrote %d bytes to CHANGELOG.md.", len(changelog)), false)
	w.result(1, "edit", editResult("README.md", oldReadme, newReadme), false)

	w.assistant("", "", bash("go test -race -count=1 ./... && git status --short && git diff"))
	w.result(0, "bash", "ok  \texample.com/ledger\t1.046s\n?   \texample.com/ledger/cmd/ledger\t[no test files]\n M README.md\n M cmd/ledger/main.go\n M report.go\n M report_test.go\n?? CHANGELOG.md\n?? report_order_test.go\n"+
		unifiedDiff("README.md", readmeMd, mustReplace(readmeMd, oldReadme, newReadme))+
		unifiedDiff("cmd/ledger/main.go", mainGo, mainGoYear)+
		unifiedDiff("report.go", reportGo, fixedReport)+
		unifiedDiff("report_test.go", reportTestGo, fixedTests), false)

	w.assistant("", "All set:\n\n"+
		"- **CHANGELOG.md** (new) has an Unreleased section with the two fixes and the two additions to the command; the version is untouched.\n"+
		"- **README.md** now describes the order, the TOTAL line and -year.\n"+
		"- Tests pass with the race detector. Changed: report.go, report_test.go, cmd/ledger/main.go and README.md; new: report_order_test.go and CHANGELOG.md. Nothing is committed.")
	finalID := w.parent

	w.line(labelEntry{w.head("label", 20*time.Second), finalID, "ready-for-release"})
	w.line(sessionInfo{w.head("session_info", time.Second), "ledger: monthly totals across years"})
}
