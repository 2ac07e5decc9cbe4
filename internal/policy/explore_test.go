package policy

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

func loadTrace(t *testing.T, path string) []uint64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var keys []uint64
	s := bufio.NewScanner(z)
	for s.Scan() {
		k, err := strconv.ParseUint(strings.TrimSpace(s.Text()), 10, 64)
		if err != nil {
			i, err2 := strconv.ParseInt(strings.TrimSpace(s.Text()), 10, 64)
			if err2 != nil {
				t.Fatalf("line %q", s.Text())
			}
			k = uint64(i)
		}
		keys = append(keys, k)
	}
	return keys
}

// hashKeys returns keys hashed as the real cache hashes integer keys,
// with a 64-bit seed derived from seed (0 stays 0: sim's hash). The real
// cache's seed is a random 64-bit word; a small seed used as it is would
// only swap keys within aligned blocks of eight, and a trace of
// consecutive block numbers would then be sampled almost alike whatever
// the seed.
func hashKeys(keys []uint64, seed uint64) []uint64 {
	if seed != 0 {
		seed = mix.Mix(seed * 0x9e3779b97f4a7c15)
	}
	h := make([]uint64, len(keys))
	for i, k := range keys {
		h[i] = mix.Mix(k ^ seed)
	}
	return h
}

func replayHR(keys []uint64, p Policy) float64 {
	hits := replay(keys, p, map[uint64]*node.Node{})
	return 100 * float64(hits) / float64(len(keys))
}

// replay requests the key hashes from p (Access on a hit; Add, then Evict
// until nothing is left to evict, on a miss), with idx the keys p holds,
// and returns the hits.
func replay(keys []uint64, p Policy, idx map[uint64]*node.Node) int {
	hits := 0
	for _, h := range keys {
		if n := idx[h]; n != nil {
			p.Access(n)
			hits++
			continue
		}
		n := node.NewKeyed(h, 1)
		idx[h] = n
		p.Add(n)
		for v := p.Evict(); v != nil; v = p.Evict() {
			delete(idx, node.KeyedHash(v))
		}
	}
	return hits
}

// TestExplore replays traces through the default policy and through
// TinyLFU with static window shares, for hit-ratio work; it is skipped
// unless EXPLORE is set. Example, from internal/policy:
//
//	EXPLORE='libcachesim-cloudphysicsio:5000,10000' VARIANTS=default,0,0.01,0.2 go test -run Explore -v .
//
// Variants are "default", a window share ("0.2": plain W-TinyLFU with that
// window), or "g" and a share ("g0.2": that window with the default's
// other choices, the ghost in use and window hits not counted). Keys are
// hashed as sim does (MurmurHash3's finaliser), but the seed differs, so
// figures can differ from sim's by the randomness of admission.
func TestExplore(t *testing.T) {
	spec := os.Getenv("EXPLORE")
	if spec == "" {
		t.Skip()
	}
	for _, tc := range strings.Split(spec, ";") {
		name, caps, _ := strings.Cut(tc, ":")
		keys := hashKeys(loadTrace(t, tracesDir()+"/"+name+".txt.gz"), 0)
		for _, c := range strings.Split(caps, ",") {
			capacity, _ := strconv.ParseUint(c, 10, 64)
			line := fmt.Sprintf("%s @%d:", name, capacity)
			for _, v := range strings.Split(os.Getenv("VARIANTS"), ",") {
				var p Policy
				if v == "default" {
					p = NewTinyLFU(capacity, false, 7, node.KeyedHash)
				} else {
					p = fixedShare(t, v, capacity)
				}
				line += fmt.Sprintf(" %s=%.2f", v, replayHR(keys, p))
			}
			t.Log(line)
		}
	}
}

// fixedShare returns a TinyLFU whose window share is fixed: v is the
// share ("0.2"), or "g" and the share ("g0.2") for the default's other
// choices (the ghost filter in use, window hits not counted) around it.
func fixedShare(t *testing.T, v string, capacity uint64) *TinyLFU {
	s, ghost := strings.CutPrefix(v, "g")
	share, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("variant %q: %v", v, err)
	}
	q := newTinyLFU(capacity, false, 7, node.KeyedHash)
	q.setWindowShare(share)
	if ghost {
		q.ghost = tinyLFUGhost(capacity)
		q.useGhost, q.skipWindowHits = true, true
	}
	return q
}

// tracesDir is the shared trace directory (EXPLORE_TRACES overrides it).
func tracesDir() string {
	if d := os.Getenv("EXPLORE_TRACES"); d != "" {
		return d
	}
	return "../../../shared/traces"
}

type peerRow struct {
	trace string
	cap   uint64
	best  float64
}

