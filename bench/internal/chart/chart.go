// Package chart draws the benchmark documents' charts with gonum/plot:
// horizontal bar charts (one group of bars per cache) and line charts
// against a logarithmic axis. The format follows the file's extension
// (.png or .svg).
package chart

import (
	"bytes"
	"fmt"
	"image/color"
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

	"github.com/cachekit/cachekit/bench/internal/report"
)

var textFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// Palette gives series their colours in order.
var Palette = []color.Color{
	rgb(0x1f77b4), rgb(0xff7f0e), rgb(0x2ca02c), rgb(0xd62728),
	rgb(0x9467bd), rgb(0x8c564b), rgb(0xe377c2), rgb(0x7f7f7f),
	rgb(0xbcbd22), rgb(0x17becf), rgb(0x393b79), rgb(0x637939),
}

func rgb(hex uint32) color.Color {
	return color.RGBA{R: uint8(hex >> 16), G: uint8(hex >> 8), B: uint8(hex), A: 0xff}
}

// Bars is a horizontal bar chart: one row per category (a cache), one bar
// per series in each row.
type Bars struct {
	Title      string
	Label      string   // the value axis's label
	Categories []string // rows, top to bottom
	Series     []Series
	// Log draws the value axis on a logarithmic scale, for values that
	// span orders of magnitude (a forced GC of a map of 10M entries and
	// of an empty heap); values must then be positive, others are left
	// out (as missing values are: no bar, not a bar of length 0).
	Log bool
}

// Series is one bar per category, or one line.
type Series struct {
	Name string
	// Values has one value per category of a bar chart (NaN: missing,
	// drawn as no bar at all); for a line chart, one per X (NaN: missing,
	// no point).
	Values []float64
}

// NotMeasured follows the legend name of a series with no value at all
// (every value NaN): the series stays in the legend, so that a chart
// never drops a cache silently.
const NotMeasured = " (not measured)"

const (
	width    = 8 * vg.Inch
	rowSpace = 0.22 * vg.Inch // per bar
)

