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
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	js, err := assets.ReadFile("assets/script.js")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// The stylesheet and script are this package's own files, not input:
	// they are trusted as they are.
	v := view{R: r, Chart: newChart(r), CSS: template.CSS(css), JS: template.JS(js)}
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return fmt.Errorf("report: render %s: %w", r.File, err)
	}
	_, err = buf.WriteTo(w)
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
	}
	return string(k)
}
