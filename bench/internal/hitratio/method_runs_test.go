package hitratio

import (
	"strings"
	"testing"
)

// With -runs 1 the method said the random caches "are replayed 1 times;
// each figure is the mean of the runs", though each was replayed once and
// nothing was averaged; it now says their figures are single runs.
func TestMethodWithOneRun(t *testing.T) {
	rs := &Results{Runs: 1}
	for _, name := range []string{NameDefault, NameCache, "otter"} {
		rs.Caches = append(rs.Caches, contender(t, name))
	}
	var b strings.Builder
	writeMethod(&b, rs, Meta{Parallel: 2, Isolate: true})
	md := b.String()
	if strings.Contains(md, "replayed 1 times") || strings.Contains(md, "each figure is the mean of the runs") {
		t.Errorf("a report of single runs says they were repeated and averaged:\n%s", md)
	}
	if !strings.Contains(md, "(cache, otter) is a single run") {
		t.Errorf("the method does not say the random caches' figures are single runs:\n%s", md)
	}
}

// Without a cache that seeds itself at random, the method said such
// caches "()" were replayed N times; it now says every cache is
// deterministic and replayed once.
func TestMethodWithoutRandomCaches(t *testing.T) {
	rs := &Results{Runs: 3}
	for _, name := range []string{NameDefault, "lru"} {
		rs.Caches = append(rs.Caches, contender(t, name))
	}
	var b strings.Builder
	writeMethod(&b, rs, Meta{Parallel: 2, Isolate: true})
	md := b.String()
	if strings.Contains(md, "()") || strings.Contains(md, "mean of the runs") {
		t.Errorf("the method describes repeated runs of no cache:\n%s", md)
	}
	if !strings.Contains(md, "- **Runs**: every cache here is deterministic and replayed once.") {
		t.Errorf("the method does not say every cache was replayed once:\n%s", md)
	}
}
