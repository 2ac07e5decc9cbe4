package hitratio

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
		parts = append(parts, fmt.Sprintf("%s beats %s at %s of %d points (by up to %.2f points, at %s)", a, b, count(c.aWins), n, c.aMax, c.aAt))
	} else {
		parts = append(parts, fmt.Sprintf("%s beats %s at none of the %d points", a, b, n))
	}
	if c.bWins > 0 {
		parts = append(parts, fmt.Sprintf("%s beats %s at %s (by up to %.2f, at %s)", b, a, count(c.bWins), c.bMax, c.bAt))
	}
	if c.ties > 0 {
		parts = append(parts, fmt.Sprintf("%s within %.1f point", count(c.ties), Tolerance))
	}
	return strings.Join(parts, "; ") + "."
}

func count(n int) string {
	if n == 1 {
		return "1"
	}
	return fmt.Sprint(n)
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
	return fmt.Sprintf("over these %d points, %s.", len(points), strings.Join(parts, ", "))
}

// defaultLine compares the default and the Cache with the best peer over
// points.
func (rs *Results) defaultLine(points []Point) string {
	peers := rs.Peers()
	if len(peers) == 0 {
		return ""
	}
	var parts []string
	for _, n := range rs.measured(NameDefault, NameCache) {
		within := 0
		worst, at, leader := math.Inf(1), Point{}, ""
		for _, p := range points {
			h, ok := rs.Ratio(p.Trace, p.Capacity, n)
			bp, who, okP := rs.Best(p, peers)
			if !ok || !okP {
				continue
			}
			d := h - bp
			if !behind(d) {
				within++
			}
			if d < worst {
				worst, at, leader = d, p, who[0]
			}
		}
		s := fmt.Sprintf("%s is at least the best peer minus %.1f at %d of %d points", n, Tolerance, within, len(points))
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

func (rs *Results) mustRatio(p Point, cache string) float64 {
	h, _ := rs.Ratio(p.Trace, p.Capacity, cache)
	return h
}

// familyText opens a family's section: a line on what its traces are,
// then one bullet per comparison.
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
			add("W-TinyLFU and LRU/2Q/ARC", versus(rs.compare(points, tl, rp), "the best of otter and theine", "the best of golang-lru's LRU, 2Q and ARC"))
		}
		add("SIEVE", rs.sieveText(traces))
	case FamilyRecency:
		intro = "A recommendation service, a network file system and an e-commerce site."
		if len(tl) > 0 && len(rp) > 0 {
			add("Where recency wins", versus(rs.compare(points, rp, tl), "the best of golang-lru's LRU, 2Q and ARC", "the best of otter and theine")+" "+rs.recencyPoints(points, rp, tl))
		}
		if len(lfu) > 0 && len(lru) > 0 {
			add("LFU and LRU (ours)", versus(rs.compare(points, lfu, lru), "LFU", "LRU"))
		}
	case FamilySkew:
		intro = "Synthetic skewed popularity, and CDN requests mostly for objects requested once."
		if len(lfu) > 0 && len(lru) > 0 {
			add("Where LFU beats LRU", versus(rs.compare(points, lfu, lru), "LFU", "LRU"))
		}
		if l := rs.measured("golang-lru"); len(tl) > 0 && len(l) > 0 {
			add("W-TinyLFU and LRU", versus(rs.compare(points, tl, l), "the best of otter and theine", "golang-lru"))
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
	// The caches that get (almost) nothing at every capacity below the loop.
	var zero []string
	for _, n := range rs.measured(slices.Concat(lruLike, []string{"lfu", "dlfu", "lrfu", "golang-lru", "2q", "arc"})...) {
		if slices.IndexFunc(below, func(c int) bool { return rs.mustRatio(Point{t.Name, c}, n) >= 1 }) < 0 {
			zero = append(zero, n)
		}
	}
	caps := make([]string, len(below))
	for j, c := range below {
		caps[j] = thousands(c)
	}
	s := fmt.Sprintf("lirs-loop requests the same %s keys in order, over and over; at the capacities below that (%s) ",
		thousands(t.Unique), strings.Join(caps, ", "))
	if len(zero) > 0 {
		s += fmt.Sprintf("%s hit less than 1%% of the requests", strings.Join(zero, ", "))
	} else {
		s += fmt.Sprintf("LRU hits %s%%–%s%%", pct(rs.rangeOver(t.Name, below, "lru", false)), pct(rs.rangeOver(t.Name, below, "lru", true)))
	}
	if rs.has(NameDefault) {
		s += fmt.Sprintf(", while the default hits %s%%–%s%%", pct(rs.rangeOver(t.Name, below, NameDefault, false)), pct(rs.rangeOver(t.Name, below, NameDefault, true)))
		if rs.has(NameOPTBypass) {
			s += fmt.Sprintf(" (OPT-bypass %s%%–%s%%)", pct(rs.rangeOver(t.Name, below, NameOPTBypass, false)), pct(rs.rangeOver(t.Name, below, NameOPTBypass, true)))
		}
	}
	s += "."
	if last := t.Capacities[len(t.Capacities)-1]; last >= t.Unique {
		s += fmt.Sprintf(" At %s, which holds the whole loop, LRU hits %s%%.", thousands(last), pct(rs.mustRatio(Point{t.Name, last}, "lru")))
	}
	return s
}

// rangeOver returns the lowest (or highest) hit ratio of cache over the
// capacities of a trace.
func (rs *Results) rangeOver(trace string, caps []int, cache string, highest bool) float64 {
	v := math.Inf(1)
	if highest {
		v = math.Inf(-1)
	}
	for _, c := range caps {
		h := rs.mustRatio(Point{trace, c}, cache)
		if highest {
			v = max(v, h)
		} else {
			v = min(v, h)
		}
	}
	return v
}

// sieveText points out where SIEVE falls below FIFO at every capacity of a
// trace, by more than 5 points.
func (rs *Results) sieveText(traces []TraceInfo) string {
	if !rs.has("sieve") || !rs.has("fifo") {
		return ""
	}
	var out []string
	for _, t := range traces {
		worse := true
		for _, c := range t.Capacities {
			if rs.mustRatio(Point{t.Name, c}, "sieve") > rs.mustRatio(Point{t.Name, c}, "fifo")-5 {
				worse = false
				break
			}
		}
		if worse {
			s := fmt.Sprintf("it hits %s%%–%s%% on %s, below FIFO (%s%%–%s%%) at every capacity.",
				pct(rs.rangeOver(t.Name, t.Capacities, "sieve", false)), pct(rs.rangeOver(t.Name, t.Capacities, "sieve", true)), t.Name,
				pct(rs.rangeOver(t.Name, t.Capacities, "fifo", false)), pct(rs.rangeOver(t.Name, t.Capacities, "fifo", true)))
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
// W-TinyLFU peers, with the default's figure.
func (rs *Results) recencyPoints(points []Point, rp, tl []string) string {
	var parts []string
	for _, p := range points {
		hr, who, _ := rs.Best(p, rp)
		ht, _, _ := rs.Best(p, tl)
		if !ahead(hr - ht) {
			continue
		}
		s := fmt.Sprintf("%s (%s %s, otter/theine %s", p, who[0], pct(hr), pct(ht))
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
		out = append(out, fmt.Sprintf("%s is the best at every point.", strings.Join(everywhere, " and ")))
	}
	if rs.has(NameDefault) && rs.has(NameCache) {
		worst, at := 0.0, Point{}
		for _, p := range rs.Points() {
			if d := math.Abs(rs.mustRatio(p, NameDefault) - rs.mustRatio(p, NameCache)); d > worst {
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
// Cache is more than Tolerance below the best peer.
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
		p("At every point, %s are at least the best peer minus %.1f point.\n\n", strings.Join(ours, " and "), Tolerance)
		return
	}
	p("The %d points where %s are more than %.1f point below the best peer (gaps in bold are more than %.1f point below):\n\n", len(rows), strings.Join(ours, " or "), Tolerance, Tolerance)
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
			h := rs.mustRatio(r.p, n)
			g := signed(h - r.best)
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
