package hitratio

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/cachekit/cachekit/bench/internal/report"
)

// A Chart is a line chart of hit ratio (%) against capacity, one line per
// series, with its legend in a column on the right of the plot.
type Chart struct {
	Title  string
	Series []Series // in legend order
}

// Series is one cache's line.
type Series struct {
	Name   string
	Points plotter.XYs // capacity, hit ratio in %
	Style  Style
	Z      int // series of higher Z are drawn over those of lower Z
}

// Style is how a series is drawn.
type Style struct {
	Color  color.Color
	Width  vg.Length        // of the line
	Dashes []vg.Length      // nil for a solid line
	Shape  draw.GlyphDrawer // nil for no markers
}

// The chart's geometry and type sizes.
const (
	chartWidth  = 10 * vg.Inch
	chartHeight = 5.4 * vg.Inch
	chartDPI    = 120
	chartMargin = 12 // points, around the chart
	legendGap   = 16 // points, between the plot and its legend
)

var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

func rgb(hex uint32) color.Color {
	return color.RGBA{R: uint8(hex >> 16), G: uint8(hex >> 8), B: uint8(hex), A: 0xff}
}

// styles gives the caches of the trace charts fixed looks, so that a cache
// looks the same in every chart; otherStyle is for the best other policy
// of ours, fallbackStyles for any other cache.
var (
	styles = map[string]Style{
		NameDefault:   {rgb(0x1f77b4), 3, nil, draw.CircleGlyph{}},
		NameCache:     {rgb(0x17becf), 1.5, []vg.Length{6, 3}, draw.BoxGlyph{}},
		"otter":       {rgb(0xd62728), 1.5, nil, draw.TriangleGlyph{}},
		"theine":      {rgb(0xff7f0e), 1.5, nil, draw.SquareGlyph{}},
		"ristretto":   {rgb(0x8c564b), 1.5, nil, draw.RingGlyph{}},
		"golang-lru":  {rgb(0x2ca02c), 1.5, nil, draw.CrossGlyph{}},
		"2q":          {rgb(0xbcbd22), 1.5, []vg.Length{6, 4}, draw.PlusGlyph{}},
		"arc":         {rgb(0xe377c2), 1.5, []vg.Length{2, 3}, draw.SquareGlyph{}},
		NameOPTBypass: {color.Black, 1.5, []vg.Length{2, 3}, nil},
		NameOPT:       {rgb(0x606060), 1.5, []vg.Length{8, 4}, nil},
	}
	// Peers that often coincide (golang-lru, 2Q and ARC on loops) have
	// dashes of different lengths, so that each shows through the others.
	otherStyle     = Style{rgb(0x9467bd), 1.5, []vg.Length{3, 2}, draw.PyramidGlyph{}}
	fallbackStyles = []Style{
		{rgb(0x7f7f7f), 1, []vg.Length{4, 2}, draw.CircleGlyph{}},
		{rgb(0x393b79), 1, []vg.Length{4, 2}, draw.BoxGlyph{}},
		{rgb(0x637939), 1, []vg.Length{4, 2}, draw.TriangleGlyph{}},
	}
)

// TraceChart returns the chart of one trace: the default policy, the real
// Cache, our other policy with the best mean on this trace, the peers and
// OPT-bypass.
func TraceChart(rs *Results, t TraceInfo) Chart {
	ch := Chart{Title: t.Name + ": hit ratio against capacity"}
	var names []string
	for _, c := range traceColumns(rs) {
		if c == "" {
			if o := bestOtherOn(rs, t); o != "" {
				names = append(names, o)
			}
			continue
		}
		names = append(names, c)
	}
	// Drawing order: the optimum underneath, our caches on top.
	z := func(n string) int {
		switch {
		case n == NameOPTBypass || n == NameOPT:
			return 0
		case n == NameDefault:
			return 4
		case n == NameCache:
			return 3
		case slices.Contains(rs.Others(), n):
			return 2
		}
		return 1
	}
	fallback := 0
	for _, n := range names {
		s := Series{Name: display(n), Z: z(n)}
		for _, capacity := range t.Capacities {
			if h, ok := rs.Ratio(t.Name, capacity, n); ok {
				s.Points = append(s.Points, plotter.XY{X: float64(capacity), Y: h})
			}
		}
		switch st, ok := styles[n]; {
		case ok:
			s.Style = st
		case slices.Contains(rs.Others(), n):
			s.Style = otherStyle
			s.Name = n + " (best other of ours)"
		default:
			s.Style = fallbackStyles[fallback%len(fallbackStyles)]
			fallback++
		}
		if len(s.Points) > 0 {
			ch.Series = append(ch.Series, s)
		}
	}
	return ch
}