// WriteFile draws the chart to path.
func (b Bars) WriteFile(path string) error {
	if len(b.Categories) == 0 || len(b.Series) == 0 {
		return fmt.Errorf("chart %q: nothing to draw", b.Title)
	}
	p := newPlot(b.Title)
	p.X.Label.Text = b.Label
	n := len(b.Categories)
	names := make([]string, n)
	for i, c := range b.Categories {
		names[n-1-i] = c // the first category at the top
	}
	barW := rowSpace * 0.9
	groups := len(b.Series)
	// With Log, a value v is drawn as a bar of length log10(v/floor),
	// floor being the decade below the smallest value, and the axis is
	// labelled with the decades' values.
	floor := 0.0
	top := 0.0
	if b.Log {
		lo := math.Inf(1)
		for _, s := range b.Series {
			for _, v := range s.Values {
				if v > 0 && !math.IsInf(v, 0) {
					lo = min(lo, v)
				}
			}
		}
		if math.IsInf(lo, 1) {
			return fmt.Errorf("chart %q: no positive value for a logarithmic axis", b.Title)
		}
		floor = math.Floor(math.Log10(lo))
	}
	for si, s := range b.Series {
		if len(s.Values) != n {
			return fmt.Errorf("chart %q: series %q has %d values for %d categories", b.Title, s.Name, len(s.Values), n)
		}
		vals := make([]float64, n) // bottom to top; NaN: missing
		for i, v := range s.Values {
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (b.Log && v == 0):
				v = math.NaN() // missing
			case b.Log:
				v = math.Log10(v) - floor
			}
			vals[n-1-i] = v
			if !math.IsNaN(v) {
				top = max(top, v)
			}
		}
		// One bar chart per run of present values, so that a missing
		// value leaves a gap; the legend names the series once.
		inLegend := false
		for _, run := range presentRuns(vals) {
			bc, err := plotter.NewBarChart(plotter.Values(vals[run[0]:run[1]]), barW)
			if err != nil {
				return fmt.Errorf("chart %q: %w", b.Title, err)
			}
			bc.XMin = float64(run[0])
			bc.Horizontal = true
			bc.Color = Palette[si%len(Palette)]
			bc.LineStyle.Width = 0
			// Series top to bottom within a row, centred on the row.
			bc.Offset = vg.Length(float64(groups-1)/2-float64(si)) * barW
			p.Add(bc)
			if groups > 1 && !inLegend {
				p.Legend.Add(s.Name, bc)
				inLegend = true
			}
		}
		// A series without a single bar keeps its legend entry, in its
		// colour, marked as not measured: the least surprising, since
		// leaving it out would drop it from the chart without a word.
		// (With a single series there is no legend; the categories keep
		// their rows, empty.)
		if groups > 1 && !inLegend {
			why := NotMeasured
			if slices.ContainsFunc(s.Values, func(v float64) bool { return !math.IsNaN(v) }) {
				why = " (no bar drawn)" // values that cannot be drawn: negative, infinite, or 0 on a logarithmic axis
			}
			p.Legend.Add(s.Name+why, &plotter.BarChart{Color: Palette[si%len(Palette)]})
		}
	}
	// Every category keeps its row, even one without a bar at the top or
	// the bottom.
	p.Y.Min = min(p.Y.Min, 0)
	p.Y.Max = max(p.Y.Max, float64(n-1))
	p.X.Min = 0
	// Room on the right for the legend, so that it covers no bar.
	p.X.Max = top * 1.3
	if b.Log {
		p.X.Max = top * 1.25
		var ticks []plot.Tick
		for k := 0.0; k <= p.X.Max; k++ {
			ticks = append(ticks, plot.Tick{Value: k, Label: decade(floor + k)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	} else {
		p.X.Tick.Marker = plot.ConstantTicks(linearTicks(p.X.Max))
	}
	p.NominalY(names...)
	p.Legend.Top = true
	p.Legend.Left = false
	grid := plotter.NewGrid()
	grid.Horizontal.Width = 0
	grid.Vertical.Color = color.Gray{Y: 0xe0}
	p.Add(grid)
	height := vg.Inch + vg.Length(n*max(groups, 1))*rowSpace + vg.Length(n)*rowSpace/2
	return save(p, width, height, path)
}

// presentRuns returns the runs of values that are not NaN, as [start,
// end) index pairs in order.
func presentRuns(vals []float64) [][2]int {
	var runs [][2]int
	for i := 0; i < len(vals); {
		if math.IsNaN(vals[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(vals) && !math.IsNaN(vals[j]) {
			j++
		}
		runs = append(runs, [2]int{i, j})
		i = j
	}
	return runs
}

// linearTicks returns labelled ticks from 0 to at most top, three to eight
// of them, a round step apart (1, 2 or 5 times a power of ten), with an
// unlabelled tick between each two. (gonum's default marker labels as few
// as two ticks on an axis such as 0 to 290.)
func linearTicks(top float64) []plot.Tick {
	if !(top > 0) || math.IsInf(top, 0) {
		return []plot.Tick{{Value: 0, Label: "0"}}
	}
	pow := math.Pow(10, math.Floor(math.Log10(top/6)))
	step := pow
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * pow; top/step <= 7 {
			break
		}
	}
	// As many decimals as the step has (0.2: one; 50: none), trailing
	// zeros dropped.
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := 0.0; i*step <= top*(1+1e-9); i++ {
		v := i * step
		label := strconv.FormatFloat(v, 'f', decimals, 64)
		if decimals > 0 {
			label = strings.TrimSuffix(strings.TrimRight(label, "0"), ".")
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
		if mid := v + step/2; mid <= top {
			ticks = append(ticks, plot.Tick{Value: mid})
		}
	}
	return ticks
}

// decade labels 10^e: "0.01", "1", "1000", "1e+06".
func decade(e float64) string {
	v := math.Pow(10, e)
	if e >= 6 || e <= -4 {
		return fmt.Sprintf("%g", v)
	}
	return strconvFloat(v)
}

func strconvFloat(v float64) string {
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Lines is a line chart of series against X, each series with a value
// per X (NaN: missing).
type Lines struct {
	Title  string
	XLabel string
	YLabel string
	X      []float64
	LogX   bool
	Series []Series
	// YMax, if positive, is the top of the Y axis: points above it are
	// left out (the chart says so in its title, the table has them).
	YMax float64
}

// WriteFile draws the chart to path.
func (l Lines) WriteFile(path string) error {
	if len(l.X) == 0 || len(l.Series) == 0 {
		return fmt.Errorf("chart %q: nothing to draw", l.Title)
	}
	p := newPlot(l.Title)
	p.X.Label.Text = l.XLabel
	p.Y.Label.Text = l.YLabel
	if l.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.RingGlyph{},
		draw.CrossGlyph{}, draw.PlusGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}
	for si, s := range l.Series {
		if len(s.Values) != len(l.X) {
			return fmt.Errorf("chart %q: series %q has %d values for %d points", l.Title, s.Name, len(s.Values), len(l.X))
		}
		var pts plotter.XYs
		for i, v := range s.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) && (l.YMax <= 0 || v <= l.YMax) {
				pts = append(pts, plotter.XY{X: l.X[i], Y: v})
			}
		}
		c := Palette[si%len(Palette)]
		if len(pts) == 0 {
			// No point to draw: the series keeps its legend entry (a
			// line of its colour), saying why, rather than vanish from
			// the chart without a word.
			why := NotMeasured
			if slices.ContainsFunc(s.Values, func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }) {
				why = " (above the axis)" // every value is above YMax
			}
			p.Legend.Add(s.Name+why, &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: 2}})
			continue
		}
		line, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("chart %q: %w", l.Title, err)
		}
		line.Color = c
		line.Width = 2
		sc.Color = c
		sc.Shape = shapes[si%len(shapes)]
		sc.Radius = 3.5
		p.Add(line, sc)
		p.Legend.Add(s.Name, line, sc)
	}
	// The X axis spans every point of the chart, drawn or not: with every
	// value above YMax no series gives it a range, and a log scale of
	// the empty range 0..0 cannot be drawn.
	p.X.Min = math.Min(p.X.Min, slices.Min(l.X))
	p.X.Max = math.Max(p.X.Max, slices.Max(l.X))
	p.Y.Min = 0
	if l.YMax > 0 {
		p.Y.Max = l.YMax
	}
	p.Legend.Top = true
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe0}
	grid.Horizontal.Color = color.Gray{Y: 0xe0}
	p.Add(grid)
	return save(p, width, 4.5*vg.Inch, path)
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(textFont, 13)
	p.Title.Padding = 6
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(textFont, 11)
		a.Tick.Label.Font = font.From(textFont, 10)
	}
	p.Legend.TextStyle.Font = font.From(textFont, 10)
	return p
}

const leftMargin = 0.25 * vg.Inch

func save(p *plot.Plot, w, h vg.Length, path string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format != "png" && format != "svg" {
		return fmt.Errorf("chart: %s: unknown format %q (want .png or .svg)", path, format)
	}
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	// A margin on the left: gonum measures the widest category label a
	// little short, and drawn to the edge its first letter was cut off.
	p.Draw(draw.Crop(draw.New(c), leftMargin, 0, 0, 0))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return report.WriteFile(path, buf.Bytes())
}
