package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// The cold tier's L1 must be smaller than the key set, or its reads are L1
// hits after the first pass and the "cold" rows measure a warm tier: -cold-l1
// 0 (an unbounded L1) and -cold-l1 at or above -keys ran to the end and
// reported those figures as cold ones; -cold-l1 -1 failed in redis.New
// with an error that did not name the flag.
func TestColdL1Refused(t *testing.T) {
	short := map[string]string{
		"duration": "1ms", "read-rounds": "1", "goroutines": "1", "keys": "10", "skip-single": "true",
		"stampede": "2", "rounds": "1", "load-delay": "0s", "invalidations": "2",
	}
	for _, v := range []string{"0", "-1", "10", "11"} {
		t.Run("cold-l1="+v, func(t *testing.T) {
			var saved []func()
			defer func() {
				for _, restore := range saved {
					restore()
				}
			}()
			set := func(name, value string) {
				f := flag.Lookup(name)
				old := f.Value.String()
				saved = append(saved, func() { _ = f.Value.Set(old) })
				if err := f.Value.Set(value); err != nil {
					t.Fatal(err)
				}
			}
			for name, value := range short {
				set(name, value)
			}
			set("cold-l1", v)
			oldOut := out
			out = io.Discard
			defer func() { out = oldOut }()
			verdicts = targets{warmRatio: map[int]float64{}, coldP50: map[int]float64{}, coldP99: map[int]float64{}, loadsPerRound: map[int][]int64{}}
			if err := run(); err == nil || !strings.Contains(err.Error(), "-cold-l1") {
				t.Errorf("-cold-l1 %s with -keys 10: err %v; want an error naming the flag", v, err)
			}
		})
	}
}
