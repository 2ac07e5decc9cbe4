package hitratio

import (
	"strings"
	"testing"
)

// pointResults builds results of 10,000 requests per point: ratios[cache]
// has one hit ratio (in %) per point of traces, in suite order; a
// negative figure leaves that point unmeasured for the cache. The caches
// are in the order of order.
func pointResults(t *testing.T, runs int, traces []TraceInfo, ratios map[string][]float64, order []string) *Results {
	t.Helper()
	rs := &Results{Runs: runs, Traces: traces}
	pts := pointsOf(traces)
	for _, name := range order {
		c := contender(t, name)
		rs.Caches = append(rs.Caches, c)
		for i, p := range pts {
			v := ratios[name][i]
			if v < 0 {
				continue
			}
			rs.Results = append(rs.Results, &Result{Trace: p.Trace, Capacity: p.Capacity, Cache: name, Kind: c.Kind,
				Requests: 10000, Hits: []uint64{uint64(v*100 + 0.5)}})
		}
	}
	return rs
}

// markdownOf renders rs as the report's Markdown.
func markdownOf(t *testing.T, rs *Results) string {
	t.Helper()
	var b strings.Builder
	if err := WriteMarkdown(&b, Report{Meta: Meta{Command: "x", Parallel: 2, Isolate: true}, Results: rs}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// bullet returns the family bullet with the given bold label, or "".
func bullet(md, label string) string {
	for line := range strings.Lines(md) {
		if strings.HasPrefix(line, "- **"+label+"**:") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// bulletSaying returns the label and the text of the family bullet whose
// text (after the label) starts with text, and false if there is none.
func bulletSaying(md, text string) (label, line string, ok bool) {
	for line := range strings.Lines(md) {
		rest, found := strings.CutPrefix(line, "- **")
		if !found {
			continue
		}
		label, body, found := strings.Cut(rest, "**: ")
		if found && strings.HasPrefix(body, text) {
			return label, strings.TrimSpace(line), true
		}
	}
	return "", "", false
}
