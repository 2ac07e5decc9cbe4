package stampede

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachekit/cachekit/bench/internal/report"
)

func instant(context.Context) {}

// fake is a Cache whose loader calls the test controls.
type fake struct {
	get func(ctx context.Context, key string) (int, error)
}

func (f fake) Get(ctx context.Context, key string) (int, error) { return f.get(ctx, key) }
func (f fake) Close()                                           {}

// noCache loads on every Get.
func noCache() Factory {
	return Factory{Name: "nocache", HotAge: time.Second, New: func(_ *Clock, load LoadFunc) Cache {
		return fake{get: load}
	}}
}

// once loads on the first Get only.
func once() Factory {
	return Factory{Name: "once", HotAge: time.Second, Refreshes: true, New: func(_ *Clock, load LoadFunc) Cache {
		var o sync.Once
		var v int
		var err error
		return fake{get: func(ctx context.Context, key string) (int, error) {
			o.Do(func() { v, err = load(ctx, key) })
			return v, err
		}}
	}}
}

// late returns at once and loads in the background after a delay, once
// per round: the harness must still count that call.
func late() Factory {
	return Factory{Name: "late", HotAge: time.Second, Refreshes: true, New: func(_ *Clock, load LoadFunc) Cache {
		var o sync.Once
		return fake{get: func(ctx context.Context, key string) (int, error) {
			o.Do(func() {
				go func() {
					time.Sleep(2 * time.Millisecond)
					load(context.Background(), key)
				}()
			})
			return Value, nil
		}}
	}}
}

// TestRunRoundCountsLoaderCalls runs in a synctest bubble, so that the late
// reload's 2ms and the harness's 5ms settle are virtual time: the reload
// starts within the window however busy the machine is.
func TestRunRoundCountsLoaderCalls(t *testing.T) {
	synctest.Test(t, testRunRoundCountsLoaderCalls)
}

func testRunRoundCountsLoaderCalls(t *testing.T) {
	const callers = 200
	p := Params{Callers: callers, Settle: 5 * time.Millisecond}
	for _, tc := range []struct {
		f    Factory
		c    Case
		want int64
	}{
		{noCache(), Cold, callers},
		{noCache(), Hot, callers}, // the warm-up call is not counted
		{once(), Cold, 1},
		{once(), Hot, 0}, // the warm-up loaded it
		{late(), Cold, 1},
	} {
		r, err := RunRound(tc.f, tc.c, p, instant)
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.f.Name, tc.c, err)
		}
		if r.Calls != tc.want {
			t.Errorf("%s/%s: %d loader calls, want %d", tc.f.Name, tc.c, r.Calls, tc.want)
		}
		if len(r.Latencies) != callers || len(r.FromRelease) != callers || r.Errors != 0 {
			t.Errorf("%s/%s: %d latencies, %d from release, %d errors (%v)", tc.f.Name, tc.c,
				len(r.Latencies), len(r.FromRelease), r.Errors, r.FirstError)
		}
	}
}

