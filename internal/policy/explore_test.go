package policy

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"strconv"
	"strings"
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
		keys = append(keys, mix.Mix(k))
	}
	return keys
}

func replayHR(keys []uint64, p Policy) float64 {
	idx := map[uint64]*node.Node{}
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
	return 100 * float64(hits) / float64(len(keys))
}

// TestExplore replays traces through the default policy and through
// TinyLFU with static window shares, for hit-ratio work; it is skipped
// unless EXPLORE is set. Example, from internal/policy:
//
//	EXPLORE='libcachesim-cloudphysicsio:5000,10000' VARIANTS=default,0,0.01,0.2 go test -run Explore -v .
//
// Variants are "default" or a window share. Keys are hashed as sim does
// (MurmurHash3's finaliser), but the seed differs, so figures can differ
// from sim's by the randomness of admission.
func TestExplore(t *testing.T) {
	spec := os.Getenv("EXPLORE")
	if spec == "" {
		t.Skip()
	}
	for _, tc := range strings.Split(spec, ";") {
		name, caps, _ := strings.Cut(tc, ":")
		keys := loadTrace(t, tracesDir()+"/"+name+".txt.gz")
		for _, c := range strings.Split(caps, ",") {
			capacity, _ := strconv.ParseUint(c, 10, 64)
			line := fmt.Sprintf("%s @%d:", name, capacity)
			for _, v := range strings.Split(os.Getenv("VARIANTS"), ",") {
				var p Policy
				if v == "default" {
					p = NewTinyLFU(capacity, false, 7, node.KeyedHash)
				} else {
					share, _ := strconv.ParseFloat(v, 64)
					q := newTinyLFU(capacity, false, 7, node.KeyedHash)
					q.setWindowShare(share)
					p = q
				}
				line += fmt.Sprintf(" %s=%.2f", v, replayHR(keys, p))
			}
			t.Log(line)
		}
	}
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
// table through each variant of SUITE (as in TestExplore) and prints the
// hit ratios, the mean and the count of points below the README's best
// peer − 0.1. SUITE_TRACES=a,b restricts it to some traces. Skipped unless
// SUITE is set:
//
//	SUITE=default go test -run Suite -v -timeout 1h .
func TestSuite(t *testing.T) {
	spec := os.Getenv("SUITE")
	if spec == "" {
		t.Skip()
	}
	rows := peerRows(t)
	variants := strings.Split(spec, ",")
	sum := make([]float64, len(variants))
	bad := make([]int, len(variants))
	var keys []uint64
	loaded := ""
	if f := os.Getenv("SUITE_TRACES"); f != "" {
		var keep []peerRow
		for _, r := range rows {
			if strings.Contains(","+f+",", ","+r.trace+",") {
				keep = append(keep, r)
			}
		}
		rows = keep
	}
	for _, r := range rows {
		if loaded != r.trace {
			keys = loadTrace(t, tracesDir()+"/"+r.trace+".txt.gz")
			loaded = r.trace
		}
		line := fmt.Sprintf("%-28s @%-6d best %6.2f:", r.trace, r.cap, r.best)
		for i, v := range variants {
			var p Policy
			if v == "default" {
				p = NewTinyLFU(r.cap, false, 7, node.KeyedHash)
			} else {
				share, _ := strconv.ParseFloat(v, 64)
				q := newTinyLFU(r.cap, false, 7, node.KeyedHash)
				q.setWindowShare(share)
				p = q
			}
			hr := replayHR(keys, p)
			sum[i] += hr
			mark := " "
			if hr < r.best-0.1 {
				bad[i]++
				mark = "*"
			}
			line += fmt.Sprintf(" %6.2f%s", hr, mark)
		}
		t.Log(line)
	}
	for i, v := range variants {
		t.Logf("%s: mean %.2f bad %d (n=%d)", v, sum[i]/float64(len(rows)), bad[i], len(rows))
	}
}
