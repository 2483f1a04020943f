package bench

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line of a chart: (x, y) points in x order.
type Series struct {
	Name   string
	Points [][2]float64
}

// SeriesByImpl turns rows of one workload into one series per
// implementation: throughput against client count.
func SeriesByImpl(rows Rows, workload string) []Series {
	return collect(func(yield func(impl string, x, y float64)) {
		for _, r := range rows {
			if r.Workload == workload && r.OK() {
				yield(r.Impl, float64(r.Clients), r.OpsPerSec)
			}
		}
	})
}

// SeriesByRTT turns the tables of a run into one series per implementation:
// the throughput of one scenario (workload, sessions, hold) against the
// round-trip time the proxy added.
func SeriesByRTT(tables []Table, workload string, clients int, holdMs float64) []Series {
	return collect(func(yield func(impl string, x, y float64)) {
		for _, t := range tables {
			for _, r := range t.Rows {
				if r.Workload == workload && r.Clients == clients && r.HoldMs == holdMs && r.OK() {
					yield(r.Impl, t.RTTMs, r.OpsPerSec)
				}
			}
		}
	})
}

// collect groups points by series name, in order of first appearance, and
// sorts each series by x.
func collect(points func(yield func(name string, x, y float64))) []Series {
	var out []Series
	index := map[string]int{}
	points(func(name string, x, y float64) {
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, Series{Name: name})
		}
		out[i].Points = append(out[i].Points, [2]float64{x, y})
	})
	for i := range out {
		slices.SortFunc(out[i].Points, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	}
	return out
}

// Chart is a line chart of series.
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	// XTicks, when set, are the only x ticks, labelled with their value.
	XTicks []float64
}

// chartColors are distinguishable on white and for most colour-blind
// readers (Okabe-Ito).
var chartColors = []color.RGBA{
	{R: 0x00, G: 0x72, B: 0xB2, A: 0xff}, // blue
	{R: 0xE6, G: 0x9F, B: 0x00, A: 0xff}, // orange
	{R: 0x00, G: 0x9E, B: 0x73, A: 0xff}, // green
	{R: 0xCC, G: 0x79, B: 0xA7, A: 0xff}, // purple
	{R: 0xD5, G: 0x5E, B: 0x00, A: 0xff}, // vermillion
	{R: 0x56, G: 0xB4, B: 0xE9, A: 0xff}, // sky blue
}

// Draw draws the chart with gonum/plot in format ("svg", "png", "pdf",
// ...), 8x5 inches, the y axis from 0, each point labelled with its value.
func (c Chart) Draw(w io.Writer, format string) error {
	if len(c.Series) == 0 {
		return errors.New("plot: no data")
	}
	p := plot.New()
	p.Title.Text = c.Title
	p.Title.Padding = vg.Points(10)
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Y.Min = 0
	p.Y.Tick.Marker = wholeTicks{}
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Points(10)
	p.Legend.YOffs = -vg.Points(5)
	p.Add(plotter.NewGrid())
	maxY := 0.0
	for _, s := range c.Series {
		for _, pt := range s.Points {
			maxY = max(maxY, pt[1])
		}
	}
	for i, s := range c.Series {
		xys := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			xys[j].X, xys[j].Y = pt[0], pt[1]
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("plot %s: %w", s.Name, err)
		}
		col := chartColors[i%len(chartColors)]
		line.Color = col
		line.Width = vg.Points(2)
		points.Color = col
		points.Shape = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}}[i%4]
		points.Radius = vg.Points(3.5)
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
		// Each value above and right of its point (the lines fall to the
		// right), or below it when another series has a value just
		// above it at the same x, so that the two labels do not overlap.
		var above, below plotter.XYLabels
		for _, pt := range s.Points {
			l := &above
			if c.crowded(i, pt, maxY) {
				l = &below
			}
			l.XYs = append(l.XYs, plotter.XY{X: pt[0], Y: pt[1]})
			l.Labels = append(l.Labels, fmt.Sprintf("%.0f", pt[1]))
		}
		for _, set := range []struct {
			l      plotter.XYLabels
			yAlign draw.YAlignment
			dy     vg.Length
		}{{above, draw.YBottom, vg.Points(3)}, {below, draw.YTop, -vg.Points(4)}} {
			if len(set.l.XYs) == 0 {
				continue
			}
			lbl, err := plotter.NewLabels(set.l)
			if err != nil {
				return fmt.Errorf("plot %s: %w", s.Name, err)
			}
			for k := range lbl.TextStyle {
				lbl.TextStyle[k].Color = col
				lbl.TextStyle[k].XAlign = draw.XLeft
				lbl.TextStyle[k].YAlign = set.yAlign
			}
			lbl.Offset = vg.Point{X: vg.Points(4), Y: set.dy}
			p.Add(lbl)
		}
	}
	p.Y.Max = maxY * 1.2 // room for the legend and the labels
	if len(c.XTicks) > 0 {
		ticks := make([]plot.Tick, len(c.XTicks))
		for i, x := range c.XTicks {
			ticks[i] = plot.Tick{Value: x, Label: trimFloat(x)}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		lo, hi := slices.Min(c.XTicks), slices.Max(c.XTicks)
		pad := (hi - lo) * 0.05
		p.X.Min, p.X.Max = lo-pad, hi+3*pad // room for the labels right of the last points
	}
	wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, format)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}

// crowded reports whether another series has a point at pt's x a little
// above pt (within 6% of the axis): pt's label then goes below it.
func (c Chart) crowded(series int, pt [2]float64, maxY float64) bool {
	for i, s := range c.Series {
		if i == series {
			continue
		}
		for _, q := range s.Points {
			if q[0] == pt[0] && q[1] >= pt[1] && q[1]-pt[1] < 0.06*maxY {
				if q[1] > pt[1] || i < series {
					return true
				}
			}
		}
	}
	return false
}

// wholeTicks are plot's default ticks labelled without decimals.
type wholeTicks struct{}

func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = fmt.Sprintf("%.0f", ticks[i].Value)
		}
	}
	return ticks
}

// ChartFormat is the format Draw takes for a file name's extension.
func ChartFormat(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "svg", "png", "pdf", "eps", "jpg", "jpeg", "tif", "tiff":
		return ext, nil
	}
	return "", fmt.Errorf("plot: %s: want a .svg, .png or .pdf file", path)
}
