package articles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/memstat"
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/subproc"
)

// TestMain makes the test binary a measuring child when Measure starts
// it.
func TestMain(m *testing.M) {
	var j Job
	child, err := subproc.Job(&j)
	if !child {
		os.Exit(m.Run())
	}
	if err == nil {
		var r Result
		if r, err = RunJob(j); err == nil {
			err = subproc.Reply(r)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestCodec(t *testing.T) {
	for _, v := range []Value{{}, {N: -1 << 62, B: true, S: "x"}, NewValue(123456), {N: 7, S: strings.Repeat("é", 300)}} {
		b, err := Codec{}.Append([]byte("prefix"), v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Codec{}.Decode(b[len("prefix"):])
		if err != nil || got != v {
			t.Errorf("round trip of %+v = %+v, %v", v, got, err)
		}
		for cut := range len(b) - len("prefix") {
			if _, err := (Codec{}).Decode(b[len("prefix") : len("prefix")+cut]); err == nil {
				t.Errorf("a truncated encoding of %+v (%d bytes) decoded", v, cut)
			}
		}
	}
	if _, err := (Codec{}).Decode([]byte{0, 2, 0}); err == nil {
		t.Error("a bool byte of 2 decoded")
	}
	if EntryBytes(999_999) < 20 || EntryBytes(999_999) > 40 {
		t.Errorf("EntryBytes(999999) = %d", EntryBytes(999_999))
	}
}

func TestStream(t *testing.T) {
	for _, pct := range []float64{0, 0.1, 10, 100} {
		s := NewStream(1000, pct, 42, 3)
		if got, want := s.Writes(), int(pct*StreamLen/100+0.5); got != want {
			t.Errorf("%v%% writes: %d writes in the stream, want %d", pct, got, want)
		}
		again := NewStream(1000, pct, 42, 3)
		if again.pos != s.pos || again.idx[99] != s.idx[99] {
			t.Errorf("%v%%: streams are not deterministic", pct)
		}
		for _, i := range s.idx {
			if i >= 1000 {
				t.Fatalf("key index %d out of range", i)
			}
		}
	}
}

// TestRunJob fills small caches and runs both phases in this process:
// every cache that does not drop writes holds every entry and hits on
// every Get.
func TestRunJob(t *testing.T) {
	const n = 3000
	for _, name := range []string{"cachekit", "xsync", "fastcache", "bigcache"} {
		r, err := RunJob(Job{Cache: name, Entries: n, Goroutines: 2, Duration: 20 * time.Millisecond, WritePcts: WritePcts, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Held != n {
			t.Errorf("%s holds %d of %d entries", name, r.Held, n)
		}
		if len(r.Phases) != len(WritePcts) {
			t.Fatalf("%s: %d phases", name, len(r.Phases))
		}
		for _, p := range r.Phases {
			// Every key is present throughout, so every Get must hit.
			if p.Ops == 0 || p.NsPerOp() <= 0 || p.Gets != p.Hits {
				t.Errorf("%s at %v%% writes: %+v", name, p.WritePct, p)
			}
		}
		t.Logf("%s: %+v", name, r.Memory)
	}
	if _, err := RunJob(Job{Cache: "cachekit"}); err == nil {
		t.Error("a job of no entries ran")
	}
	if _, err := RunJob(Job{Cache: "nope", Entries: 1, Goroutines: 1, Duration: time.Millisecond}); err == nil {
		t.Error("a job of an unknown cache ran")
	}
}

// TestMeasure runs two caches for two rounds in child processes and
// renders the report.
func TestMeasure(t *testing.T) {
	caches := []string{"cachekit", "fastcache"}
	res, err := Measure(Config{Caches: caches, Entries: 2000, Goroutines: 2, Duration: 10 * time.Millisecond,
		Rounds: 2, Seed: 1, Args: []string{"-test.run=^$"}})
	if err != nil {
		t.Fatal(err)
	}
	rep := Report{Header: report.Header{Command: "go run ./bench/cmd/articles", Cores: 2},
		Entries: 2000, Goroutines: 2, Duration: "10ms", Rounds: 2, WritePcts: WritePcts, Caches: Describe(caches)}
	for i := range rep.Caches {
		rep.Caches[i].Results = res[rep.Caches[i].Name]
		if len(rep.Caches[i].Results) != 2 {
			t.Fatalf("%s has %d results, want 2", rep.Caches[i].Name, len(rep.Caches[i].Results))
		}
	}
	sums := rep.Summaries()
	for _, s := range sums {
		if s.Held != 2000 || s.NsPerOp[0] <= 0 || s.HitRatios[1] < 0.999 {
			t.Errorf("summary %+v", s)
		}
	}
	dir := t.TempDir()
	charts, err := rep.Charts(dir, "articles", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		if _, err := os.Stat(filepath.Join(dir, c)); err != nil {
			t.Error(err)
		}
	}
	md := rep.Markdown(charts)
	for _, want := range []string{"| cachekit | cache | 2000 |", "| fastcache | bytes | 2000 |", "×)", "![articles-memory](articles-memory.png)", "ByteBudget"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if base := memstat.Take(); base.HeapInuse == 0 {
		t.Error("no heap")
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := report.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
