package hitratio

import (
	"strings"
	"testing"
)

// The table of the points behind the best peer is introduced with "where
// default or cache is more than 0.1 point below", the singular verb two
// singular subjects joined by "or" take: it said "default or cache are".
func TestBehindDefaultOrCacheIsSingular(t *testing.T) {
	traces := []TraceInfo{
		{TraceSpec: TraceSpec{Name: "t", Family: FamilySkew, About: "t", Capacities: []int{10, 100}}, Requests: 10000, Unique: 500},
	}
	rs := pointResults(t, 1, traces, map[string][]float64{
		NameDefault: {40, 60},
		NameCache:   {40, 60},
		"otter":     {50, 60},
	}, []string{NameDefault, NameCache, "otter"})
	var b strings.Builder
	writeSummary(&b, rs)
	md := b.String()
	if strings.Contains(md, "default or cache are") {
		t.Errorf("the table's introduction says \"default or cache are\":\n%s", md)
	}
	if want := "The 1 point where default or cache is more than 0.1 point below the best peer"; !strings.Contains(md, want) {
		t.Errorf("the table's introduction does not say %q:\n%s", want, md)
	}
	// Two points behind: the same agreement.
	rs = pointResults(t, 1, traces, map[string][]float64{
		NameDefault: {40, 50},
		NameCache:   {40, 50},
		"otter":     {50, 60},
	}, []string{NameDefault, NameCache, "otter"})
	b.Reset()
	writeSummary(&b, rs)
	if md := b.String(); !strings.Contains(md, "The 2 points where default or cache is more than 0.1 point below") {
		t.Errorf("the table's introduction (2 points) has the wrong verb:\n%s", md)
	}
}

// With two caches best at every point the summary says "default and
// otter are the best at every point": the verb did not follow the number
// of names, and it said "default and otter is".
func TestBestEverywhereTwoCachesArePlural(t *testing.T) {
	traces := []TraceInfo{
		{TraceSpec: TraceSpec{Name: "t", Family: FamilySkew, About: "t", Capacities: []int{10}}, Requests: 10000, Unique: 500},
	}
	rs := pointResults(t, 1, traces, map[string][]float64{NameDefault: {50}, "otter": {50}, "lru": {30}},
		[]string{NameDefault, "lru", "otter"})
	text := summaryText(rs, rs.Summaries())
	if want := "default and otter are the best at every point."; !strings.Contains(text, want) {
		t.Errorf("the summary does not say %q:\n%s", want, text)
	}
	rs = pointResults(t, 1, traces, map[string][]float64{NameDefault: {50}, "otter": {40}, "lru": {30}},
		[]string{NameDefault, "lru", "otter"})
	if text := summaryText(rs, rs.Summaries()); !strings.Contains(text, "default is the best at every point.") {
		t.Errorf("the summary does not say the default alone is the best everywhere:\n%s", text)
	}
}

// When a single cache gets nothing below the loop's length the loop text
// says "lru hits less than 1% of the requests", and "lru, fifo hit" for
// two: the verb was always the plural "hit" (while the next clause says
// "the default hits").
func TestLoopTextOneCacheHits(t *testing.T) {
	traces := []TraceInfo{
		{TraceSpec: TraceSpec{Name: "lirs-loop", Family: FamilyLoop, About: "loop", Capacities: []int{250, 1250}}, Requests: 10000, Unique: 1011},
	}
	rs := pointResults(t, 1, traces, map[string][]float64{
		NameDefault: {20, 99},
		"lru":       {0.5, 99},
		"otter":     {20, 99},
	}, []string{NameDefault, "lru", "otter"})
	text := rs.loopText(traces)
	if !strings.Contains(text, "lru hits less than 1% of the requests") {
		t.Errorf("the loop text does not say \"lru hits less than 1%%\":\n%s", text)
	}
	rs = pointResults(t, 1, traces, map[string][]float64{
		NameDefault: {20, 99},
		"lru":       {0.5, 99},
		"fifo":      {0.5, 99},
	}, []string{NameDefault, "lru", "fifo"})
	if text := rs.loopText(traces); !strings.Contains(text, "lru, fifo hit less than 1% of the requests") {
		t.Errorf("the loop text does not say \"lru, fifo hit less than 1%%\":\n%s", text)
	}
}

// The W-TinyLFU and recency bullets name the caches measured (here otter
// and golang-lru's LRU): they always named "the best of otter and
// theine" and "the best of golang-lru's LRU, 2Q and ARC" (and
// "otter/theine" in the list of points), whichever of those caches were
// replayed, so with -caches naming only otter and golang-lru the prose
// described caches the run never measured.
func TestPeerGroupsNameTheCachesMeasured(t *testing.T) {
	traces := []TraceInfo{
		{TraceSpec: TraceSpec{Name: "x-rec", Family: FamilyRecency, About: "rec", Capacities: []int{10, 100}}, Requests: 10000, Unique: 500},
	}
	rs := pointResults(t, 1, traces, map[string][]float64{
		NameDefault:  {40, 50},
		"otter":      {35, 55},
		"golang-lru": {45, 45},
	}, []string{NameDefault, "otter", "golang-lru"})
	md := markdownOf(t, rs)
	b := bullet(md, "LRU/2Q/ARC and W-TinyLFU")
	if b == "" {
		t.Fatalf("no recency bullet:\n%s", md)
	}
	for _, wrong := range []string{"theine", "2Q", "ARC", "the best of"} {
		if strings.Contains(strings.TrimPrefix(b, "- **LRU/2Q/ARC and W-TinyLFU**:"), wrong) {
			t.Errorf("the bullet names %q, which the run did not measure:\n%s", wrong, b)
		}
	}
	if want := "golang-lru's LRU beats otter at 1 of 2 points"; !strings.Contains(b, want) {
		t.Errorf("the bullet does not say %q:\n%s", want, b)
	}
	if want := "x-rec @10 (golang-lru 45.00, otter 35.00, default 40.00)"; !strings.Contains(b, want) {
		t.Errorf("the bullet's points do not say %q:\n%s", want, b)
	}
}
