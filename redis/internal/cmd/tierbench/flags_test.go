package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Flag values that leave a table without samples, or a reader without a
// key, are refused before anything runs: -invalidations 0 indexed an empty
// slice after the whole run, -read-rounds 0, -stampede 0 and -rounds 0 as
// well as -keys 0 (on the readers), -zipf 1 made rand.NewZipf return nil,
// -value -1 made a slice of negative length, -pool -1 a channel of
// negative capacity in go-redis, each a panic; -zipf +Inf hung the readers
// (rand.Zipf's Uint64 never returns). -goroutines 0 and
// -duration 0 gave tables of NaN and infinite throughputs.
func TestBadFlagsRefused(t *testing.T) {
	short := map[string]string{
		"duration": "1ms", "read-rounds": "1", "goroutines": "1", "keys": "10", "skip-single": "true",
		"stampede": "2", "rounds": "1", "load-delay": "0s", "invalidations": "2", "cold-l1": "5",
	}
	for _, bad := range [][2]string{
		{"invalidations", "0"}, {"read-rounds", "0"}, {"stampede", "0"}, {"rounds", "0"},
		{"keys", "0"}, {"zipf", "1"}, {"zipf", "+Inf"}, {"value", "-1"}, {"pool", "-1"}, {"goroutines", "0"}, {"duration", "0s"},
	} {
		t.Run(bad[0]+"="+bad[1], func(t *testing.T) {
			var saved []func()
			set := func(name, value string) {
				f := flag.Lookup(name)
				old := f.Value.String()
				saved = append(saved, func() { _ = f.Value.Set(old) })
				if err := f.Value.Set(value); err != nil {
					t.Fatal(err)
				}
			}
			defer func() {
				for _, restore := range saved {
					restore()
				}
			}()
			for name, value := range short {
				set(name, value)
			}
			set(bad[0], bad[1])
			oldOut := out
			out = io.Discard
			defer func() { out = oldOut }()
			verdicts = targets{warmRatio: map[int]float64{}, coldP50: map[int]float64{}, coldP99: map[int]float64{}, loadsPerRound: map[int][]int64{}}
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return run()
			}()
			if err == nil || !strings.Contains(err.Error(), "-"+bad[0]) {
				t.Errorf("-%s %s: err %v; want an error naming the flag", bad[0], bad[1], err)
			}
		})
	}
}
