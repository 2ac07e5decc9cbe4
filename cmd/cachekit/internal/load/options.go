package load

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Modes of Options.Mode.
const (
	// ModeAPI drives the cachekit service API: reads are
	// GET /v1/entries/{key}, writes are POST /v1/entries (the articles' JSON
	// message) or PUT /v1/entries/{key}.
	ModeAPI = "api"
	// ModeGet sends plain GET requests to any URL.
	ModeGet = "get"
)

// DefaultTimeout is the default of Options.Timeout.
const DefaultTimeout = 10 * time.Second

// Upper bounds of the options that size what a run holds in memory: the
// workers (goroutines, connections) and each request's body, which every
// worker builds in full.
const (
	MaxConcurrency = 100_000
	MaxValueSize   = 64 << 20  // bytes
	MaxBody        = 256 << 20 // bytes per request body: Batch entries, with their keys and JSON
	MaxKeyPrefix   = 1024      // bytes
)

// Write methods of Options.WriteMethod.
const (
	WritePost = "post"
	WritePut  = "put"
)

// Options configures a run. The zero value of each field selects the
// default stated beside it; Run checks the options and returns an error
// for a value it cannot honour.
type Options struct {
	// URL is the target, required. In ModeAPI it is the base URL of the
	// service (scheme://host:port, optionally with a path prefix). In
	// ModeGet it is fetched as it is, with every "{key}" in it replaced by
	// the request's key (so --cardinality selects how many distinct URLs
	// are requested); a URL without "{key}" is the same for every request.
	// User information in the URL (http://user:password@host) is sent as
	// HTTP basic authentication; the report shows the password as "xxxxx".
	URL string
	// Mode is ModeAPI (default) or ModeGet.
	Mode string
	// Rate is the target rate in requests per second (RYW check reads not
	// included). 0 (default) sends as fast as the workers can: a closed
	// loop.
	Rate float64
	// Closed makes a paced run (Rate > 0) closed-loop: requests are still
	// paced, but latency is measured from the moment a request is actually
	// sent. Default false: a paced run is open-loop, each request's latency
	// is measured from the moment it was scheduled to be sent, so a slow
	// response delays the measurement of the requests queued behind it
	// instead of hiding them (no coordinated omission).
	Closed bool
	// Concurrency is the number of workers, each with at most one request
	// in flight (and so at most one connection in use). Default 16; at
	// most MaxConcurrency.
	Concurrency int
	// Duration bounds the run in time; Requests bounds it in requests.
	// With both, the first reached ends the run; with neither, Duration is
	// 10s. A paced run sends nothing from Duration on and waits for the
	// requests in flight (at most Timeout): the requests due before
	// Duration that the workers, all busy, had not sent by then are
	// counted as failed, of kind "not sent (generator behind)" (see
	// Report.NotSent), so the run ends within Timeout of Duration (twice
	// Timeout with RYW, whose check read follows its write). A paced run
	// bounded by Requests only sends every request, however late.
	Duration time.Duration
	Requests int64
	// Warmup excludes the requests scheduled (or, unpaced, sent) during
	// the first Warmup of the run from the statistics. It must be shorter
	// than Duration (when the run has one). Default 0.
	Warmup time.Duration
	// Cardinality is the number of distinct keys. Default 10000.
	Cardinality int
	// Group is the number of consecutive requests that use the same key;
	// with enough workers they are in flight at once, like concurrent
	// callers of one hot key (in a paced run they are all due at the same
	// moment, every Group/Rate seconds). Default 1.
	Group int
	// Zipf, when above 1 (and finite), draws keys from a Zipf distribution
	// with this exponent (key 0 the most frequent). Default 0: uniform.
	Zipf float64
	// Sequential takes keys in order 0, 1, ..., Cardinality-1, 0, ...
	// instead of at random, for example to preload every key once.
	// Default false.
	Sequential bool
	// WriteRatio is the fraction of requests that are writes, in [0, 1].
	// ModeAPI only. Default 0.
	WriteRatio float64
	// WriteMethod is WritePost (default: POST /v1/entries with
	// {"id": key, "entry": value}) or WritePut (PUT /v1/entries/{key}).
	WriteMethod string
	// Batch is the number of entries in each POST (a JSON array when
	// above 1), for consecutive keys starting at the drawn one. Default 1.
	Batch int
	// ValueSize is the size in bytes of each written value: with
	// WritePost a JSON object {"seq":N,"pad":"xx..."} of exactly this size
	// (or the smallest such object, when ValueSize is smaller), with
	// WritePut raw bytes. Values differ from write to write, so a stale
	// read is caught by the read-your-writes check. Default 256; at most
	// MaxValueSize, and a POST of Batch entries (with their keys and
	// JSON) at most MaxBody bytes.
	ValueSize int
	// TTL, when positive, is sent with each write (header Cache-TTL).
	// Default 0: the service's default TTL.
	TTL time.Duration
	// KeyPrefix is put before the key's number. It may hold letters,
	// digits and "-._~:", at most MaxKeyPrefix bytes. Default "key-".
	KeyPrefix string
	// RYW checks read-your-writes: after each successful write, the
	// worker reads the key (the first key of a batch) back through a
	// second client with its own connections, and counts the reads that
	// miss or return another value (see Report.RYW). With a TTL, a miss
	// read TTL or more after the write was sent is counted as expired, not
	// as missing. ModeAPI only, and only with writes (WriteRatio above 0).
	// Default false.
	RYW bool
	// Timeout bounds each request as a whole: connecting, sending and
	// reading the response, and with the built-in client the one retry on
	// a new connection when a kept-alive one turns out closed (of a GET or
	// HEAD, or of a request that could not be written: a write sent whole
	// is never sent twice). Default 10s.
	Timeout time.Duration
	// Seed seeds the key and operation streams. Default 0: a seed drawn
	// at random, reported in Report.Seed.
	Seed uint64
	// Live, when set, receives a line of statistics every LiveInterval
	// while the run lasts. With LiveTerminal the line is rewritten in
	// place (carriage return) instead of one line per interval.
	Live         io.Writer
	LiveTerminal bool
	// LiveInterval is the period of the live line. Default 1s.
	LiveInterval time.Duration
	// Client sends the requests, RYWClient the read-your-writes reads
	// (give them separate transports, so that the check reads on other
	// connections). Default: for http URLs, a built-in HTTP/1.1 client
	// with one connection per worker for its requests and another for its
	// checks (it costs about half the CPU of net/http's client, which
	// matters when the generator shares the machine with the server); for
	// https URLs, net/http clients with their own transports. Neither
	// default follows redirects: a redirected read counts as a success, a
	// redirected write as a failure.
	Client    *http.Client
	RYWClient *http.Client
	// Clock schedules and timestamps requests. Default: the real clock.
	Clock Clock
}

