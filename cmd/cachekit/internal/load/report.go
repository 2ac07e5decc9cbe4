package load

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Report is the result of a run. Its JSON form (WriteJSON) uses the field
// tags below; latencies are in milliseconds.
type Report struct {
	Mode        string    `json:"mode"`
	URL         string    `json:"url"`
	Loop        string    `json:"loop"`        // "open" or "closed"
	TargetRate  float64   `json:"target_rate"` // requests per second, 0 = unpaced
	Concurrency int       `json:"concurrency"`
	WriteRatio  float64   `json:"write_ratio"`
	WriteMethod string    `json:"write_method,omitempty"`
	Batch       int       `json:"batch,omitempty"`
	ValueSize   int       `json:"value_size,omitempty"`
	Cardinality int       `json:"cardinality"`
	Group       int       `json:"group"`
	Zipf        float64   `json:"zipf,omitempty"`
	Sequential  bool      `json:"sequential,omitempty"`
	Seed        uint64    `json:"seed"`
	Start       time.Time `json:"start"`
	// Seconds is the duration of the run after the warm-up: from the end
	// of the warm-up to the completion of the last request sent or, in a
	// paced run, to the end of its schedule if that is later (the end of
	// Duration, the cancellation, or when the request after the last of
	// Requests would have been due).
	Seconds float64 `json:"seconds"`
	Warmup  float64 `json:"warmup_seconds"`
	// WarmupRequests were sent during the warm-up and are not counted
	// anywhere else.
	WarmupRequests int64 `json:"warmup_requests"`
	// Requests counts the requests completed after the warm-up (RYW check
	// reads are counted in RYW only), and those of a paced run that were
	// due but not sent (NotSent); Reads + Writes = Requests. The requests
	// not sent are split between Reads and Writes by WriteRatio (rounded)
	// rather than drawn one by one, but for those a worker held at the
	// cut-off.
	Requests int64 `json:"requests"`
	Reads    int64 `json:"reads"`
	Writes   int64 `json:"writes"`
	// Hits and Misses split the successful reads (a 404 from the service
	// API is a miss, not an error, but for its "no such route" 404, which
	// read no entry).
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	// Throughput is the requests sent per second: (Requests - NotSent) /
	// Seconds.
	Throughput float64 `json:"throughput"`
	// Errors counts the failed requests, NotSent included.
	Errors int64 `json:"errors"`
	// NotSent counts the requests of a paced run that were due but not
	// sent before the run stopped (Duration reached or ctx done) because
	// every worker was busy: the generator was behind its schedule. They
	// are counted in Errors, of kind "not sent (generator behind)".
	NotSent int64 `json:"not_sent,omitempty"`
	// ErrorKinds counts the failed requests by kind ("status 503",
	// "timeout", "connection refused", "not sent (generator behind)",
	// ...), with one example message.
	ErrorKinds map[string]*ErrorCount `json:"error_kinds,omitempty"`
	// Latency of every request counted in Requests, failed ones included.
	// A request not sent counts in an open-loop run with the time from
	// when it was due to when the run stopped; in a closed-loop run, where
	// latency starts at the send, it has none.
	Latency Latency `json:"latency"`
	// SendLag is how late the workers sent paced requests: the time from
	// when a request was due to when it was sent (for a request not sent,
	// to when the run stopped). In an open-loop run it is part of Latency.
	SendLag *Latency `json:"send_lag,omitempty"`
	// ResponseTime (paced runs) is the time from when a request was
	// actually sent to its response: Latency without the send lag. In a
	// closed-loop run it is Latency. Requests not sent have none.
	ResponseTime *Latency `json:"response_time,omitempty"`
	// BeyondRange counts latencies above the histogram's range (1 hour),
	// recorded as 1 hour.
	BeyondRange int64 `json:"beyond_range,omitempty"`
	RYW         *RYW  `json:"read_your_writes,omitempty"`
}

// ErrorCount is one row of Report.ErrorKinds.
type ErrorCount struct {
	Count   int64  `json:"count"`
	Example string `json:"example,omitempty"`
}