func TestRunRoundLatency(t *testing.T) {
	// A once-loading cache with a 5ms loader: the callers that miss wait
	// about 5ms, and the round's loader latency is measured.
	r, err := RunRound(once(), Cold, Params{Callers: 50}, Sleep(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if r.Calls != 1 || r.LoadTime < 5*time.Millisecond {
		t.Errorf("calls %d, load time %v; want 1, ≥ 5ms", r.Calls, r.LoadTime)
	}
	if mx := Percentile(r.Latencies, 1); mx < 4*time.Millisecond {
		t.Errorf("max latency %v; want about 5ms", mx)
	}
}

func TestAdapters(t *testing.T) {
	for _, f := range Factories() {
		t.Run(f.Name, func(t *testing.T) {
			// Directly: a value, then a value again once the key is past
			// its refresh age (or TTL).
			clock := NewClock()
			var calls int
			var mu sync.Mutex
			c := f.New(clock, func(ctx context.Context, key string) (int, error) {
				mu.Lock()
				calls++
				mu.Unlock()
				return Value, nil
			})
			for range 2 {
				if v, err := c.Get(context.Background(), Key); err != nil || v != Value {
					t.Fatalf("Get = %d, %v; want %d", v, err, Value)
				}
			}
			clock.Advance(f.HotAge)
			if v, err := c.Get(context.Background(), Key); err != nil || v != Value {
				t.Fatalf("Get past the refresh age = %d, %v; want %d", v, err, Value)
			}
			c.Close()
			mu.Lock()
			if calls < 1 {
				t.Errorf("%d loader calls", calls)
			}
			mu.Unlock()

			// Through the harness, both cases, with an instant loader.
			for _, cs := range Cases {
				r, err := RunRound(f, cs, Params{Callers: 100, Settle: 5 * time.Millisecond}, instant)
				if err != nil {
					t.Fatalf("%s: %v", cs, err)
				}
				if r.Errors != 0 {
					t.Errorf("%s: %d errors, first %v", cs, r.Errors, r.FirstError)
				}
				if r.Calls < 1 {
					t.Errorf("%s: %d loader calls; want at least 1", cs, r.Calls)
				}
			}
		})
	}
}

func TestSelect(t *testing.T) {
	all, err := Select("all")
	if err != nil || len(all) != len(Factories()) {
		t.Fatalf("Select(all) = %d, %v", len(all), err)
	}
	two, err := Select("otter, cachekit")
	if err != nil || len(two) != 2 || two[0].Name != "otter" || two[1].Name != "cachekit" {
		t.Fatalf("Select = %v, %v", two, err)
	}
	for _, bad := range []string{"nope", "otter,otter"} {
		if _, err := Select(bad); err == nil {
			t.Errorf("Select(%q): no error", bad)
		}
	}
}

func TestMedianPercentile(t *testing.T) {
	if got := Median([]int64{3, 1, 2}); got != 2 {
		t.Errorf("median of 3 = %d", got)
	}
	if got := Median([]time.Duration{4, 1, 3, 2}); got != 2 {
		t.Errorf("median of 4 = %d", got)
	}
	if got := Median[int64](nil); got != 0 {
		t.Errorf("median of none = %d", got)
	}
	ds := make([]time.Duration, 101)
	for i := range ds {
		ds[i] = time.Duration(i)
	}
	if Percentile(ds, 0.5) != 50 || Percentile(ds, 0.99) != 99 || Percentile(ds, 1) != 100 {
		t.Errorf("percentiles: %v %v %v", Percentile(ds, 0.5), Percentile(ds, 0.99), Percentile(ds, 1))
	}
}

func TestMeasureAndMarkdown(t *testing.T) {
	fs := []Factory{once(), noCache()}
	res, err := Measure(Config{Caches: fs, Cases: Cases, Rounds: 3,
		Params: Params{Callers: 20, LoadTime: time.Millisecond, Settle: time.Millisecond}, Work: instant})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || len(res[0].Rows) != 2 {
		t.Fatalf("results: %+v", res)
	}
	if r := res[0].Rows[0]; r.Cache != "once" || r.Calls != 1 || r.TotalCalls != 3 || r.Rounds != 3 {
		t.Errorf("cold once row: %+v", r)
	}
	if r := res[0].Rows[1]; r.Calls != 20 || r.MinCalls != 20 || r.MaxCalls != 20 {
		t.Errorf("cold nocache row: %+v", r)
	}
	rep := &Report{Header: report.Header{Command: "go run ./bench/cmd/stampede -rounds 3", Date: "today", GoVersion: "go1.x",
		CPU: "a CPU", Cores: 2, GOMAXPROCS: 2, Note: "noisy machine"}, Rounds: 3, Callers: 20,
		LoadTime: 10 * time.Millisecond, Caches: fs, Results: res}
	var b strings.Builder
	if err := WriteMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"```sh\ngo run ./bench/cmd/stampede -rounds 3\n```",
		"noisy machine", "go1.x", "a CPU, 2 cores",
		"## Cold key", "## Expired hot key", "## What the numbers show",
		"| cache | loader calls / round | p50 ms | p99 ms | max ms | p99 − 10 ms |",
		"| once | 1 |", "| nocache | 20 |", "| nocache (no refresh: synchronous reload) | 20 |",
		"missed it: nocache",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Every table row has as many cells as its header.
	for _, block := range strings.Split(md, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if !strings.HasPrefix(lines[0], "|") {
			continue
		}
		n := strings.Count(lines[0], "|")
		for _, l := range lines[1:] {
			if strings.Count(l, "|") != n {
				t.Errorf("row %q has %d bars; header has %d", l, strings.Count(l, "|"), n)
			}
		}
	}
	if _, err := Measure(Config{Caches: fs, Cases: Cases}); err == nil {
		t.Error("Measure with 0 rounds: no error")
	}
}
