package hitratio

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cachekit/cachekit/bench/internal/report"
)

// The report's prose is generated from the results, so that a new run
// cannot leave a claim behind that its numbers no longer support: every
// sentence below states a comparison computed here, with its figures.

// Names of the groups the commentary compares.
var (
	tinyLFUPeers = []string{"otter", "theine"}               // W-TinyLFU peers
	recencyPeers = []string{"golang-lru", "2q", "arc"}       // LRU and its scan-resistant variants
	lruLike      = []string{"lru", "fifo", "clock", "sieve"} // ours, without frequency
)

func pointsOf(traces []TraceInfo) []Point {
	var out []Point
	for _, t := range traces {
		for _, c := range t.Capacities {
			out = append(out, Point{t.Name, c})
		}
	}
	return out
}

// measured returns the caches of names that were replayed.
func (rs *Results) measured(names ...string) []string {
	var out []string
	for _, n := range names {
		if rs.has(n) {
			out = append(out, n)
		}
	}
	return out
}

// meanOver returns the mean hit ratio of cache over points.
func (rs *Results) meanOver(points []Point, cache string) (float64, bool) {
	var sum float64
	for _, p := range points {
		h, ok := rs.Ratio(p.Trace, p.Capacity, cache)
		if !ok {
			return 0, false
		}
		sum += h
	}
	return sum / float64(len(points)), len(points) > 0
}

// comparison counts the points where one group's best beats the other's
// by more than Tolerance, and the largest margin each way.
type comparison struct {
	aWins, bWins, ties int
	aMax, bMax         float64
	aAt, bAt           Point
}

func (rs *Results) compare(points []Point, a, b []string) comparison {
	var c comparison
	for _, p := range points {
		ha, _, okA := rs.Best(p, a)
		hb, _, okB := rs.Best(p, b)
		if !okA || !okB {
			continue
		}
		switch d := ha - hb; {
		case ahead(d):
			c.aWins++
			if d > c.aMax {
				c.aMax, c.aAt = d, p
			}
		case behind(d):
			c.bWins++
			if -d > c.bMax {
				c.bMax, c.bAt = -d, p
			}
		default:
			c.ties++
		}
	}
	return c
}

// versus describes a comparison in one sentence.
func versus(c comparison, a, b string) string {
	n := c.aWins + c.bWins + c.ties
	if n == 0 {
		return ""
	}
	var parts []string
	if c.aWins > 0 {
		parts = append(parts, fmt.Sprintf("%s beats %s at %d of %s (by up to %.2f points, at %s)", a, b, c.aWins, report.Count(n, "point"), c.aMax, c.aAt))
	} else {
		parts = append(parts, fmt.Sprintf("%s beats %s at none of the %s", a, b, report.Count(n, "point")))
	}
	if c.bWins > 0 {
		parts = append(parts, fmt.Sprintf("%s beats %s at %d (by up to %.2f, at %s)", b, a, c.bWins, c.bMax, c.bAt))
	}
	if c.ties > 0 {
		parts = append(parts, fmt.Sprintf("%d within %.1f point", c.ties, Tolerance))
	}
	return strings.Join(parts, "; ") + "."
}

// are returns the verb for names: "is" for one, "are" for more.
func are(names []string) string {
	if len(names) == 1 {
		return "is"
	}
	return "are"
}

