package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cachekit/cachekit/cmd/cachekit/internal/load"
	"github.com/cachekit/cachekit/internal/atomicfile"
)

const loadUsage = `usage: cachekit load [flags] [URL]

Sends HTTP load to the cachekit service (--mode api, the default: reads are
GET /v1/entries/{key}, writes POST /v1/entries or PUT /v1/entries/{key}) or
to any URL (--mode get: plain GETs; "{key}" in the URL is replaced by each
request's key). Prints a live line every second on a terminal, then a
report: throughput, errors by kind, and latency percentiles from an HDR
histogram (mean, p50, p90, p99, p99.9, p99.99, p99.999, max).

With --rate, requests are paced and the run is open-loop: each request's
latency is measured from the moment it was due, so a stalled server is
charged for the requests that queue behind it (no coordinated omission);
--closed measures from the actual send instead. Without --rate the workers
send as fast as they can (closed loop). A paced run sends nothing after
--duration (or after Ctrl-C): the requests due by then that the workers,
all busy, had not sent are counted as errors, "not sent (generator
behind)". A second Ctrl-C stops at once, without a report.

--ryw checks read-your-writes (it needs --write-ratio above 0): after each
write, the key is read back on another connection; stale values and misses
are counted (exit status 1 if any). With --ttl, a miss read at least the TTL after the write was sent is
counted as expired, not as a violation.

Examples:
  cachekit load --url http://127.0.0.1:8080 --rate 10000 --write-ratio 0.5 --value-size 450 --duration 1m
  cachekit load --mode get --url 'http://127.0.0.1:8008/hello?name={key}' --cardinality 10000 --group 100 --concurrency 200

flags:
`

func loadCmd(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal, the run drains (up to --timeout); a second
	// one gets the default behaviour: it ends the process.
	context.AfterFunc(ctx, stop)
	return loadContext(ctx, args, stdout, stderr, isTerminal(os.Stderr))
}

