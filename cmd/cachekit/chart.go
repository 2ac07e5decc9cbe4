package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/cachekit/cachekit/sim"
)

// The chart is drawn with gonum.org/v1/plot, in one file whatever the number
// of traces: one panel per trace, stacked vertically with their plot areas
// aligned, each with the trace's name as title, hit ratio in % (y) against
// capacity in entries (x, on a log scale when the capacities span a factor
// of 10 or more), one line with point markers per policy and, right of the
// plot area, the legend. The file's extension chooses the format.

// chartFormats are the extensions -chart accepts.
var chartFormats = []string{".svg", ".png", ".pdf"}

// chartFormat returns the format of a chart file from its extension.
func chartFormat(file string) (string, error) {
	ext := strings.ToLower(filepath.Ext(file))
	if !slices.Contains(chartFormats, ext) {
		return "", fmt.Errorf("-chart %s: unknown format %q (want a file name ending in %s)",
			file, ext, strings.Join(chartFormats, ", "))
	}
	return ext[1:], nil
}

// The chart's dimensions.
const (
	chartW     = 9 * vg.Inch   // the whole width, legend included
	panelH     = 4.5 * vg.Inch // the height of one trace's panel
	chartPad   = 10            // points, around the chart and between panels
	legendGap  = 14            // points, between a plot area and its legend
	pngDPI     = 144
	markRadius = 3 // points
	lineWidth  = 1.5
)

// The fonts' sizes in points.
const (
	titleSize  = 15
	labelSize  = 12
	tickSize   = 10
	legendSize = 11
)

// sans is the typeface of every text of the chart.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// palette holds the colours of the policies' lines (Tableau 10, which stay
// apart for most colour-blind readers); opt and opt-bypass, the ceilings,
// are black and grey whatever their position.
var palette = []color.Color{
	rgb(0x1f, 0x77, 0xb4), rgb(0xff, 0x7f, 0x0e), rgb(0x2c, 0xa0, 0x2c), rgb(0xd6, 0x27, 0x28),
	rgb(0x94, 0x67, 0xbd), rgb(0x8c, 0x56, 0x4b), rgb(0xe3, 0x77, 0xc2), rgb(0x7f, 0x7f, 0x7f),
	rgb(0xbc, 0xbd, 0x22), rgb(0x17, 0xbe, 0xcf),
}

// dashes holds the dash patterns: solid for the first len(palette)
// policies, then the next patterns as the colours come round again.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

// shapes holds the markers, cycled independently of the colours so that
// policies sharing a colour still differ; the filled ones first, which
// show best.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
	draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