// meansLine lists the mean hit ratio of the main caches over points.
func (rs *Results) meansLine(points []Point) string {
	names := rs.measured(slices.Concat([]string{NameDefault, NameCache}, rs.Peers(), []string{"lru", "lfu", "s3fifo", NameOPTBypass})...)
	var parts []string
	for _, n := range names {
		if m, ok := rs.meanOver(points, n); ok {
			parts = append(parts, fmt.Sprintf("%s %s", display(n), pct(m)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if len(points) == 1 {
		return fmt.Sprintf("at this point, %s.", strings.Join(parts, ", "))
	}
	return fmt.Sprintf("over these %d points, %s.", len(points), strings.Join(parts, ", "))
}

// defaultLine compares the default and the Cache with the best peer over
// the points of points where each was measured, as were some peers.
func (rs *Results) defaultLine(points []Point) string {
	peers := rs.Peers()
	if len(peers) == 0 {
		return ""
	}
	var parts []string
	for _, n := range rs.measured(NameDefault, NameCache) {
		within, compared := 0, 0
		worst, at, leader := math.Inf(1), Point{}, ""
		for _, p := range points {
			h, ok := rs.Ratio(p.Trace, p.Capacity, n)
			bp, who, okP := rs.Best(p, peers)
			if !ok || !okP {
				continue
			}
			compared++
			d := h - bp
			if !behind(d) {
				within++
			}
			if d < worst {
				worst, at, leader = d, p, who[0]
			}
		}
		if compared == 0 {
			continue
		}
		s := fmt.Sprintf("%s is at least the best peer minus %.1f at %d of %s", n, Tolerance, within, report.Count(compared, "point"))
		if behind(worst) {
			s += fmt.Sprintf(" (furthest behind at %s: %s against %s's %s)", at, pct(rs.mustRatio(at, n)), leader, pct(rs.mustRatio(at, leader)))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}

// mustRatio returns cache's hit ratio at p, for a point it is known to
// have been measured at (it returns 0 for one it was not).
func (rs *Results) mustRatio(p Point, cache string) float64 {
	h, _ := rs.Ratio(p.Trace, p.Capacity, cache)
	return h
}

// familyText opens a family's section: a line on what its traces are,
// then one bullet per comparison. A bullet's label names what it compares,
// never who wins: the comparison's own figures say that.
func familyText(rs *Results, f Family, traces []TraceInfo) string {
	points := pointsOf(traces)
	var intro string
	var bullets []string
	add := func(label, s string) {
		if s != "" {
			bullets = append(bullets, fmt.Sprintf("- **%s**: %s", label, s))
		}
	}
	lfu, lru := rs.measured("lfu"), rs.measured("lru")
	tl, rp := rs.measured(tinyLFUPeers...), rs.measured(recencyPeers...)
	// The groups are named after the caches of them that were measured.
	tlName := groupName(tl, nil, "")
	rpName := groupName(rp, map[string]string{"golang-lru": "LRU", "2q": "2Q", "arc": "ARC"}, "golang-lru's")
	switch f {
	case FamilyBlock:
		intro = "Block requests of a database and of disks."
		if len(lfu) > 0 && len(lru) > 0 {
			add("LFU and LRU (ours)", versus(rs.compare(points, lfu, lru), "LFU", "LRU"))
		}
		if s3 := rs.measured("s3fifo"); len(s3) > 0 && rs.has(NameDefault) {
			add("S3-FIFO and our default", versus(rs.compare(points, s3, []string{NameDefault}), "s3fifo", "default"))
		}
	case FamilyLoop:
		intro = "Traces with loops over more keys than the smaller caches hold, and mixes of programs that have them."
		add("Scans hurt LRU", rs.loopText(traces))
		if len(tl) > 0 && len(rp) > 0 {
			add("W-TinyLFU and LRU/2Q/ARC", versus(rs.compare(points, tl, rp), tlName, rpName))
		}
		add("SIEVE", rs.sieveText(traces))
	case FamilyRecency:
		intro = "A recommendation service, a network file system and an e-commerce site."
		if len(tl) > 0 && len(rp) > 0 {
			add("LRU/2Q/ARC and W-TinyLFU", strings.TrimSpace(versus(rs.compare(points, rp, tl), rpName, tlName)+" "+rs.recencyPoints(points, rp, tl)))
		}
		if len(lfu) > 0 && len(lru) > 0 {
			add("LFU and LRU (ours)", versus(rs.compare(points, lfu, lru), "LFU", "LRU"))
		}
	case FamilySkew:
		intro = "Synthetic skewed popularity, and CDN requests mostly for objects requested once."
		if len(lfu) > 0 && len(lru) > 0 {
			add("LFU and LRU (ours)", versus(rs.compare(points, lfu, lru), "LFU", "LRU"))
		}
		if l := rs.measured("golang-lru"); len(tl) > 0 && len(l) > 0 {
			add("W-TinyLFU and LRU", versus(rs.compare(points, tl, l), tlName, "golang-lru"))
		}
	}
	if generated(traces) {
		intro = syntheticIntro[f] // the intros above describe the real traces
	}
	add("Our default and cache", rs.defaultLine(points))
	add("Means", rs.meansLine(points))
	if len(bullets) == 0 {
		return intro
	}
	return intro + "\n\n" + strings.Join(bullets, "\n")
}

// groupName names the best of a group of caches, from those of it that
// were measured (names): "otter", "the best of otter and theine",
// "the best of golang-lru's LRU, 2Q and ARC". label, if not nil, gives a
// cache's name in the phrase, and owner, if not "", comes before them.
func groupName(names []string, label map[string]string, owner string) string {
	var out []string
	for _, n := range names {
		if l, ok := label[n]; ok {
			n = l
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return ""
	}
	list := report.JoinAnd(out)
	if owner != "" {
		list = owner + " " + list
	}
	if len(out) > 1 {
		list = "the best of " + list
	}
	return list
}

// generated reports whether every trace of traces is one of the synthetic
// suite's.
func generated(traces []TraceInfo) bool {
	syn := SyntheticSuite()
	for _, t := range traces {
		if !slices.ContainsFunc(syn, func(s TraceSpec) bool { return s.Name == t.Name }) {
			return false
		}
	}
	return len(traces) > 0
}

// syntheticIntro opens a family's section in the synthetic report.
var syntheticIntro = map[Family]string{
	FamilySkew:    "Generated Zipf popularity, milder and steeper than the real traces'.",
	FamilyRecency: "Generated popularity that moves: the whole key set replaced every so often.",
	FamilyLoop:    "Generated skewed popularity interrupted by scans of new keys, or interleaved with a loop over more keys than the smaller caches hold.",
	FamilyBlock:   "Generated traces.",
}

// loopText describes how the recency caches fare on lirs-loop, the trace
// made of one loop, at the capacities below its length.
func (rs *Results) loopText(traces []TraceInfo) string {
	i := slices.IndexFunc(traces, func(t TraceInfo) bool { return t.Name == "lirs-loop" })
	if i < 0 || !rs.has("lru") {
		return ""
	}
	t := traces[i]
	var below []int // capacities smaller than the loop
	for _, c := range t.Capacities {
		if c < t.Unique {
			below = append(below, c)
		}
	}
	if len(below) == 0 {
		return ""
	}
	// The caches that get (almost) nothing at every capacity below the
	// loop; a cache not measured at one of them is not claimed to.
	var zero []string
	for _, n := range rs.measured(slices.Concat(lruLike, []string{"lfu", "dlfu", "lrfu", "golang-lru", "2q", "arc"})...) {
		if slices.IndexFunc(below, func(c int) bool {
			h, ok := rs.Ratio(t.Name, c, n)
			return !ok || h >= 1
		}) < 0 {
			zero = append(zero, n)
		}
	}
	caps := make([]string, len(below))
	for j, c := range below {
		caps[j] = thousands(c)
	}
	s := fmt.Sprintf("lirs-loop requests the same %s keys in order, over and over; at the capacities below that (%s) ",
		thousands(t.Unique), strings.Join(caps, ", "))
	lru, okLRU := rs.rangeOver(t.Name, below, "lru")
	switch {
	case len(zero) > 0:
		verb := "hit"
		if len(zero) == 1 {
			verb = "hits"
		}
		s += fmt.Sprintf("%s %s less than 1%% of the requests", strings.Join(zero, ", "), verb)
	case okLRU:
		s += fmt.Sprintf("LRU hits %s", lru)
	default:
		return ""
	}
	if def, ok := rs.rangeOver(t.Name, below, NameDefault); ok {
		s += fmt.Sprintf(", while the default hits %s", def)
		if opt, ok := rs.rangeOver(t.Name, below, NameOPTBypass); ok {
			s += fmt.Sprintf(" (OPT-bypass %s)", opt)
		}
	}
	s += "."
	if last := t.Capacities[len(t.Capacities)-1]; last >= t.Unique {
		if h, ok := rs.Ratio(t.Name, last, "lru"); ok {
			s += fmt.Sprintf(" At %s, which holds the whole loop, LRU hits %s%%.", thousands(last), pct(h))
		}
	}
	return s
}

// rangeOver returns the range of the hit ratios of cache over the
// capacities caps of a trace, "lowest%–highest%", skipping those it was
// not measured at; ok is false if it was measured at none.
func (rs *Results) rangeOver(trace string, caps []int, cache string) (text string, ok bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range caps {
		if h, measured := rs.Ratio(trace, c, cache); measured {
			lo, hi, ok = min(lo, h), max(hi, h), true
		}
	}
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s%%–%s%%", pct(lo), pct(hi)), true
}

// sieveText points out where SIEVE falls below FIFO at every capacity of a
// trace, by more than 5 points.
func (rs *Results) sieveText(traces []TraceInfo) string {
	if !rs.has("sieve") || !rs.has("fifo") {
		return ""
	}
	var out []string
	for _, t := range traces {
		// The capacities where both were measured: a point missing
		// either proves nothing.
		var caps []int
		worse := true
		for _, c := range t.Capacities {
			hs, okS := rs.Ratio(t.Name, c, "sieve")
			hf, okF := rs.Ratio(t.Name, c, "fifo")
			if !okS || !okF {
				continue
			}
			caps = append(caps, c)
			if hs > hf-5 {
				worse = false
				break
			}
		}
		if worse && len(caps) > 0 {
			sieve, _ := rs.rangeOver(t.Name, caps, "sieve")
			fifo, _ := rs.rangeOver(t.Name, caps, "fifo")
			s := fmt.Sprintf("it hits %s on %s, below FIFO (%s) at every capacity", sieve, t.Name, fifo)
			if len(caps) < len(t.Capacities) {
				s += " where both were measured"
			}
			s += "."
			if t.Name == "mixed" {
				s += " In corda-vaultservice, the first and last parts of mixed, half the keys come back once, a few dozen requests later, and the others never; " +
					"SIEVE's hand, once it has cleared the visited bits, stays among the newest entries and evicts them before their second request."
			}
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// recencyPoints lists the points where the recency caches lead the
// W-TinyLFU peers (both measured there), with the default's figure.
func (rs *Results) recencyPoints(points []Point, rp, tl []string) string {
	var parts []string
	for _, p := range points {
		hr, who, okR := rs.Best(p, rp)
		ht, _, okT := rs.Best(p, tl)
		if !okR || !okT || !ahead(hr-ht) {
			continue
		}
		s := fmt.Sprintf("%s (%s %s, %s %s", p, who[0], pct(hr), strings.Join(tl, "/"), pct(ht))
		if h, ok := rs.Ratio(p.Trace, p.Capacity, NameDefault); ok {
			s += fmt.Sprintf(", default %s", pct(h))
		}
		parts = append(parts, s+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Those points: " + strings.Join(parts, "; ") + "."
}

// summaryText follows the summary table.
func summaryText(rs *Results, sums []Summary) string {
	var out []string
	var best []string
	bestMean := math.Inf(-1)
	everywhere := []string{}
	n := len(rs.Points())
	for _, s := range sums {
		if s.Kind != KindOptimum {
			bestMean = max(bestMean, s.Mean)
		}
	}
	// The ties are those equal to the highest mean at the report's
	// precision, as the summary table bolds them, whatever their order.
	for _, s := range sums {
		if s.Kind == KindOptimum {
			continue
		}
		if same(s.Mean, bestMean) {
			best = append(best, s.Cache)
		}
		if s.Best == n {
			everywhere = append(everywhere, s.Cache)
		}
	}
	if len(best) > 0 {
		out = append(out, fmt.Sprintf("The best mean is %s's (%s).", strings.Join(best, " and "), pct(bestMean)))
	}
	if len(everywhere) == 0 {
		out = append(out, "No cache is the best at every point.")
	} else {
		out = append(out, fmt.Sprintf("%s %s the best at every point.", strings.Join(everywhere, " and "), are(everywhere)))
	}
	if rs.has(NameDefault) && rs.has(NameCache) {
		worst, at := 0.0, Point{}
		for _, p := range rs.Points() {
			hd, okD := rs.Ratio(p.Trace, p.Capacity, NameDefault)
			hc, okC := rs.Ratio(p.Trace, p.Capacity, NameCache)
			if !okD || !okC {
				continue
			}
			if d := math.Abs(hd - hc); d > worst {
				worst, at = d, p
			}
		}
		if worst > 0.5 {
			out = append(out, fmt.Sprintf("The default policy driven directly and the real Cache run the same policy, but their figures differ by up to %.2f points (%s: default %s, cache %s).",
				worst, at, pct(rs.mustRatio(at, NameDefault)), pct(rs.mustRatio(at, NameCache))))
		}
	}
	return strings.Join(out, " ")
}

// writeBehind writes the table of the points where the default or the
// Cache is more than Tolerance below the best peer; a cell of one not
// measured at such a point is left blank.
func writeBehind(p func(string, ...any), rs *Results) {
	peers := rs.Peers()
	ours := rs.measured(NameDefault, NameCache)
	if len(peers) == 0 || len(ours) == 0 {
		return
	}
	type row struct {
		p    Point
		best float64
		who  []string
	}
	var rows []row
	for _, pt := range rs.Points() {
		bp, who, ok := rs.Best(pt, peers)
		if !ok {
			continue
		}
		for _, n := range ours {
			if h, ok := rs.Ratio(pt.Trace, pt.Capacity, n); ok && behind(h-bp) {
				rows = append(rows, row{pt, bp, who})
				break
			}
		}
	}
	if len(rows) == 0 {
		p("At every point, %s %s at least the best peer minus %.1f point.\n\n", strings.Join(ours, " and "), are(ours), Tolerance)
		return
	}
	// Names joined by "or" take the singular: "default or cache is".
	if len(rows) == 1 {
		p("The 1 point where %s is more than %.1f point below the best peer (a gap in bold is more than %.1f point below):\n\n", strings.Join(ours, " or "), Tolerance, Tolerance)
	} else {
		p("The %d points where %s is more than %.1f point below the best peer (gaps in bold are more than %.1f point below):\n\n", len(rows), strings.Join(ours, " or "), Tolerance, Tolerance)
	}
	p("| trace @ capacity | best peer |")
	for _, n := range ours {
		p(" %s | gap |", n)
	}
	p(" best of ours | OPT-bypass |\n|---|---|")
	for range ours {
		p("---:|---:|")
	}
	p("---|---:|\n")
	for _, r := range rows {
		p("| %s | %s %s |", r.p, pct(r.best), strings.Join(r.who, ", "))
		for _, n := range ours {
			h, ok := rs.Ratio(r.p.Trace, r.p.Capacity, n)
			if !ok {
				p(" | |")
				continue
			}
			g := report.Signed(h - r.best)
			if behind(h - r.best) {
				g = "**" + g + "**"
			}
			p(" %s | %s |", pct(h), g)
		}
		hb, who, _ := rs.Best(r.p, rs.names(KindOurs))
		p(" %s %s |", pct(hb), strings.Join(who, ", "))
		if h, ok := rs.Ratio(r.p.Trace, r.p.Capacity, NameOPTBypass); ok {
			p(" %s |\n", pct(h))
		} else {
			p(" |\n")
		}
	}
	p("\n")
}
