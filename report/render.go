package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"strconv"

	"github.com/compactkit/compact/internal/numfmt"
)

// assets holds the page's template, stylesheet and script.
//
//go:embed assets/page.html assets/style.css assets/script.js
var assets embed.FS

// page is the parsed template; parsing an embedded file cannot fail once
// the package builds, which the tests check.
var page = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"num": numfmt.Thousands,
	"pct": func(n, of int) string {
		if of <= 0 {
			return ""
		}
		return strconv.FormatFloat(100*float64(n)/float64(of), 'f', 1, 64) + "%"
	},
	"kindName": kindName,
}).ParseFS(assets, "assets/page.html"))

// view is what the template receives.
type view struct {
	R     *Report
	Chart chart
	CSS   template.CSS
	JS    template.JS
}

// Render writes r as a complete HTML document. Nothing is written to w
// when rendering fails.
func Render(w io.Writer, r *Report) error {
	// The stylesheet and script are this package's own files, not input:
	// they are trusted as they are.
	v := view{R: r, Chart: newChart(r), CSS: Stylesheet(), JS: Script()}
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return fmt.Errorf("report: render %s: %w", r.File, err)
	}
	_, err := buf.WriteTo(w)
	return err
}

// kindName says what a marker kind stands for, for the legend and cards.
func kindName(k MarkerKind) string {
	switch k {
	case KindAutomatic:
		return "automatic (threshold)"
	case KindOverflow:
		return "forced by an overflow"
	case KindManual:
		return "manual"
	case KindEdit:
		return "context edit"
	case KindIdle:
		return "cold cache (idle)"
	}
	return string(k)
}

// WriteChart writes the chart of r (the context size at each model call,
// the window, the trigger and the compactions) and its legend as a piece
// of HTML, for a page that embeds it and carries Stylesheet: the proxy's
// live view draws its conversations with it.
func WriteChart(w io.Writer, r *Report) error {
	return writePart(w, "chart", view{R: r, Chart: newChart(r)})
}

// WriteCards writes r's compaction cards as a piece of HTML (see
// WriteChart); Script gives their sections "Expand all" and "Collapse
// all" buttons (data-action="expand" and "collapse").
func WriteCards(w io.Writer, r *Report) error {
	return writePart(w, "cards", r)
}

// writePart executes the named template of the page into w, nothing
// written when it fails.
func writePart(w io.Writer, name string, data any) error {
	var buf bytes.Buffer
	if err := page.ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("report: render %s: %w", name, err)
	}
	_, err := buf.WriteTo(w)
	return err
}

// Stylesheet returns the report page's stylesheet, which styles the
// pieces WriteChart and WriteCards write.
func Stylesheet() template.CSS {
	css, _ := assets.ReadFile("assets/style.css") // embedded: it is there once the package builds
	return template.CSS(css)
}

// Script returns the report page's script: the expand and collapse
// buttons of the cards' sections, and every section open for printing.
func Script() template.JS {
	js, _ := assets.ReadFile("assets/script.js") // embedded: it is there once the package builds
	return template.JS(js)
}