// bestOtherOn returns our policy other than the default with the best mean
// hit ratio over the trace's capacities, or "".
func bestOtherOn(rs *Results, t TraceInfo) string {
	best, who := math.Inf(-1), ""
	for _, o := range rs.Others() {
		var sum float64
		for _, c := range t.Capacities {
			h, _ := rs.Ratio(t.Name, c, o)
			sum += h
		}
		if sum > best {
			best, who = sum, o
		}
	}
	return who
}

// Write draws the chart in format ("png" or "svg") to w.
func (ch Chart) Write(w io.Writer, format string) error {
	if len(ch.Series) == 0 {
		return fmt.Errorf("chart %q: nothing to draw", ch.Title)
	}
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(chartDPI))}
	case "svg":
		c = vgsvg.New(chartWidth, chartHeight)
	default:
		return fmt.Errorf("unknown chart format %q (want png or svg)", format)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	dc = draw.Crop(dc, chartMargin, -chartMargin, chartMargin, -chartMargin)

	p, err := ch.plot()
	if err != nil {
		return err
	}
	legend := ch.legend()
	lw := legend.Rectangle(draw.Canvas{}).Size().X
	pc := draw.Crop(dc, 0, -(lw + legendGap), 0, 0)
	p.Draw(pc)
	data := p.DataCanvas(pc)
	lc := dc
	lc.Min = vg.Point{X: dc.Max.X - lw, Y: data.Min.Y}
	lc.Max = vg.Point{X: dc.Max.X, Y: data.Max.Y}
	legend.Draw(lc)
	_, err = c.WriteTo(w)
	return err
}

// WriteFile draws the chart to a file, in the format its extension names,
// once it is drawn in full (report.WriteFile): a chart that fails leaves
// the previous run's file as it was.
func (ch Chart) WriteFile(path string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	var b bytes.Buffer
	if err := ch.Write(&b, format); err != nil {
		return err
	}
	return report.WriteFile(path, b.Bytes())
}