// Latency summarises a histogram, in milliseconds.
type Latency struct {
	Count  int64   `json:"count"`
	Mean   float64 `json:"mean_ms"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	P999   float64 `json:"p99_9_ms"`
	P9999  float64 `json:"p99_99_ms"`
	P99999 float64 `json:"p99_999_ms"`
	Max    float64 `json:"max_ms"`
}

// RYW is the outcome of the read-your-writes check. Missing and Mismatch
// are violations; the other outcomes are not.
type RYW struct {
	Checks int64 `json:"checks"`
	// Missing reads, right after a write, did not find the key (and it
	// cannot have expired: see Expired).
	Missing int64 `json:"missing"`
	// Mismatch reads found another value: one never written, or written
	// to another key, or by a write of the key that had completed before
	// the checked one was sent (a stale value).
	Mismatch int64 `json:"mismatch"`
	// Errors counts the reads that failed, including answers too large to
	// be a written value.
	Errors int64 `json:"errors"`
	// Superseded reads returned the value of another write of the same
	// key that was concurrent with or later than the checked one: correct.
	Superseded int64 `json:"superseded"`
	// Expired reads did not find the key, but the entry may have expired:
	// the writes carried a TTL (Options.TTL), and the read completed that
	// TTL or more after the write was sent. Not a violation.
	Expired int64 `json:"expired"`
	// WarmupChecks counts the check reads of the writes of the warm-up,
	// which are counted nowhere else (the server served them all the
	// same).
	WarmupChecks int64 `json:"warmup_checks"`
}

// summarize summarizes h; an empty histogram gives a zero Latency.
func summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(v int64) float64 { return float64(v) / 1e6 }
	return Latency{
		Count:  h.TotalCount(),
		Mean:   h.Mean() / 1e6,
		P50:    ms(h.ValueAtQuantile(50)),
		P90:    ms(h.ValueAtQuantile(90)),
		P99:    ms(h.ValueAtQuantile(99)),
		P999:   ms(h.ValueAtQuantile(99.9)),
		P9999:  ms(h.ValueAtQuantile(99.99)),
		P99999: ms(h.ValueAtQuantile(99.999)),
		Max:    ms(h.Max()),
	}
}

func (r *runner) report(start, end time.Time) *Report {
	o := &r.o
	rep := &Report{
		Mode: o.Mode, URL: redactURL(o.URL), Loop: "closed", TargetRate: o.Rate, Concurrency: o.Concurrency,
		WriteRatio: o.WriteRatio, Cardinality: o.Cardinality, Group: o.Group, Zipf: o.Zipf,
		Sequential: o.Sequential, Seed: o.Seed, Start: start, Warmup: o.Warmup.Seconds(),
	}
	if o.Rate > 0 && !o.Closed {
		rep.Loop = "open"
	}
	if o.WriteRatio > 0 {
		rep.WriteMethod, rep.Batch, rep.ValueSize = o.WriteMethod, o.Batch, o.ValueSize
	}
	total, lag, response := newHist(), newHist(), newHist()
	var c counts
	kinds := map[string]*ErrorCount{}
	for _, rec := range r.stripes {
		rec.mu.Lock()
		total.Merge(rec.total)
		lag.Merge(rec.lag)
		response.Merge(rec.response)
		x := rec.counts
		c.requests += x.requests
		c.reads += x.reads
		c.writes += x.writes
		c.hits += x.hits
		c.misses += x.misses
		c.errors += x.errors
		c.warmup += x.warmup
		c.notSent += x.notSent
		c.rywChecks += x.rywChecks
		c.rywMissing += x.rywMissing
		c.rywMismatch += x.rywMismatch
		c.rywErrors += x.rywErrors
		c.rywSuperseded += x.rywSuperseded
		c.rywExpired += x.rywExpired
		c.rywWarmup += x.rywWarmup
		c.beyondRange += x.beyondRange
		for k, e := range rec.errors {
			if kinds[k] == nil {
				kinds[k] = &ErrorCount{Example: e.Example}
			}
			kinds[k].Count += e.Count
		}
		rec.mu.Unlock()
	}
	rep.Requests, rep.Reads, rep.Writes = c.requests, c.reads, c.writes
	rep.Hits, rep.Misses, rep.Errors, rep.WarmupRequests = c.hits, c.misses, c.errors, c.warmup
	rep.BeyondRange, rep.NotSent = c.beyondRange, c.notSent
	if len(kinds) > 0 {
		rep.ErrorKinds = kinds
	}
	measured := end.Sub(start) - o.Warmup
	if measured > 0 {
		rep.Seconds = measured.Seconds()
		rep.Throughput = float64(c.requests-c.notSent) / rep.Seconds
	}
	rep.Latency = summarize(total)
	if o.Rate > 0 {
		l := summarize(lag)
		rep.SendLag = &l
		if !o.Closed {
			rt := summarize(response)
			rep.ResponseTime = &rt
		}
	}
	if o.RYW {
		rep.RYW = &RYW{
			Checks: c.rywChecks, Missing: c.rywMissing, Mismatch: c.rywMismatch, Errors: c.rywErrors,
			Superseded: c.rywSuperseded, Expired: c.rywExpired, WarmupChecks: c.rywWarmup,
		}
	}
	return rep
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes the report for people.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	rate := "unpaced"
	if rep.TargetRate > 0 {
		rate = plainNumber(rep.TargetRate) + " req/s"
	}
	workers := "workers"
	if rep.Concurrency == 1 {
		workers = "worker"
	}
	fmt.Fprintf(&b, "target       %s %s, %s loop, %s, %d %s\n", rep.Mode, rep.URL, rep.Loop, rate, rep.Concurrency, workers)
	keys := "uniform"
	switch {
	case rep.Zipf > 0:
		keys = fmt.Sprintf("Zipf(%g)", rep.Zipf)
	case rep.Sequential:
		keys = "sequential"
	}
	fmt.Fprintf(&b, "keys         %d %s, group %d, seed %d", rep.Cardinality, keys, rep.Group, rep.Seed)
	if rep.WriteRatio > 0 {
		fmt.Fprintf(&b, "; writes %s%% by %s, %d-byte values", plainNumber(100*rep.WriteRatio), rep.WriteMethod, rep.ValueSize)
		if rep.Batch > 1 {
			fmt.Fprintf(&b, " in batches of %d", rep.Batch)
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "requests     %d in %.2fs (after %d warm-up requests): %d reads (%d hits, %d misses), %d writes\n",
		rep.Requests, rep.Seconds, rep.WarmupRequests, rep.Reads, rep.Hits, rep.Misses, rep.Writes)
	fmt.Fprintf(&b, "throughput   %.1f req/s", rep.Throughput)
	if rep.NotSent > 0 {
		fmt.Fprintf(&b, " sent; %d requests due were not sent (generator behind)", rep.NotSent)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "errors       %d\n", rep.Errors)
	// The kinds' column is as wide as the longest (kindNotSent is longer
	// than most), so that the counts line up.
	width := 22
	for k := range rep.ErrorKinds {
		width = max(width, len(k))
	}
	for _, k := range slices.Sorted(maps.Keys(rep.ErrorKinds)) {
		e := rep.ErrorKinds[k]
		fmt.Fprintf(&b, "  %-*s %d", width, k, e.Count)
		if e.Example != "" { // none for a status
			fmt.Fprintf(&b, "  (e.g. %s)", e.Example)
		}
		b.WriteString("\n")
	}
	writeLatency(&b, "latency", rep.Latency)
	if rep.SendLag != nil {
		writeLatency(&b, "send lag", *rep.SendLag)
	}
	if rep.ResponseTime != nil {
		writeLatency(&b, "from send", *rep.ResponseTime)
	}
	if rep.BeyondRange > 0 {
		fmt.Fprintf(&b, "beyond range %d latencies above 1h, recorded as 1h\n", rep.BeyondRange)
	}
	if rep.RYW != nil {
		fmt.Fprintf(&b, "read-your-writes  %d checks: %d missing, %d mismatched, %d failed reads (%d superseded by concurrent writes, %d missing after the TTL: correct)\n",
			rep.RYW.Checks, rep.RYW.Missing, rep.RYW.Mismatch, rep.RYW.Errors, rep.RYW.Superseded, rep.RYW.Expired)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plainNumber formats v with at most 6 significant digits and no exponent
// (1000000, not 1e+06; 0.00001, not 9.999999999999999e-06).
func plainNumber(v float64) string {
	rounded, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil { // not reached: FormatFloat's output parses
		rounded = v
	}
	return strconv.FormatFloat(rounded, 'f', -1, 64)
}

func writeLatency(b *strings.Builder, name string, l Latency) {
	fmt.Fprintf(b, "%-12s mean %.3fms  p50 %.3fms  p90 %.3fms  p99 %.3fms  p99.9 %.3fms  p99.99 %.3fms  p99.999 %.3fms  max %.3fms\n",
		name, l.Mean, l.P50, l.P90, l.P99, l.P999, l.P9999, l.P99999, l.Max)
}

// redactURL returns the URL s with the password of its user information,
// if any, replaced by "xxxxx" (as url.URL.Redacted does, but keeping the
// rest as written: Redacted would escape the braces of {key}).
func redactURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return s
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return s
	}
	return s[:i+3] + user + ":xxxxx" + rest[at:]
}