func peerRows(t *testing.T) []peerRow {
	b, err := os.ReadFile(tracesDir() + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []peerRow
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, "|")
		if len(f) < 10 || !strings.Contains(f[1], " @") {
			continue
		}
		name, c, _ := strings.Cut(strings.TrimSpace(f[1]), " @")
		capacity, err := strconv.ParseUint(c, 10, 64)
		if err != nil {
			continue
		}
		bs := strings.TrimSpace(f[8])
		bs = strings.TrimPrefix(bs, "**")
		bs, _, _ = strings.Cut(bs, "**")
		best, err := strconv.ParseFloat(bs, 64)
		if err != nil {
			continue
		}
		rows = append(rows, peerRow{name, capacity, best})
	}
	return rows
}

// TestSuite replays every (trace, capacity) of the traces README's peer
// table through each variant of SUITE and prints the hit ratios, the mean
// and the count of points below the README's best peer − 0.1.
// SUITE_TRACES=a,b restricts it to some traces. A variant is "default"
// (admission seed 7), "default@N" (admission seed N) or a fixed window
// share, with or without the ghost (as TestExplore's variants). Skipped
// unless SUITE is set:
//
//	SUITE=default go test -count 1 -run Suite -v .
//
// SUITE_HASH_SEEDS=0,1,2,3 replays each point with keys hashed with each
// of these seeds, as the real cache's random hash seed does, and reports
// the mean over them (the default, 0, is sim's hash), and the count of
// points below the best peer − 0.1 both for the mean and per run (averaged
// over the seeds: what one run of the real cache would see). A single seed
// moves that count by ±2 or more, so weigh a change over several.
func TestSuite(t *testing.T) {
	spec := os.Getenv("SUITE")
	if spec == "" {
		t.Skip()
	}
	rows := peerRows(t)
	if f := os.Getenv("SUITE_TRACES"); f != "" {
		var keep []peerRow
		for _, r := range rows {
			if strings.Contains(","+f+",", ","+r.trace+",") {
				keep = append(keep, r)
			}
		}
		rows = keep
	}
	var seeds []uint64
	for _, f := range strings.Split(cmp.Or(os.Getenv("SUITE_HASH_SEEDS"), "0"), ",") {
		s, err := strconv.ParseUint(f, 0, 64)
		if err != nil {
			t.Fatalf("SUITE_HASH_SEEDS: %v", err)
		}
		seeds = append(seeds, s)
	}
	variants := strings.Split(spec, ",")
	newPolicy := func(v string, capacity uint64) Policy {
		if seed, ok := strings.CutPrefix(v, "default@"); ok {
			n, err := strconv.ParseUint(seed, 10, 64)
			if err != nil {
				t.Fatalf("variant %q: %v", v, err)
			}
			return NewTinyLFU(capacity, false, n, node.KeyedHash)
		}
		if v == "default" {
			return NewTinyLFU(capacity, false, 7, node.KeyedHash)
		}
		return fixedShare(t, v, capacity)
	}
	// hr[row][variant][seed] is a hit ratio; the replays of one trace run
	// in parallel, one goroutine per (seed, variant, row).
	hr := make([][][]float64, len(rows))
	for i := range hr {
		hr[i] = make([][]float64, len(variants))
		for j := range hr[i] {
			hr[i][j] = make([]float64, len(seeds))
		}
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for lo := 0; lo < len(rows); {
		hi := lo
		for hi < len(rows) && rows[hi].trace == rows[lo].trace {
			hi++
		}
		raw := loadTrace(t, tracesDir()+"/"+rows[lo].trace+".txt.gz")
		var wg sync.WaitGroup
		for k, seed := range seeds {
			keys := hashKeys(raw, seed)
			for i := lo; i < hi; i++ {
				for j, v := range variants {
					wg.Add(1)
					sem <- struct{}{}
					go func() {
						defer func() { <-sem; wg.Done() }()
						hr[i][j][k] = replayHR(keys, newPolicy(v, rows[i].cap))
					}()
				}
			}
			wg.Wait()
		}
		lo = hi
	}
	// For each variant: the sum of the mean hit ratios, the points whose
	// mean is below the best peer − 0.1, and the points below it summed
	// over the seeds (the count a single run would see, times the seeds).
	sum := make([]float64, len(variants))
	bad := make([]int, len(variants))
	badRuns := make([]int, len(variants))
	for i, r := range rows {
		line := fmt.Sprintf("%-28s @%-6d best %6.2f:", r.trace, r.cap, r.best)
		for j := range variants {
			h, low := 0.0, 100.0
			for _, x := range hr[i][j] {
				h += x
				low = min(low, x)
				if x < r.best-0.1 {
					badRuns[j]++
				}
			}
			h /= float64(len(seeds))
			sum[j] += h
			mark := " "
			if h < r.best-0.1 {
				bad[j]++
				mark = "*"
			}
			line += fmt.Sprintf(" %6.2f%s (min %6.2f)", h, mark, low)
		}
		t.Log(line)
	}
	for j, v := range variants {
		t.Logf("%s: mean %.2f bad %d, per run %.2f (n=%d, hash seeds %v)", v, sum[j]/float64(len(rows)), bad[j],
			float64(badRuns[j])/float64(len(seeds)), len(rows), seeds)
	}
}