func rgb(r, g, b uint8) color.Color { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

// policyStyle returns the line and marker style of the i-th policy (i
// counting only the policies that are not opt or opt-bypass).
func policyStyle(name string, i int) (draw.LineStyle, draw.GlyphStyle) {
	line := draw.LineStyle{Width: vg.Points(lineWidth)}
	glyph := draw.GlyphStyle{Radius: vg.Points(markRadius)}
	switch name {
	case sim.NameOPT:
		line.Color, line.Dashes = color.Black, []vg.Length{vg.Points(7), vg.Points(4)}
		glyph.Shape = draw.CircleGlyph{}
	case sim.NameOPTBypass:
		line.Color, line.Dashes = rgb(0x70, 0x70, 0x70), []vg.Length{vg.Points(2), vg.Points(3)}
		glyph.Shape = draw.RingGlyph{}
	default:
		line.Color = palette[i%len(palette)]
		line.Dashes = dashes[(i/len(palette))%len(dashes)]
		glyph.Shape = shapes[i%len(shapes)]
		if name == "default" {
			line.Width = vg.Points(2.5) // the one users get
		}
	}
	glyph.Color = line.Color
	return line, glyph
}

// writeChart draws the chart of rows in format (svg, png or pdf) to w.
func writeChart(w io.Writer, format string, rows []simRow) error {
	var traces, policies []string
	for _, r := range rows {
		if !slices.Contains(traces, r.Trace) {
			traces = append(traces, r.Trace)
		}
		if !slices.Contains(policies, r.Policy) {
			policies = append(policies, r.Policy)
		}
	}
	if len(traces) == 0 {
		return errors.New("no results to chart")
	}
	legend := chartLegend(policies)
	// The legend's width, with room for a wider font than Liberation Sans
	// where an SVG viewer lacks it.
	legendW := legend.Rectangle(draw.Canvas{}).Size().X * 1.15
	// A panel is tall enough for its legend.
	ph := max(panelH, legend.Rectangle(draw.Canvas{}).Size().Y+2*vg.Inch)
	height := vg.Length(len(traces))*ph + vg.Length(len(traces)+1)*chartPad

	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(chartW, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartW, height), vgimg.UseDPI(pngDPI))}
	case "pdf":
		c = vgpdf.New(chartW, height)
	default:
		return fmt.Errorf("unknown chart format %q", format)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	plots := make([][]*plot.Plot, len(traces))
	for i, tr := range traces {
		var mine []simRow
		for _, r := range rows {
			if r.Trace == tr {
				mine = append(mine, r)
			}
		}
		p, err := chartPanel(tr, mine, policies, chartW-legendW-legendGap-2*chartPad)
		if err != nil {
			return err
		}
		plots[i] = []*plot.Plot{p}
	}
	// The plot areas take the width the legends leave, aligned with each
	// other.
	area := draw.Crop(dc, 0, -(legendW + legendGap), 0, 0)
	tiles := draw.Tiles{Rows: len(traces), Cols: 1,
		PadTop: chartPad, PadBottom: chartPad, PadLeft: chartPad, PadRight: 0, PadY: chartPad}
	for i, cs := range plot.Align(plots, tiles, area) {
		p := plots[i][0]
		p.Draw(cs[0])
		data := p.DataCanvas(cs[0])
		lc := dc
		lc.Min = vg.Point{X: data.Max.X + legendGap, Y: data.Min.Y}
		lc.Max = vg.Point{X: dc.Max.X - chartPad, Y: data.Max.Y}
		legend.Draw(lc)
	}
	if format != "svg" {
		_, err := c.WriteTo(w)
		return err
	}
	// The SVG names its fonts but does not embed them (that would add
	// some 700 kB): let viewers without Liberation Sans fall back on a
	// sans-serif font, Arial's metrics being Liberation Sans's.
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	_, err := w.Write(bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")))
	return err
}

// chartLegend returns the legend of the policies: a line and its marker,
// then the name, from the top.
func chartLegend(policies []string) plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font = font.From(sans, legendSize)
	l.ThumbnailWidth = vg.Points(30)
	l.Padding = vg.Points(3)
	i := 0
	for _, p := range policies {
		line, glyph := policyStyle(p, i)
		if p != sim.NameOPT && p != sim.NameOPTBypass {
			i++
		}
		l.Add(p, lineThumb{line}, glyphThumb{glyph})
	}
	return l
}

// lineThumb and glyphThumb draw a legend entry's line and marker.
type lineThumb struct{ draw.LineStyle }

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(t.LineStyle, c.Min.X, y, c.Max.X, y)
}

type glyphThumb struct{ draw.GlyphStyle }

func (t glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(t.GlyphStyle, c.Center()) }

