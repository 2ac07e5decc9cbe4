package main

import "testing"

// The header's method line gives each experiment's rounds in the number
// its count takes ("1 round", "2 rounds"): it said "articles' table: 1
// rounds" for -rounds 1, and "GC experiment: 1 round(s)" (or "3 round(s)")
// where the count was known.
func TestMethodRounds(t *testing.T) {
	for _, c := range []struct {
		rounds, gcRounds int
		want             string
	}{
		{1, 1, "articles' table: 1 round; GC experiment: 1 round; every cache in a fresh process; medians"},
		{3, 2, "articles' table: 3 rounds; GC experiment: 2 rounds; every cache in a fresh process; medians"},
	} {
		if got := method(c.rounds, c.gcRounds); got != c.want {
			t.Errorf("method(%d, %d) = %q, want %q", c.rounds, c.gcRounds, got, c.want)
		}
	}
}
