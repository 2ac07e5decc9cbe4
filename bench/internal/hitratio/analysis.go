package hitratio

import (
	"math"
	"slices"
)

// Point is a (trace, capacity) pair of the suite.
type Point struct {
	Trace    string `json:"trace"`
	Capacity int    `json:"capacity"`
}

// Points returns every (trace, capacity) point of the results, in suite
// order.
func (rs *Results) Points() []Point {
	var out []Point
	for _, t := range rs.Traces {
		for _, c := range t.Capacities {
			out = append(out, Point{t.Name, c})
		}
	}
	return out
}

// names returns the names of the caches of kind k (all kinds if k is
// empty), in report order.
func (rs *Results) names(kinds ...Kind) []string {
	var out []string
	for _, c := range rs.Caches {
		if len(kinds) == 0 || slices.Contains(kinds, c.Kind) {
			out = append(out, c.Name)
		}
	}
	return out
}

// Peers returns the names of the peers, in report order.
func (rs *Results) Peers() []string { return rs.names(KindPeer) }

// Others returns the names of our caches other than the default policy and
// the real Cache, in report order.
func (rs *Results) Others() []string {
	var out []string
	for _, n := range rs.names(KindOurs) {
		if n != NameDefault && n != NameCache {
			out = append(out, n)
		}
	}
	return out
}

// Contenders returns the names of every cache that is not an optimum.
func (rs *Results) Contenders() []string { return rs.names(KindOurs, KindPeer) }

// has reports whether cache was replayed.
func (rs *Results) has(cache string) bool { return slices.Contains(rs.names(), cache) }

// Best returns the highest hit ratio (in %) at p among caches, and the
// caches that reach it at the report's precision (hundredths of a point),
// in the order of caches. ok is false if none of them was measured at p.
func (rs *Results) Best(p Point, caches []string) (best float64, who []string, ok bool) {
	best = math.Inf(-1)
	for _, c := range caches {
		if h, measured := rs.Ratio(p.Trace, p.Capacity, c); measured && h > best {
			best, ok = h, true
		}
	}
	if !ok {
		return 0, nil, false
	}
	for _, c := range caches {
		if h, measured := rs.Ratio(p.Trace, p.Capacity, c); measured && same(h, best) {
			who = append(who, c)
		}
	}
	return best, who, true
}

// same reports whether two hit ratios in % are equal at the report's
// precision, which is how ties are counted: whether they print the same
// (pct), so that a tie is exactly what a reader sees as one (rounding by
// math.Round instead would split 0.125, printed 0.12, from 0.12).
func same(a, b float64) bool { return pct(a) == pct(b) }

// Summary is one cache's figures over every point of the suite.
type Summary struct {
	Cache string
	Kind  Kind
	// Points is the number of points where the cache was measured; the
	// means are over those.
	Points int
	Mean   float64 // mean hit ratio, %
	// Best is the number of points where no other contender (optima
	// aside) does better; ties count for each.
	Best int
	// GapOPTBypass and GapOPT are the mean distances to the optima, in
	// points (NaN when the optimum was not replayed).
	GapOPTBypass, GapOPT float64
	// BelowPeer is the number of points where the cache is more than 0.1
	// point below the best peer; WorstGap is its lowest hit ratio minus
	// the best peer's (negative when behind), at WorstAt. NaN without
	// peers.
	BelowPeer int
	WorstGap  float64
	WorstAt   Point
}

// Tolerance is how far below the best peer (in points) a cache may be
// without counting as behind.
const Tolerance = 0.1

// behind reports whether a cache d points from another (d = its hit ratio
// minus the other's) is more than Tolerance below it, and ahead more than
// Tolerance above. Hit ratios are percentages of whole counts, so the
// comparison allows for the float error of the subtraction: 50.0 - 50.1
// is -0.10000000000000142, exactly Tolerance below, not more.
func behind(d float64) bool { return d < -Tolerance-toleranceSlack }

func ahead(d float64) bool { return d > Tolerance+toleranceSlack }

const toleranceSlack = 1e-9

// Summaries returns a Summary per cache, optima included, in report
// order.
func (rs *Results) Summaries() []Summary {
	points := rs.Points()
	contenders := rs.Contenders()
	peers := rs.Peers()
	var out []Summary
	for _, c := range rs.Caches {
		s := Summary{Cache: c.Name, Kind: c.Kind, GapOPTBypass: math.NaN(), GapOPT: math.NaN(), WorstGap: math.NaN()}
		var sum, gapB, gapO float64
		nB, nO := 0, 0
		for _, p := range points {
			h, ok := rs.Ratio(p.Trace, p.Capacity, c.Name)
			if !ok {
				continue
			}
			s.Points++
			sum += h
			if c.Kind != KindOptimum {
				if _, who, ok := rs.Best(p, contenders); ok && slices.Contains(who, c.Name) {
					s.Best++
				}
			}
			if o, ok := rs.Ratio(p.Trace, p.Capacity, NameOPTBypass); ok {
				gapB += o - h
				nB++
			}
			if o, ok := rs.Ratio(p.Trace, p.Capacity, NameOPT); ok {
				gapO += o - h
				nO++
			}
			if c.Kind == KindPeer || len(peers) == 0 {
				continue
			}
			if bp, _, ok := rs.Best(p, peers); ok {
				d := h - bp
				if behind(d) {
					s.BelowPeer++
				}
				if math.IsNaN(s.WorstGap) || d < s.WorstGap {
					s.WorstGap, s.WorstAt = d, p
				}
			}
		}
		if s.Points > 0 {
			s.Mean = sum / float64(s.Points)
		}
		if nB > 0 {
			s.GapOPTBypass = gapB / float64(nB)
		}
		if nO > 0 {
			s.GapOPT = gapO / float64(nO)
		}
		out = append(out, s)
	}
	return out
}

// BestPeerMean returns the mean over the points of the best peer's hit
// ratio at each, or NaN without peers.
func (rs *Results) BestPeerMean() float64 {
	peers := rs.Peers()
	var sum float64
	n := 0
	for _, p := range rs.Points() {
		if b, _, ok := rs.Best(p, peers); ok {
			sum += b
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// MaxSpread returns, for a cache replayed several times, the widest
// spread (highest minus lowest run, in points) over all points and where.
func (rs *Results) MaxSpread(cache string) (spread float64, at Point) {
	for _, r := range rs.Results {
		if r.Cache != cache || len(r.Hits) < 2 {
			continue
		}
		lo, hi := r.Spread()
		if d := 100 * (hi - lo); d > spread {
			spread, at = d, Point{r.Trace, r.Capacity}
		}
	}
	return spread, at
}