// chartPanel returns the plot of one trace's rows, the legend aside;
// width is about the panel's width, for spacing the capacities' labels.
func chartPanel(trace string, rows []simRow, policies []string, width vg.Length) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = trace
	// Not bold: gonum's PDF canvas (v0.17.0) fails on bold fonts
	// ("undefined font: liberationsans-bold B").
	p.Title.TextStyle.Font = font.From(sans, titleSize)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = "capacity (entries)"
	p.Y.Label.Text = "hit ratio (%)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelSize)
		a.Tick.Label.Font = font.From(sans, tickSize)
	}

	// The capacities as given (labelled exactly, even past 2^53, where
	// float64 would round them); as float64 only for their positions.
	var caps []int
	lo, hi := 100.0, 0.0
	for _, r := range rows {
		if !slices.Contains(caps, r.Capacity) {
			caps = append(caps, r.Capacity)
		}
		lo, hi = min(lo, 100*r.HitRatio), max(hi, 100*r.HitRatio)
	}
	slices.Sort(caps)
	cmin, cmax := float64(caps[0]), float64(caps[len(caps)-1])
	logX := cmax >= 10*cmin
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Label.Text = "capacity (entries, log scale)"
	}
	if cmin == cmax {
		p.X.Min, p.X.Max = cmin/2, cmax*3/2
	} else {
		p.X.Min, p.X.Max = cmin, cmax
	}
	p.X.Tick.Marker = capacityTicks{caps: caps, log: logX, width: width}
	// y: from lo to hi rounded out to a step, within 0..100.
	step := niceStep(hi - lo)
	if hi == lo {
		step = 1 // not 0.1 for a flat line
	}
	p.Y.Min = max(0, math.Floor(lo/step)*step)
	p.Y.Max = min(100, math.Ceil(hi/step)*step)
	if p.Y.Max <= p.Y.Min {
		p.Y.Min, p.Y.Max = max(0, p.Y.Min-step), min(100, p.Y.Max+step)
	}
	p.Y.Tick.Marker = stepTicks(step)

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe0}
	grid.Horizontal.Color = color.Gray{Y: 0xe0}
	p.Add(grid)
	// The lines: opt and opt-bypass first, underneath; the default policy
	// last, on top.
	type series struct {
		line   *plotter.Line
		points *plotter.Scatter
	}
	var under, over, top []series
	i := 0
	for _, name := range policies {
		var xys plotter.XYs
		for _, r := range rows {
			if r.Policy == name {
				xys = append(xys, plotter.XY{X: float64(r.Capacity), Y: 100 * r.HitRatio})
			}
		}
		line, glyph := policyStyle(name, i)
		if name != sim.NameOPT && name != sim.NameOPTBypass {
			i++
		}
		if len(xys) == 0 {
			continue
		}
		// Along the x axis: the rows come in the order the capacities
		// were given, which a line must not zigzag through.
		slices.SortFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("chart of %s, %s: %v", trace, name, err)
		}
		l.LineStyle, s.GlyphStyle = line, glyph
		switch name {
		case sim.NameOPT, sim.NameOPTBypass:
			under = append(under, series{l, s})
		case "default":
			top = append(top, series{l, s})
		default:
			over = append(over, series{l, s})
		}
	}
	// Add widens the axes to the data, which they already hold.
	for _, s := range slices.Concat(under, over, top) {
		p.Add(s.line, s.points)
	}
	return p, nil
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts span
// (in percentage points) into at most 10 intervals, and at least 0.1.
func niceStep(span float64) float64 {
	for _, s := range []float64{0.1, 0.2, 0.5, 1, 2, 5, 10} {
		if span <= 10*s {
			return s
		}
	}
	return 20
}

// stepTicks marks every multiple of a step (a major tick with its label)
// and the halves between them.
type stepTicks float64

func (s stepTicks) Ticks(lo, hi float64) []plot.Tick {
	step := float64(s)
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for k := math.Ceil(lo/step*2 - 1e-9); k/2*step <= hi+1e-9; k++ {
		t := plot.Tick{Value: k / 2 * step}
		if t.Value == 0 {
			t.Value = 0 // not -0
		}
		if int(k)%2 == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', prec, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// capacityTicks marks each capacity of the chart, and labels those that
// leave room for their label after the previous one on an axis of about
// width points.
type capacityTicks struct {
	caps  []int
	log   bool
	width vg.Length
}

func (t capacityTicks) Ticks(lo, hi float64) []plot.Tick {
	pos := func(v float64) float64 {
		if t.log {
			return float64(t.width) * math.Log(v/lo) / math.Log(hi/lo)
		}
		return float64(t.width) * (v - lo) / (hi - lo)
	}
	// A digit of the tick labels is about 0.56 em wide.
	const digit = 0.56 * tickSize
	var ticks []plot.Tick
	last := math.Inf(-1) // where the last label ends
	for _, c := range t.caps {
		tk := plot.Tick{Value: float64(c)}
		label := strconv.Itoa(c)
		half := digit * float64(len(label)) / 2
		if x := pos(float64(c)); x-half >= last+digit {
			tk.Label, last = label, x+half
		}
		ticks = append(ticks, tk)
	}
	return ticks
}
