package web

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Charts are SVG drawn here, with no script and no style attribute (the
// pages' Content-Security-Policy allows neither inline): presentation
// attributes only. Each has a title and a description for screen readers,
// and a table of the same figures beside it on the page.

// Point is one value of a chart, with its label.
type Point struct {
	Label string
	Value float64
}

const chartW, chartH, chartPad = 640.0, 180.0, 28.0

// barChart draws values as bars, with the largest value on the axis.
func barChart(title, unit string, pts []Point) template.HTML {
	var b strings.Builder
	top := 0.0
	for _, p := range pts {
		top = math.Max(top, p.Value)
	}
	header(&b, title, fmt.Sprintf("%d bars, largest %s %s", len(pts), formatFloat(top, 2), unit))
	if top == 0 {
		top = 1
	}
	n := float64(max(len(pts), 1))
	slot := (chartW - 2*chartPad) / n
	for i, p := range pts {
		h := (chartH - 2*chartPad) * p.Value / top
		x := chartPad + float64(i)*slot
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#0b6e4f"><title>%s: %s %s</title></rect>`,
			x+1, chartH-chartPad-h, math.Max(slot-2, 1), h, html.EscapeString(p.Label), formatFloat(p.Value, 2), html.EscapeString(unit))
	}
	axes(&b, top, unit, pts)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// lineChart draws one or more series over the same labels, each in its
// colour; a missing value (NaN) breaks the line.
func lineChart(title, unit string, labels []string, series map[string][]float64, order []string) template.HTML {
	colours := []string{"#0b6e4f", "#c05621", "#2b6cb0", "#6b46c1"}
	var b strings.Builder
	top := 0.0
	for _, s := range series {
		for _, v := range s {
			if !math.IsNaN(v) {
				top = math.Max(top, v)
			}
		}
	}
	header(&b, title, fmt.Sprintf("%s over %d points, largest %s %s", strings.Join(order, ", "), len(labels), formatFloat(top, 2), unit))
	if top == 0 {
		top = 1
	}
	step := (chartW - 2*chartPad) / float64(max(len(labels)-1, 1))
	for i, name := range order {
		var pts []string
		flush := func() {
			if len(pts) > 0 {
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, colours[i%len(colours)], strings.Join(pts, " "))
			}
			pts = nil
		}
		for j, v := range series[name] {
			if math.IsNaN(v) {
				flush()
				continue
			}
			x, y := chartPad+float64(j)*step, chartH-chartPad-(chartH-2*chartPad)*v/top
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
			// A dot per value: an hour alone between gaps still shows.
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %s: %s %s</title></circle>`,
				x, y, colours[i%len(colours)], html.EscapeString(name), html.EscapeString(labels[j]), formatFloat(v, 2), html.EscapeString(unit))
		}
		flush()
		fmt.Fprintf(&b, `<text x="%.1f" y="14" font-size="12" fill="%s">%s</text>`, chartPad+float64(i)*90, colours[i%len(colours)], html.EscapeString(name))
	}
	pts := make([]Point, len(labels))
	for i, l := range labels {
		pts[i] = Point{Label: l}
	}
	axes(&b, top, unit, pts)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func header(b *strings.Builder, title, desc string) {
	fmt.Fprintf(b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg"><title>%s</title><desc>%s</desc>`,
		chartW, chartH, html.EscapeString(title), html.EscapeString(title), html.EscapeString(desc))
}

// axes draws the base line, the top value and the first and last labels.
func axes(b *strings.Builder, top float64, unit string, pts []Point) {
	fmt.Fprintf(b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#5b6470"/>`, chartPad, chartH-chartPad, chartW-chartPad, chartH-chartPad)
	fmt.Fprintf(b, `<text x="2" y="%.0f" font-size="11" fill="#5b6470">%s %s</text>`, chartPad-4, formatFloat(top, 1), html.EscapeString(unit))
	if len(pts) > 0 {
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="11" fill="#5b6470">%s</text>`, chartPad, chartH-8, html.EscapeString(pts[0].Label))
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="11" fill="#5b6470" text-anchor="end">%s</text>`, chartW-chartPad, chartH-8, html.EscapeString(pts[len(pts)-1].Label))
	}
}

func formatFloat(f float64, prec int) string {
	s := strconv.FormatFloat(f, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func joinStrings(s []string, sep string) string { return strings.Join(s, sep) }