func loadContext(ctx context.Context, args []string, stdout, stderr io.Writer, terminal bool) int {
	fs := newFlagSet("load", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), loadUsage)
		fs.PrintDefaults()
	}
	var o load.Options
	fs.StringVar(&o.URL, "url", "", "target: the service's base URL (--mode api) or any URL (--mode get)")
	fs.StringVar(&o.Mode, "mode", load.ModeAPI, "api (the cachekit service API) or get (plain GETs of --url)")
	fs.Float64Var(&o.Rate, "rate", 0, "target requests per second (0: as fast as possible, closed loop)")
	fs.BoolVar(&o.Closed, "closed", false, "with --rate: measure latency from the actual send (closed loop) instead of the scheduled time")
	fs.IntVar(&o.Concurrency, "concurrency", 16, "workers, each with at most one request in flight")
	fs.DurationVar(&o.Duration, "duration", 0, "how long to run (default 10s when --requests is not given); with --rate, nothing is sent after it")
	fs.Int64Var(&o.Requests, "requests", 0, "how many requests to send (0: no limit)")
	fs.DurationVar(&o.Warmup, "warmup", 0, "leave the requests of the first part of the run out of the statistics")
	fs.IntVar(&o.Cardinality, "cardinality", 10_000, "distinct keys (distinct URLs in --mode get with {key})")
	fs.IntVar(&o.Group, "group", 1, "consecutive requests sharing a key (concurrent requests for one key)")
	fs.Float64Var(&o.Zipf, "zipf", 0, "Zipf exponent (> 1) for skewed keys; 0: uniform")
	fs.BoolVar(&o.Sequential, "sequential", false, "keys in order 0, 1, 2, ... (to preload every key once)")
	fs.Float64Var(&o.WriteRatio, "write-ratio", 0, "fraction of writes, 0 to 1 (--mode api)")
	fs.StringVar(&o.WriteMethod, "write-method", load.WritePost, "post (JSON {id, entry} messages, like the articles) or put (raw values)")
	fs.IntVar(&o.Batch, "batch", 1, "entries per POST (a JSON array when above 1)")
	fs.IntVar(&o.ValueSize, "value-size", 256, "bytes per written value (the JSON entry with post)")
	fs.DurationVar(&o.TTL, "ttl", 0, "TTL sent with writes (Cache-TTL header); 0: the service's default")
	fs.StringVar(&o.KeyPrefix, "key-prefix", "key-", "prefix of the keys")
	fs.BoolVar(&o.RYW, "ryw", false, "check read-your-writes: read each write back on another connection")
	fs.DurationVar(&o.Timeout, "timeout", load.DefaultTimeout, "deadline of each request")
	fs.Uint64Var(&o.Seed, "seed", 0, "seed of the key and operation streams (0: random, reported)")
	live := fs.Bool("live", terminal, "print a live line every second (default: when stderr is a terminal)")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file (- for stdout, instead of the text)")
	startProfile := cpuProfileFlag(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() == 1 && o.URL == "":
		o.URL = fs.Arg(0)
	case fs.NArg() > 0:
		extra := fs.Arg(0)
		if o.URL == "" {
			extra = fs.Arg(1) // the first is the URL
		}
		fmt.Fprintf(stderr, "cachekit load: unexpected argument %q (flags come before the URL)\n", extra)
		return 2
	}
	// load.Options takes a zero as "the default", but these flags state
	// their defaults: an explicit zero (or empty prefix) is a mistake.
	positive := map[string]bool{
		"concurrency": o.Concurrency > 0,
		"cardinality": o.Cardinality > 0,
		"group":       o.Group > 0,
		"batch":       o.Batch > 0,
		"value-size":  o.ValueSize > 0,
		"timeout":     o.Timeout > 0,
		"key-prefix":  o.KeyPrefix != "",
	}
	var bad *flag.Flag
	fs.Visit(func(f *flag.Flag) {
		if ok, checked := positive[f.Name]; checked && !ok && bad == nil {
			bad = f
		}
	})
	if bad != nil {
		what := "must be positive"
		if bad.Name == "key-prefix" {
			what = "must not be empty"
		}
		fmt.Fprintf(stderr, "cachekit load: --%s %q: %s\n", bad.Name, bad.Value.String(), what)
		return 2
	}
	if *live {
		o.Live, o.LiveTerminal = stderr, terminal
	}
	// A usage error is reported before any file is touched: profiling
	// creates (truncates) the profile's file, and an earlier run's profile
	// must stay as it was.
	if err := o.Check(); err != nil {
		fmt.Fprintf(stderr, "cachekit %v\n", err)
		return 2
	}
	// The JSON report's path is checked before the run, as the profile's
	// is: a path that cannot be written fails now, not after the run. The
	// report replaces the file once written in full (atomicfile.WriteFile), so
	// a run that fails leaves an earlier report as it was.
	if *jsonOut != "" && *jsonOut != "-" {
		if err := atomicfile.CheckWritable(*jsonOut); err != nil {
			fmt.Fprintf(stderr, "cachekit load: %v\n", err)
			return 1
		}
	}
	stopProfile, ok := startProfile(stderr)
	if !ok {
		return 1
	}
	rep, err := load.Run(ctx, o)
	stopProfile()
	if err != nil {
		fmt.Fprintf(stderr, "cachekit %v\n", err)
		return 2
	}
	if *jsonOut != "-" {
		if err := rep.WriteText(stdout); err != nil {
			fmt.Fprintf(stderr, "cachekit load: %v\n", err)
			return 1
		}
	}
	if *jsonOut != "" {
		var err error
		if *jsonOut == "-" {
			err = rep.WriteJSON(stdout)
		} else {
			var buf bytes.Buffer
			if err = rep.WriteJSON(&buf); err == nil {
				err = atomicfile.WriteFile(*jsonOut, buf.Bytes())
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "cachekit load: writing the JSON report: %v\n", err)
			return 1
		}
	}
	// Expired entries (--ttl) are no violation.
	if rep.RYW != nil && rep.RYW.Missing+rep.RYW.Mismatch > 0 {
		fmt.Fprintf(stderr, "cachekit load: read-your-writes violated: %d reads missed and %d returned a stale value\n",
			rep.RYW.Missing, rep.RYW.Mismatch)
		return 1
	}
	return 0
}

// isTerminal reports whether f is a character device other than the null
// device: a terminal, most likely (2>/dev/null is not one).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}