// Check returns the error Run would return for o before sending anything
// (invalid options or URL), or nil.
func (o Options) Check() error {
	o, err := o.withDefaults()
	if err != nil {
		return err
	}
	return (&runner{o: o}).parseURL()
}

// defaults returns o with its defaults filled in, after checking it.
func (o Options) withDefaults() (Options, error) {
	if o.URL == "" {
		return o, errors.New("load: a URL is required")
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return o, fmt.Errorf("load: URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return o, fmt.Errorf("load: URL %q: the scheme must be http or https", o.URL)
	}
	if u.Host == "" {
		return o, fmt.Errorf("load: URL %q has no host", o.URL)
	}
	if o.Mode == "" {
		o.Mode = ModeAPI
	}
	if o.Mode != ModeAPI && o.Mode != ModeGet {
		return o, fmt.Errorf("load: unknown mode %q (want %s or %s)", o.Mode, ModeAPI, ModeGet)
	}
	if o.Mode == ModeAPI && (u.RawQuery != "" || u.Fragment != "") {
		return o, fmt.Errorf("load: in mode %s the URL is the service's base URL, without query", ModeAPI)
	}
	if !(o.Rate >= 0) || math.IsInf(o.Rate, 0) {
		return o, fmt.Errorf("load: the rate must be a finite number, not negative, not %v", o.Rate)
	}
	if o.Rate > 0 && 1e9/o.Rate >= math.MaxInt64 {
		return o, fmt.Errorf("load: the rate %v is too low: one request every %v at most", o.Rate, time.Duration(math.MaxInt64))
	}
	if o.Closed && o.Rate == 0 {
		// Unpaced runs are closed-loop anyway.
		o.Closed = false
	}
	if o.Concurrency == 0 {
		o.Concurrency = 16
	}
	if o.Concurrency < 0 {
		return o, errors.New("load: the concurrency must be positive")
	}
	if o.Concurrency > MaxConcurrency {
		return o, fmt.Errorf("load: the concurrency %d exceeds %d", o.Concurrency, MaxConcurrency)
	}
	if o.Duration < 0 || o.Requests < 0 || o.Warmup < 0 {
		return o, errors.New("load: duration, requests and warmup must not be negative")
	}
	if o.Duration == 0 && o.Requests == 0 {
		o.Duration = 10 * time.Second
	}
	if o.Duration > 0 && o.Warmup >= o.Duration {
		return o, fmt.Errorf("load: the warm-up (%v) must be shorter than the duration (%v)", o.Warmup, o.Duration)
	}
	if o.Cardinality == 0 {
		o.Cardinality = 10_000
	}
	if o.Cardinality < 0 {
		return o, errors.New("load: the cardinality must be positive")
	}
	if o.Group == 0 {
		o.Group = 1
	}
	if o.Group < 0 {
		return o, errors.New("load: the group must be positive")
	}
	if o.Zipf != 0 && !(o.Zipf > 1 && !math.IsInf(o.Zipf, 1)) {
		return o, fmt.Errorf("load: the Zipf exponent must be a finite number above 1 (or 0 for uniform keys), not %g", o.Zipf)
	}
	if o.Zipf != 0 && o.Sequential {
		return o, errors.New("load: choose either Zipf or sequential keys")
	}
	if !(o.WriteRatio >= 0 && o.WriteRatio <= 1) {
		return o, fmt.Errorf("load: the write ratio must be in [0, 1], not %g", o.WriteRatio)
	}
	if o.Mode == ModeGet && (o.WriteRatio > 0 || o.RYW) {
		return o, fmt.Errorf("load: writes and the read-your-writes check need mode %s", ModeAPI)
	}
	if o.RYW && o.WriteRatio == 0 {
		return o, errors.New("load: the read-your-writes check needs writes (a write ratio above 0)")
	}
	if o.WriteMethod == "" {
		o.WriteMethod = WritePost
	}
	if o.WriteMethod != WritePost && o.WriteMethod != WritePut {
		return o, fmt.Errorf("load: unknown write method %q (want %s or %s)", o.WriteMethod, WritePost, WritePut)
	}
	if o.Batch == 0 {
		o.Batch = 1
	}
	if o.Batch < 0 || (o.Batch > 1 && o.WriteMethod != WritePost) {
		return o, errors.New("load: the batch must be positive, and above 1 only with POST writes")
	}
	if o.Batch > o.Cardinality {
		return o, errors.New("load: the batch must not exceed the cardinality")
	}
	if o.ValueSize == 0 {
		o.ValueSize = 256
	}
	if o.ValueSize < 0 {
		return o, errors.New("load: the value size must be positive")
	}
	if o.ValueSize > MaxValueSize {
		return o, fmt.Errorf("load: the value size %d exceeds %d bytes", o.ValueSize, MaxValueSize)
	}
	if o.TTL < 0 {
		return o, errors.New("load: the TTL must not be negative")
	}
	if o.KeyPrefix == "" {
		o.KeyPrefix = "key-"
	}
	if strings.IndexFunc(o.KeyPrefix, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~:", r))
	}) >= 0 {
		return o, fmt.Errorf("load: the key prefix %q may hold only letters, digits and the characters %q", o.KeyPrefix, "-._~:")
	}
	if len(o.KeyPrefix) > MaxKeyPrefix {
		return o, fmt.Errorf("load: the key prefix is %d bytes long, more than %d", len(o.KeyPrefix), MaxKeyPrefix)
	}
	if per := o.entryBytes(); o.Batch > MaxBody/per {
		return o, fmt.Errorf("load: a batch of %d entries of up to %d bytes each (values of %d bytes) exceeds %d bytes per request",
			o.Batch, per, o.ValueSize, MaxBody)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Timeout < 0 {
		return o, errors.New("load: the timeout must be positive")
	}
	if o.LiveInterval <= 0 {
		o.LiveInterval = time.Second
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	return o, nil
}

// entryBytes bounds the bytes of one entry of a request body: with POST,
// {"id":"<key>","entry":<value>} and a separator, the value being a JSON
// object of ValueSize bytes or the smallest one (appendValue); with PUT,
// the raw value.
func (o Options) entryBytes() int {
	const number = 20 // digits of a uint64
	if o.WriteMethod != WritePost {
		return max(o.ValueSize, len("seq=;")+number)
	}
	value := max(o.ValueSize, len(`{"seq":,"pad":""}`)+number)
	return len(`{"id":"`) + len(o.KeyPrefix) + number + len(`","entry":`) + value + len(`},`)
}