func (ch Chart) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = ch.Title
	p.Title.TextStyle.Font = font.From(chartFont, 14)
	p.Title.Padding = 6
	p.X.Label.Text = "capacity (entries)"
	p.Y.Label.Text = "hit ratio (%)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(chartFont, 11)
		a.Tick.Label.Font = font.From(chartFont, 10)
	}

	var xs []float64
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, s := range ch.Series {
		for _, pt := range s.Points {
			if !slices.Contains(xs, pt.X) {
				xs = append(xs, pt.X)
			}
			ylo, yhi = min(ylo, pt.Y), max(yhi, pt.Y)
		}
	}
	slices.Sort(xs)
	xlo, xhi := xs[0], xs[len(xs)-1]
	if xlo <= 0 {
		return nil, fmt.Errorf("chart %q: capacities must be positive", ch.Title)
	}
	log := xhi >= 10*xlo
	switch {
	case log:
		p.X.Scale = plot.LogScale{}
		p.X.Label.Text = "capacity (entries, log scale)"
		p.X.Min, p.X.Max = xlo/1.12, xhi*1.12
	case xlo == xhi:
		p.X.Min, p.X.Max = xlo*0.8, xhi*1.2
	default:
		pad := (xhi - xlo) * 0.04
		p.X.Min, p.X.Max = xlo-pad, xhi+pad
	}
	p.X.Tick.Marker = capacityTicks(xs)

	step := yStep(yhi - ylo)
	p.Y.Min = max(0, math.Floor(ylo/step)*step)
	p.Y.Max = min(100, math.Ceil(yhi/step)*step)
	if p.Y.Max-p.Y.Min < step {
		p.Y.Min, p.Y.Max = max(0, p.Y.Min-step), min(100, p.Y.Max+step)
	}
	p.Y.Tick.Marker = yTicks(step)

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe4}
	grid.Horizontal.Color = color.Gray{Y: 0xe4}
	p.Add(grid)
	drawing := slices.Clone(ch.Series)
	slices.SortStableFunc(drawing, func(a, b Series) int { return a.Z - b.Z })
	for _, s := range drawing {
		l, sc, err := plotter.NewLinePoints(s.Points)
		if err != nil {
			return nil, fmt.Errorf("chart %q, %s: %v", ch.Title, s.Name, err)
		}
		l.LineStyle = s.lineStyle()
		if s.Style.Shape == nil {
			p.Add(l)
			continue
		}
		sc.GlyphStyle = s.glyphStyle()
		p.Add(l, sc)
	}
	// Add widened the axes to the data; keep the rounded ranges.
	p.Y.Min = max(0, math.Floor(ylo/step)*step)
	p.Y.Max = min(100, max(p.Y.Min+step, math.Ceil(yhi/step)*step))
	return p, nil
}

func (s Series) lineStyle() draw.LineStyle {
	return draw.LineStyle{Color: s.Style.Color, Width: s.Style.Width, Dashes: s.Style.Dashes}
}

func (s Series) glyphStyle() draw.GlyphStyle {
	return draw.GlyphStyle{Color: s.Style.Color, Radius: 3.5, Shape: s.Style.Shape}
}

// legend lists the series in order, from the top.
func (ch Chart) legend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(chartFont, 11)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = 32
	l.Padding = 4
	for _, s := range ch.Series {
		if s.Style.Shape == nil {
			l.Add(s.Name, lineThumb{s.lineStyle()})
		} else {
			l.Add(s.Name, lineThumb{s.lineStyle()}, glyphThumb{s.glyphStyle()})
		}
	}
	return l
}

type lineThumb struct{ style draw.LineStyle }

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(t.style, c.Min.X, y, c.Max.X, y)
}

type glyphThumb struct{ style draw.GlyphStyle }

func (t glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(t.style, c.Center()) }

// yStep returns a tick step of 1, 2, 2.5 or 5 times a power of ten giving
// between 4 and 10 intervals over span points.
func yStep(span float64) float64 {
	for _, s := range []float64{0.1, 0.2, 0.5, 1, 2, 2.5, 5, 10} {
		if span <= 8*s {
			return s
		}
	}
	return 20
}

// yTicks labels every multiple of the step.
type yTicks float64

func (s yTicks) Ticks(lo, hi float64) []plot.Tick {
	step := float64(s)
	prec := 0
	if step != math.Trunc(step) {
		prec = 1
	}
	var out []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+1e-9; k++ {
		v := k * step
		if v == 0 { // not -0
			v = 0
		}
		out = append(out, plot.Tick{Value: v, Label: fmt.Sprintf("%.*f", prec, v)})
	}
	return out
}

// capacityTicks labels each capacity of the chart.
type capacityTicks []float64

func (c capacityTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, v := range c {
		if v >= lo && v <= hi {
			out = append(out, plot.Tick{Value: v, Label: thousands(int(v))})
		}
	}
	return out
}

// WriteCharts draws one chart per trace into dir, named prefix + trace +
// ext, and returns each chart's path.
func WriteCharts(rs *Results, dir, prefix, ext string) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range rs.Traces {
		path := filepath.Join(dir, prefix+t.Name+ext)
		if err := TraceChart(rs, t).WriteFile(path); err != nil {
			return nil, err
		}
		out[t.Name] = path
	}
	return out, nil
}
