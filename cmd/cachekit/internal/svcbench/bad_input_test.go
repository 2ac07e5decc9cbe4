package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/cmd/cachekit/internal/load"
	"github.com/cachekit/cachekit/service"
)

// readResult (-from-json) panicked on a file whose "phases" array held a
// null (an edited or hand-merged report): it called decode on a nil phase.
func TestFromJSONNullPhaseIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "service.json")
	if err := os.WriteFile(path, []byte(`{"config": {"entries": 1000}, "phases": [null]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("readResult(%q) panicked on a null phase: %v", path, p)
			}
		}()
		_, err = readResult(path)
	}()
	if err == nil {
		t.Errorf("readResult(%q) accepted a null phase; want an error", path)
	}
}

// A -from-json file that was not valid JSON was reported by encoding/json's
// bare error ("svcbench: unexpected end of JSON input"), naming neither the
// file nor the flag.
func TestFromJSONSyntaxErrorNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "truncated-service.json")
	if err := os.WriteFile(path, []byte(`{"config": {"entries": 1000}, "phases": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readResult(path)
	if err == nil {
		t.Fatalf("readResult(%q) accepted a truncated file", path)
	}
	if !strings.Contains(err.Error(), "truncated-service.json") {
		t.Errorf("the error for a truncated -from-json file does not name it: %q", err)
	}
}

// validConfig is a configuration config.check accepts.
func validConfig() config {
	return config{Entries: 1000, ValueSize: 450, Duration: time.Minute, SweepFor: time.Minute,
		Rates: []int{15000}, Concurrency: 128, MaxBytes: "8GiB"}
}

// loadChecks returns the errors cachekit load's own check (load.Options.Check)
// gives for the runs svcbench starts with c: the preload (preloadArgs) and
// the articles' run.
func loadChecks(c config) []error {
	batch := min(c.Entries, 100)
	preload := load.Options{URL: "http://127.0.0.1:1", Cardinality: c.Entries, ValueSize: c.ValueSize,
		Concurrency: 4, WriteRatio: 1, Batch: batch, Sequential: true,
		Requests: int64((c.Entries + batch - 1) / batch), TTL: 30 * time.Minute, Seed: 1}
	articles := load.Options{URL: "http://127.0.0.1:1", Cardinality: c.Entries, ValueSize: c.ValueSize,
		Concurrency: c.Concurrency, Rate: 10000, WriteRatio: 0.5, TTL: 10 * time.Minute,
		Duration: c.Duration, Warmup: min(10*time.Second, c.Duration/6), Seed: 2}
	var errs []error
	for _, o := range []load.Options{preload, articles} {
		if err := o.Check(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// config.check refused only non-positive values: a -value-size or
// -concurrency that the load generator refuses (over its limits, or a
// value size that makes the preload's POSTs of 100 entries too large)
// passed, and the run failed minutes later, after the floor phases.
func TestCheckRefusesWhatTheLoadGeneratorRefuses(t *testing.T) {
	cases := map[string]func(*config){
		"-value-size above load.MaxValueSize":             func(c *config) { c.ValueSize = load.MaxValueSize + 1 },
		"-value-size too large for the preload's batches": func(c *config) { c.ValueSize = 3_000_000 },
		"-concurrency above load.MaxConcurrency":          func(c *config) { c.Concurrency = load.MaxConcurrency + 1 },
	}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			c := validConfig()
			set(&c)
			errs := loadChecks(c)
			if len(errs) == 0 {
				t.Fatalf("the load generator accepts %+v: the case is wrong", c)
			}
			if err := c.check(); err == nil {
				t.Errorf("config.check accepted %s (value size %d, concurrency %d); the load generator refuses it once the benchmark is under way: %v",
					name, c.ValueSize, c.Concurrency, errs[0])
			}
		})
	}
}

// -max-bytes was handed to cachekit serve unchecked: a bad size was found
// only when the server failed to start, after the floor phases.
func TestCheckRefusesABadMaxBytes(t *testing.T) {
	for _, v := range []string{"lots", "-1", "8 GiB of RAM"} {
		if _, err := service.ParseSize(v); err == nil {
			t.Fatalf("service.ParseSize(%q) accepted it: the case is wrong", v)
		}
		c := validConfig()
		c.MaxBytes = v
		if err := c.check(); err == nil {
			t.Errorf("config.check accepted -max-bytes %q, which cachekit serve refuses (after the floor phases)", v)
		}
	}
}

// -gogc was passed to both processes unchecked: the runtime ignores a GOGC
// that is neither a number nor "off" (it runs with 100), while the report
// named the value given.
func TestCheckRefusesABadGOGC(t *testing.T) {
	for _, v := range []string{"abc", "50%", "1e2", "of"} {
		if _, err := strconv.Atoi(v); err == nil || v == "off" {
			t.Fatalf("%q is a valid GOGC: the case is wrong", v)
		}
		c := validConfig()
		c.GOGC = v
		if err := c.check(); err == nil {
			t.Errorf("config.check accepted -gogc %q, which the Go runtime ignores (it runs with GOGC=100) while the report says GOGC=%s", v, v)
		}
	}
}

// -md and -json were checked only when written, at the end of a run of
// many minutes (a missing directory failed then, the markdown lost after
// the JSON was written); -from-json X -md X overwrote the input with the
// report, and -json beside -from-json was ignored without a word.
func TestOutputsCheckedBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "service.json")
	if err := os.WriteFile(from, []byte(`{"phases": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from, json, md string
		want                 string
	}{
		{"missing directory", "", "", filepath.Join(dir, "no", "service.md"), "-md"},
		{"a directory", "", dir, "", "-json"},
		{"-md is the input", from, "", from, "is the -from-json file"},
		{"-json with -from-json", from, filepath.Join(dir, "x.json"), "", "-json with -from-json"},
	} {
		err := checkOutputs(tc.from, tc.json, tc.md)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: checkOutputs = %v; want an error naming %q", tc.name, err, tc.want)
		}
	}
	if err := checkOutputs(from, "", filepath.Join(dir, "service.md")); err != nil {
		t.Errorf("a good -from-json and -md: %v", err)
	}
	if err := checkOutputs("", filepath.Join(dir, "service.json"), filepath.Join(dir, "service.md")); err != nil {
		t.Errorf("a good -json and -md: %v", err)
	}
}
