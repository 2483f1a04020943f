package bench

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
)

// Series is one line of a chart: (x, y) points in x order.
type Series struct {
	Name   string
	Points [][2]float64
}

// SeriesByImpl turns rows of one workload into one series per
// implementation: throughput against client count.
func SeriesByImpl(rows Rows, workload string) []Series {
	var out []Series
	index := map[string]int{}
	for _, r := range rows {
		if r.Workload != workload || !r.OK() {
			continue
		}
		i, ok := index[r.Impl]
		if !ok {
			i = len(out)
			index[r.Impl] = i
			out = append(out, Series{Name: r.Impl})
		}
		out[i].Points = append(out[i].Points, [2]float64{float64(r.Clients), r.OpsPerSec})
	}
	for i := range out {
		slices.SortFunc(out[i].Points, func(a, b [2]float64) int {
			return int(math.Copysign(1, a[0]-b[0]))
		})
	}
	return out
}

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"}

// WriteSVG draws a line chart of series. The x values (client counts) are
// placed at even spacing in increasing order, which reads well for the
// usual 1,2,4,8 sweeps; the y axis starts at 0.
func WriteSVG(w io.Writer, title, xLabel, yLabel string, series []Series) error {
	const (
		width, height                  = 760, 440
		left, right, top, bottom       = 80, 220, 50, 60
		plotW, plotH                   = width - left - right, height - top - bottom
		fontAxis, fontTitle, fontLabel = 12, 16, 13
	)
	var xs []float64
	maxY := 0.0
	for _, s := range series {
		for _, p := range s.Points {
			if !slices.Contains(xs, p[0]) {
				xs = append(xs, p[0])
			}
			maxY = max(maxY, p[1])
		}
	}
	slices.Sort(xs)
	if len(xs) == 0 {
		return fmt.Errorf("plot: no data")
	}
	top1, step := niceScale(maxY, 5)
	xPos := func(x float64) float64 {
		i := slices.Index(xs, x)
		if len(xs) == 1 {
			return left + plotW/2
		}
		return left + float64(i)*plotW/float64(len(xs)-1)
	}
	yPos := func(y float64) float64 { return top + plotH - y/top1*plotH }

	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n", width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="%d" y="%d" font-size="%d" font-weight="bold">%s</text>`+"\n", left, top-20, fontTitle, esc(title))
	for y := 0.0; y <= top1+step/2; y += step {
		yy := yPos(y)
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, yy, left+plotW, yy)
		p(`<text x="%d" y="%.1f" font-size="%d" text-anchor="end">%s</text>`+"\n", left-6, yy+4, fontAxis, esc(fmt.Sprintf("%g", y)))
	}
	for _, x := range xs {
		xx := xPos(x)
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", xx, top, xx, top+plotH)
		p(`<text x="%.1f" y="%d" font-size="%d" text-anchor="middle">%g</text>`+"\n", xx, top+plotH+18, fontAxis, x)
	}
	p(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", left, top, plotW, plotH)
	p(`<text x="%d" y="%d" font-size="%d" text-anchor="middle">%s</text>`+"\n", left+plotW/2, height-15, fontLabel, esc(xLabel))
	p(`<text transform="translate(18,%d) rotate(-90)" font-size="%d" text-anchor="middle">%s</text>`+"\n", top+plotH/2, fontLabel, esc(yLabel))
	for i, s := range series {
		color := palette[i%len(palette)]
		var pts []byte
		for _, pt := range s.Points {
			pts = fmt.Appendf(pts, "%.1f,%.1f ", xPos(pt[0]), yPos(pt[1]))
		}
		p(`<polyline fill="none" stroke="%s" stroke-width="2.5" points="%s"/>`+"\n", color, pts)
		for _, pt := range s.Points {
			p(`<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s: %g clients, %.0f ops/s</title></circle>`+"\n",
				xPos(pt[0]), yPos(pt[1]), color, esc(s.Name), pt[0], pt[1])
		}
		ly := top + 10 + i*22
		p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", left+plotW+15, ly, left+plotW+40, ly, color)
		p(`<text x="%d" y="%d" font-size="%d">%s</text>`+"\n", left+plotW+46, ly+4, fontAxis, esc(s.Name))
	}
	p("</svg>\n")
	return b.Flush()
}

// niceScale returns an axis top >= v and a tick step of 1, 2 or 5 times a
// power of ten, for about n ticks.
func niceScale(v float64, n int) (top, step float64) {
	if v <= 0 {
		return 1, 0.2
	}
	raw := v / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	return math.Ceil(v/step) * step, step
}

func esc(s string) string { return html.EscapeString(s) }
