// Package load is the engine of cachekit load, an HTTP load generator for
// the cachekit service and for any URL.
//
// A run has Concurrency workers. Each takes the next job from a shared
// scheduler (its key, whether it is a read or a write, and in a paced run
// the moment it is due), waits until it is due, sends it and records its
// latency in an HDR histogram. In an open-loop run (Rate > 0, the default
// for paced runs) latency is measured from the moment the request was due,
// not from when a worker got round to sending it: when the server stalls,
// the requests that should have been sent meanwhile are charged the wait,
// as real clients arriving at that rate would be (no coordinated omission).
// How late the workers themselves were is reported separately as the send
// lag, so a generator that cannot keep up is visible. A paced run sends
// nothing from its end (Duration) or its cancellation on: the requests
// that were due by then but that the workers, all busy, had not sent are
// counted as failed ("not sent"), with the time they waited as latency,
// rather than sent late or left out.
package load

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to 1 hour, 3 significant digits, in nanoseconds.
const (
	histMin    = int64(time.Microsecond)
	histMax    = int64(time.Hour)
	histDigits = 3
)

// newHist returns a histogram of nanoseconds. Its lowest discernible value
// is 1 ns, not histMin (the floor recorded values are clamped to): the
// histogram's unit is the power of two at or below that value, and with
// histMin it was 512 ns, so every latency under about 1 ms (a cache over
// loopback) was counted in 512 ns steps, up to 2.4% off, not to 3 digits.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMax, histDigits) }

// Run runs the load described by o until its duration or request count is
// reached or ctx is done, and returns the report. When ctx is done, no new
// request is sent and the requests in flight are allowed to finish (within
// Options.Timeout); the report covers what was done. In a paced run, the
// requests that were due when ctx was done but not sent yet are counted as
// not sent, as at the end of Duration.
func Run(ctx context.Context, o Options) (*Report, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64() | 1
	}
	r := &runner{o: o}
	if err := r.parseURL(); err != nil {
		return nil, err
	}
	if r.scheme != "http" {
		// net/http for https: one client for the requests, another for
		// the RYW reads, so that those use other connections. They follow
		// no redirect, as the built-in client: a write answered with one
		// stored nothing, and following it (a 302 as a GET of another
		// page) would count it as a success.
		for _, c := range []**http.Client{&r.defaultClient, &r.defaultRYWClient} {
			tr := newTransport(o.Concurrency)
			defer tr.CloseIdleConnections()
			*c = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			}}
		}
	}
	if o.RYW {
		r.writes = newWriteLog()
	}
	r.stripes = newRecorders(min(o.Concurrency, 16))
	r.liveHist = newHist()

	start := o.Clock.Now()
	r.start = start
	r.warmEnd = start.Add(o.Warmup)
	r.sched = newScheduler(&r.o, start)
	if o.Rate > 0 {
		// The cut-off of a paced run is the moment ctx is done (the
		// workers, which may be busy, would notice it later).
		stop := context.AfterFunc(ctx, func() { r.sched.cancel(o.Clock.Now()) })
		defer stop()
	}

	var live sync.WaitGroup
	liveStop := make(chan struct{})
	if o.Live != nil {
		live.Add(1)
		go func() {
			defer live.Done()
			r.liveLoop(liveStop)
		}()
	}
	var wg sync.WaitGroup
	for i := range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(ctx, r.stripes[i%len(r.stripes)])
		}()
	}
	wg.Wait()
	end := r.end()
	close(liveStop)
	live.Wait()
	if o.Live != nil && o.LiveTerminal {
		fmt.Fprintln(o.Live)
	}
	return r.report(start, end), nil
}

func newTransport(conns int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

type runner struct {
	o        Options
	scheme   string // http or https
	host     string // the Host header
	hostPort string // the address to dial
	origin   string // scheme://host
	prefix   string // API mode: the URL's path without its trailing slash
	target   string // get mode: the request target (path and query), maybe with {key}
	auth     string // the Authorization header for the URL's user information, or ""

	defaultClient, defaultRYWClient *http.Client // https only
	sched                           *scheduler
	start                           time.Time
	warmEnd                         time.Time
	stripes                         []*recorder
	ttl                             string // the Cache-TTL header of writes
	lastMu                          sync.Mutex
	lastDone                        time.Time     // when the last request sent completed, its RYW check included
	writeNo                         atomic.Uint64 // numbers the written values
	writes                          *writeLog     // RYW check only

	// Live line state, owned by liveLoop.
	liveHist *hdrhistogram.Histogram
	liveLast time.Time
}

// worker state, owned by one worker.
type workerBuf struct {
	body   []byte   // request body
	value  []byte   // the (first) value written, for the RYW check
	seqs   []uint64 // the numbers of the values written by the current request
	keys   []uint64 // the numbers of their keys
	sent   int64    // when it was sent, ns since the start
	key    []byte
	read   []byte // response body, for the RYW check
	target []byte // request target
}

func (r *runner) work(ctx context.Context, rec *recorder) {
	var b workerBuf
	main := r.newSender(firstClient(r.o.Client, r.defaultClient))
	defer main.close()
	var check sender
	if r.o.RYW {
		check = r.newSender(firstClient(r.o.RYWClient, r.defaultRYWClient))
		defer check.close()
	}
	paced := r.o.Rate > 0
	var last time.Time // when this worker's last request completed
	defer func() { r.noteDone(last) }()
	sleepUntil := r.o.Clock.SleepUntil
	if _, real := r.o.Clock.(realClock); real && paced {
		if ps, err := newPreciseSleeper(ctx); err == nil {
			defer ps.close()
			sleepUntil = ps.sleepUntil
		}
	}
	for {
		if ctx.Err() != nil {
			if !paced {
				return
			}
			// Take the jobs due before the cut-off, to count them as not
			// sent (the AfterFunc of Run may not have run yet).
			r.sched.cancel(r.o.Clock.Now())
		}
		j, ok := r.sched.next(r.o.Clock.Now())
		if !ok {
			return
		}
		if paced {
			sleepUntil(ctx, j.intended) // returns early when ctx is done
			now := r.o.Clock.Now()
			if ctx.Err() != nil {
				r.sched.cancel(now)
			}
			if cutoff, ok := r.sched.cutoffTime(); ok && !now.Before(cutoff) {
				if j.intended.Before(cutoff) {
					// Due, but the workers were too busy to send it in time.
					rec.recordNotSent(j, cutoff.Sub(j.intended), !r.o.Closed, j.intended.Before(r.warmEnd))
				}
				// Nor are the jobs still due before the cut-off: all are
				// counted at once.
				rec.recordBacklog(r.sched.drain(), !r.o.Closed, r.warmEnd, r.o.WriteRatio)
				continue
			}
		}
		sent := r.o.Clock.Now()
		b.sent = int64(sent.Sub(r.start))
		out := r.send(main, &b, j)
		done := r.o.Clock.Now()
		from := sent
		if paced && !r.o.Closed {
			from = j.intended
		}
		at := sent
		if paced {
			at = j.intended
		}
		warm := at.Before(r.warmEnd)
		rec.record(j, out, done.Sub(from), done.Sub(sent), sent.Sub(j.intended), paced, warm)
		last = done
		if j.write && out.ok && r.o.RYW {
			ryw := r.verify(check, &b)
			rec.recordRYW(ryw, warm)
			last = r.o.Clock.Now()
		}
	}
}

// noteDone notes that a worker's last request completed at t (zero if it
// sent none).
func (r *runner) noteDone(t time.Time) {
	r.lastMu.Lock()
	defer r.lastMu.Unlock()
	if t.After(r.lastDone) {
		r.lastDone = t
	}
}

// end returns the end of the run, once the workers are done, for
// Report.Seconds: when the last request sent completed or, in a paced run,
// the end of its schedule if that is later. A paced run lasts as long as
// its schedule even when its last request completes before that (at 2
// req/s for 2 s, the last request is due at 1.5 s), and the requests due
// but not sent are charged up to the cut-off, not up to when the workers
// got round to counting them.
func (r *runner) end() time.Time {
	r.lastMu.Lock()
	end := r.lastDone
	r.lastMu.Unlock()
	if sched, ok := r.sched.scheduleEnd(); ok && sched.After(end) {
		end = sched
	}
	if end.IsZero() {
		end = r.o.Clock.Now()
	}
	return end
}

// kindNotSent is the kind of error of the requests of a paced run that
// were due but not sent before its end (Duration) or its cancellation,
// because every worker was busy; notSentText is its example message.
const (
	kindNotSent = "not sent (generator behind)"
	notSentText = "due, but not sent before the run stopped: every worker was busy (raise the concurrency or lower the rate)"
)

// outcome is the result of one request.
type outcome struct {
	ok      bool   // the request succeeded (a read miss in mode API is a success)
	hit     bool   // a read found its key
	errKind string // why it failed, when !ok
	errText string
}

// appendKey appends the key numbered n.
func (r *runner) appendKey(dst []byte, n uint64) []byte {
	dst = append(dst, r.o.KeyPrefix...)
	return strconv.AppendUint(dst, n, 10)
}

// appendValue appends a value of r.o.ValueSize bytes (or the smallest
// possible) numbered seq: JSON for POST writes, raw bytes for PUT.
func (r *runner) appendValue(dst []byte, seq uint64) []byte {
	start := len(dst)
	if r.o.WriteMethod == WritePost {
		dst = append(dst, `{"seq":`...)
		dst = strconv.AppendUint(dst, seq, 10)
		dst = append(dst, `,"pad":"`...)
		for len(dst)-start < r.o.ValueSize-2 {
			dst = append(dst, 'x')
		}
		return append(dst, `"}`...)
	}
	dst = append(dst, "seq="...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, ';')
	for len(dst)-start < r.o.ValueSize {
		dst = append(dst, 'x')
	}
	return dst
}

// send sends job j and reads its response.
func (r *runner) send(snd sender, b *workerBuf, j job) outcome {
	req := request{method: http.MethodGet}
	switch {
	case r.o.Mode == ModeGet:
		b.target = append(b.target[:0], r.target...)
		if i := strings.Index(r.target, "{key}"); i >= 0 {
			b.key = r.appendKey(b.key[:0], j.key)
			b.target = b.target[:0]
			rest := r.target
			for ; i >= 0; i = strings.Index(rest, "{key}") {
				b.target = append(append(b.target, rest[:i]...), b.key...)
				rest = rest[i+len("{key}"):]
			}
			b.target = append(b.target, rest...)
		}
	case !j.write:
		b.key = r.appendKey(b.key[:0], j.key)
		b.target = r.entryTarget(b.target[:0], b.key)
	case r.o.WriteMethod == WritePut:
		b.key = r.appendKey(b.key[:0], j.key)
		b.target = r.entryTarget(b.target[:0], b.key)
		b.seqs = append(b.seqs[:0], r.writeNo.Add(1))
		b.keys = append(b.keys[:0], j.key)
		b.value = r.appendValue(b.value[:0], b.seqs[0])
		req.method, req.body = http.MethodPut, b.value
	default: // POST
		b.body = b.body[:0]
		b.seqs = b.seqs[:0]
		b.keys = b.keys[:0]
		if r.o.Batch > 1 {
			b.body = append(b.body, '[')
		}
		for i := range r.o.Batch {
			if i > 0 {
				b.body = append(b.body, ',')
			}
			key := (j.key + uint64(i)) % uint64(r.o.Cardinality)
			b.body = append(b.body, `{"id":"`...)
			b.body = r.appendKey(b.body, key)
			b.body = append(b.body, `","entry":`...)
			vstart := len(b.body)
			b.seqs = append(b.seqs, r.writeNo.Add(1))
			b.keys = append(b.keys, key)
			b.body = r.appendValue(b.body, b.seqs[i])
			if i == 0 {
				b.key = r.appendKey(b.key[:0], j.key)
				b.value = append(b.value[:0], b.body[vstart:]...)
			}
			b.body = append(b.body, '}')
		}
		if r.o.Batch > 1 {
			b.body = append(b.body, ']')
		}
		b.target = append(append(b.target[:0], r.prefix...), "/v1/entries"...)
		req.method, req.body, req.contentType = http.MethodPost, b.body, "application/json"
	}
	req.target = b.target
	if j.write && r.o.TTL > 0 {
		req.ttl = r.ttl
	}
	if j.write && r.writes != nil {
		r.writes.begin(b.seqs, b.keys)
	}
	status, body, err := snd.send(&req, false, b.read[:0])
	b.read = body
	if err != nil {
		return failure(err)
	}
	if j.write && r.writes != nil && status >= 200 && status < 300 {
		// A failed write stays "in flight": it may or may not have been applied.
		r.writes.finish(b.seqs, int64(r.o.Clock.Now().Sub(r.start)))
	}
	switch {
	case r.o.Mode == ModeAPI && !j.write && status == http.StatusNotFound:
		if bytes.Contains(body, noRoute) {
			// The service's 404 for a route it does not have (a URL
			// whose path is not the API's prefix) read no entry: counted
			// as a miss, it made a run against the wrong URL look like a
			// cold cache.
			return outcome{errKind: "status 404 (no such route)", errText: string(bytes.TrimSpace(body[:min(len(body), 200)]))}
		}
		return outcome{ok: true}
	case j.write && status >= 300:
		// The service stores on 2xx only: a redirect (which the client
		// does not follow for a write) stored nothing.
		return outcome{errKind: "status " + strconv.Itoa(status)}
	case status >= 200 && status < 400:
		return outcome{ok: true, hit: !j.write}
	default:
		return outcome{errKind: "status " + strconv.Itoa(status)}
	}
}

// noRoute is in the body of the service's 404 for an unknown route
// (service's errNoRoute), and not in that of its 404 for a missing entry.
var noRoute = []byte("no such route")

// entryTarget appends the request target of key's entry.
func (r *runner) entryTarget(dst, key []byte) []byte {
	dst = append(dst, r.prefix...)
	dst = append(dst, "/v1/entries/"...)
	return append(dst, key...)
}

// parseURL splits Options.URL into what the senders need.
func (r *runner) parseURL() error {
	u, err := url.Parse(r.o.URL)
	if err != nil {
		return fmt.Errorf("load: URL: %w", err)
	}
	r.scheme, r.host = u.Scheme, u.Host
	if u.User != nil {
		// Sent as net/http's client sends a URL's credentials.
		pw, _ := u.User.Password()
		r.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
	}
	r.origin = u.Scheme + "://" + u.Host
	r.hostPort = u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		r.hostPort = net.JoinHostPort(u.Hostname(), port)
	}
	r.prefix = strings.TrimSuffix(u.EscapedPath(), "/")
	// The target as written (url.URL would escape the braces of {key}):
	// what follows scheme://authority, without the fragment, which is cut
	// first: a '/' or '?' in it is no path or query ("http://host#a/b"
	// requests "/").
	rest, _, _ := strings.Cut(r.o.URL[strings.Index(r.o.URL, "://")+3:], "#")
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[i:]
	} else {
		rest = ""
	}
	if rest == "" || rest[0] == '?' {
		rest = "/" + rest
	}
	r.target = escapeTarget(rest)
	if r.o.TTL > 0 {
		r.ttl = r.o.TTL.String()
	}
	return nil
}

// escapeTarget percent-encodes the bytes of a request target that cannot
// be sent as they are (spaces, control characters and bytes outside ASCII,
// which url.Parse accepts), as net/http's client does for a URL's path.
func escapeTarget(t string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c > ' ' && c < 0x7f {
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(t)+16), t[:i]...)
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	if b == nil {
		return t
	}
	return string(b)
}

func firstClient(cs ...*http.Client) *http.Client {
	for _, c := range cs {
		if c != nil {
			return c
		}
	}
	return nil
}

// rywResult is the result of one read-your-writes check.
type rywResult int

const (
	rywOK         rywResult = iota
	rywMissing              // the read did not find the key
	rywExpired              // the read did not find the key, which may have expired
	rywMismatch             // the read found another value
	rywSuperseded           // the read found the value of a concurrent or later write of the key
	rywError                // the read failed
)

// verify reads back the key just written (b.key, b.value) through the RYW
// sender. Another worker may have written the same key meanwhile, so a read
// that returns another value is a mismatch only when that value was not
// written to this key, or by a write that had completed before this one was
// sent (a stale value), or was never written at all. A read that does not
// find the key is a miss, unless the entry may have expired: with a TTL,
// when the read completed TTL or more after the write was sent.
func (r *runner) verify(snd sender, b *workerBuf) rywResult {
	b.target = r.entryTarget(b.target[:0], b.key)
	status, read, err := snd.send(&request{method: http.MethodGet, target: b.target}, true, b.read[:0])
	b.read = read
	if err != nil {
		return rywError
	}
	switch status {
	case http.StatusOK:
	case http.StatusNotFound:
		if r.o.TTL > 0 && int64(r.o.Clock.Now().Sub(r.start))-b.sent >= int64(r.o.TTL) {
			return rywExpired
		}
		return rywMissing
	default:
		return rywError
	}
	if bytes.Equal(b.read, b.value) {
		return rywOK
	}
	seq, ok := r.parseSeq(b.read)
	if !ok || seq == b.seqs[0] {
		return rywMismatch // never written, or our own value corrupted
	}
	if end, key, known := r.writes.end(seq); !known || key != b.keys[0] || end < b.sent {
		return rywMismatch
	}
	return rywSuperseded
}

// parseSeq returns the number of a value written by appendValue.
func (r *runner) parseSeq(v []byte) (uint64, bool) {
	prefix := "seq="
	if r.o.WriteMethod == WritePost {
		prefix = `{"seq":`
	}
	rest, ok := bytes.CutPrefix(v, []byte(prefix))
	if !ok {
		return 0, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	n, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	return n, err == nil
}

// writeLog remembers the key of recent writes and when they completed, by
// value number, for the RYW check: a ring of writeLogSize slots, so a value
// is known while fewer than writeLogSize writes were sent after it (at 100k
// writes/s, 10 s).
type writeLog struct {
	seq  []atomic.Uint64
	key  []atomic.Uint64 // the key's number
	done []atomic.Int64  // ns since the start; math.MaxInt64 while in flight
}

const writeLogSize = 1 << 20

func newWriteLog() *writeLog {
	return &writeLog{
		seq:  make([]atomic.Uint64, writeLogSize),
		key:  make([]atomic.Uint64, writeLogSize),
		done: make([]atomic.Int64, writeLogSize),
	}
}

// begin logs the writes of values seqs to keys (keys[i] for seqs[i]), in
// flight.
func (l *writeLog) begin(seqs, keys []uint64) {
	for n, s := range seqs {
		i := s % writeLogSize
		l.seq[i].Store(0)
		l.done[i].Store(math.MaxInt64)
		l.key[i].Store(keys[n])
		l.seq[i].Store(s)
	}
}

func (l *writeLog) finish(seqs []uint64, end int64) {
	for _, s := range seqs {
		i := s % writeLogSize
		if l.seq[i].Load() == s {
			l.done[i].Store(end)
		}
	}
}

// end returns when write s completed (math.MaxInt64 if it has not) and
// the number of the key it wrote, or false if it is unknown (never sent,
// or too old).
func (l *writeLog) end(s uint64) (end int64, key uint64, ok bool) {
	i := s % writeLogSize
	if l.seq[i].Load() != s {
		return 0, 0, false
	}
	end, key = l.done[i].Load(), l.key[i].Load()
	if l.seq[i].Load() != s {
		return 0, 0, false
	}
	return end, key, true
}

// failure classifies a transport error.
func failure(err error) outcome {
	var ne net.Error
	kind := "other"
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		kind = "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		kind = "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		kind = "connection reset"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		kind = "no local address"
	case errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE):
		kind = "too many open files"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		kind = "connection closed"
	}
	return outcome{errKind: kind, errText: err.Error()}
}

// recorder holds the statistics of some workers (one stripe), under its
// own lock so workers rarely contend.
type recorder struct {
	mu       sync.Mutex
	total    *hdrhistogram.Histogram // latency of every recorded request
	interval *hdrhistogram.Histogram // the same since the last live line
	lag      *hdrhistogram.Histogram // send lag (paced runs)
	response *hdrhistogram.Histogram // from send to response (paced runs)
	counts   counts
	errors   map[string]*ErrorCount
	kinds    *errorKinds // shared by every stripe of a run
}

// errorKinds holds the error kinds counted under their own name, at most
// maxErrorKinds, for all the stripes of a run: a cap per stripe let the
// report hold up to 16 times as many kinds, and one kind could be counted
// under its name in one stripe and as "other" in another.
type errorKinds struct {
	mu    sync.Mutex
	names map[string]bool
}

// admit reports whether kind is, or may now become, one of the kinds
// counted under their own name.
func (k *errorKinds) admit(kind string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.names[kind] {
		return true
	}
	if len(k.names) >= maxErrorKinds {
		return false
	}
	k.names[kind] = true
	return true
}

type counts struct {
	requests, reads, writes, hits, misses, errors, warmup int64
	notSent                                               int64
	rywChecks, rywMissing, rywMismatch, rywErrors         int64
	rywSuperseded, rywExpired, rywWarmup                  int64
	intervalRequests, intervalErrors                      int64
	beyondRange                                           int64
}

// newRecorders returns n recorders, the stripes of one run.
func newRecorders(n int) []*recorder {
	kinds := &errorKinds{names: map[string]bool{}}
	recs := make([]*recorder, n)
	for i := range recs {
		recs[i] = &recorder{total: newHist(), interval: newHist(), lag: newHist(), response: newHist(),
			errors: map[string]*ErrorCount{}, kinds: kinds}
	}
	return recs
}

// newRecorder returns the only recorder of a run.
func newRecorder() *recorder {
	return newRecorders(1)[0]
}

// maxErrorKinds bounds the error table; further kinds are counted as
// "other", but for kindNotSent, which says the generator fell behind and is
// always counted under its own name.
const maxErrorKinds = 32

// record records request j, sent: its outcome, its latency (from when it
// was due in an open-loop run, else from when it was sent), its response
// time (from when it was sent) and, in a paced run, its send lag.
func (rec *recorder) record(j job, out outcome, latency, response, lag time.Duration, paced, warm bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	c := &rec.counts
	// The live line shows every request done in its interval, the
	// warm-up's too: its rate, errors and latencies alike.
	c.intervalRequests++
	if !out.ok {
		c.intervalErrors++
	}
	_ = rec.interval.RecordValue(clampHist(latency))
	if !rec.count(j, out, warm) {
		return
	}
	rec.recordLatency(latency)
	if paced {
		_ = rec.lag.RecordValue(clampHist(lag))
		_ = rec.response.RecordValue(clampHist(response))
	}
}

// recordNotSent records paced request j, which was due but not sent before
// the cut-off, wait after it was due: a failure of kind kindNotSent, whose
// send lag is wait and, in an open-loop run, whose latency is wait. It has
// no response time, nor (closed loop, where latency starts at the send) a
// latency. Nothing was sent: the live line, whose figures are those of the
// requests done in its interval, leaves it out.
func (rec *recorder) recordNotSent(j job, wait time.Duration, open, warm bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.count(j, outcome{errKind: kindNotSent, errText: notSentText}, warm) {
		return
	}
	rec.counts.notSent++
	if open {
		rec.recordLatency(wait)
	}
	_ = rec.lag.RecordValue(clampHist(wait))
}

// recordBacklog records the jobs of b as recordNotSent records each (those
// due in the warm-up are left out), at once, whatever their number: their
// waits, from when each was due to the cut-off, shrink from job to job, so
// they are recorded by runs of jobs whose waits fall in one bucket of the
// histograms. Their keys were never drawn, nor whether each is a read or a
// write: the writes are the share writeRatio of them, rounded.
func (rec *recorder) recordBacklog(b backlog, open bool, warmEnd time.Time, writeRatio float64) {
	if b.first >= b.end {
		return
	}
	g := int64(b.s.o.Group)
	last := (b.end - 1) / g // the last job's group
	// The first job due after the warm-up.
	w := searchInt64(b.first/g, last+1, func(x int64) bool { return !b.s.groupDue(x).Before(warmEnd) })
	if w > last {
		return
	}
	from := max(b.first, w*g)
	n := b.end - from
	writes := int64(0)
	switch {
	case writeRatio >= 1:
		writes = n
	case writeRatio > 0:
		writes = min(int64(math.Round(float64(n)*writeRatio)), n)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	c := &rec.counts
	c.requests += n
	c.writes += writes
	c.reads += n - writes
	c.notSent += n
	rec.countErrors(kindNotSent, notSentText, n)
	if open {
		c.beyondRange += b.recordWaits(rec.total, from)
	}
	b.recordWaits(rec.lag, from)
}

// recordWaits records in h the waits of the jobs of b from job from on,
// each in the histograms' range (clampHist), and returns how many of them
// are above histMax.
func (b backlog) recordWaits(h *hdrhistogram.Histogram, from int64) (beyond int64) {
	g := int64(b.s.o.Group)
	wait := func(x int64) time.Duration { return b.cutoff.Sub(b.s.groupDue(x)) }
	last := (b.end - 1) / g // the last job's group
	for x := from / g; x <= last; {
		v := clampHist(wait(x))
		// The groups after x whose waits, shorter, are in v's bucket.
		next := searchInt64(x+1, last+1, func(y int64) bool { return !h.ValuesAreEquivalent(clampHist(wait(y)), v) })
		end := b.end
		if next <= last {
			end = next * g
		}
		_ = h.RecordValues(v, end-max(from, x*g))
		x = next
	}
	if over := searchInt64(from/g, last+1, func(y int64) bool { return wait(y) <= time.Duration(histMax) }); over > from/g {
		beyond = b.end - from
		if over <= last {
			beyond = over*g - from
		}
	}
	return beyond
}

// count counts request j and its outcome, in the warm-up if warm; it
// reports whether the request is to be counted in the statistics (not in
// the warm-up). rec.mu is held.
func (rec *recorder) count(j job, out outcome, warm bool) bool {
	c := &rec.counts
	if warm {
		// WarmupRequests counts the requests sent in the warm-up: one
		// due then but never sent is left out of every count.
		if out.errKind != kindNotSent {
			c.warmup++
		}
		return false
	}
	c.requests++
	if j.write {
		c.writes++
	} else {
		c.reads++
		if out.ok {
			if out.hit {
				c.hits++
			} else {
				c.misses++
			}
		}
	}
	if !out.ok {
		rec.countErrors(out.errKind, out.errText, 1)
	}
	return true
}

// countErrors counts n failed requests of the given kind, with an example
// message. rec.mu is held.
func (rec *recorder) countErrors(kind, text string, n int64) {
	rec.counts.errors += n
	e := rec.errors[kind]
	if e == nil {
		if kind != kindNotSent && kind != "other" && !rec.kinds.admit(kind) {
			kind = "other"
			e = rec.errors["other"]
		}
		if e == nil {
			e = &ErrorCount{Example: text}
			rec.errors[kind] = e
		}
	}
	e.Count += n
}

// recordLatency records a latency in the total histogram; a latency above
// histMax is counted in beyondRange and recorded as histMax. rec.mu is
// held.
func (rec *recorder) recordLatency(latency time.Duration) {
	// The histogram would take values somewhat above histMax (its last
	// bucket reaches about 73 minutes), but the report promises that every
	// latency above histMax is counted in BeyondRange and recorded as
	// histMax.
	ns := max(int64(latency), histMin)
	if ns > histMax {
		rec.counts.beyondRange++
		ns = histMax
	}
	_ = rec.total.RecordValue(ns)
}

// clampHist returns d in nanoseconds, within the histograms' range.
func clampHist(d time.Duration) int64 { return min(max(int64(d), histMin), histMax) }

func (rec *recorder) recordRYW(res rywResult, warm bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	c := &rec.counts
	if warm {
		c.rywWarmup++
		return
	}
	c.rywChecks++
	switch res {
	case rywMissing:
		c.rywMissing++
	case rywMismatch:
		c.rywMismatch++
	case rywError:
		c.rywErrors++
	case rywSuperseded:
		c.rywSuperseded++
	case rywExpired:
		c.rywExpired++
	}
}

// liveLoop writes a live line every LiveInterval until stop is closed.
func (r *runner) liveLoop(stop <-chan struct{}) {
	t := time.NewTicker(r.o.LiveInterval)
	defer t.Stop()
	r.liveLast = r.o.Clock.Now()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			r.writeLive()
		}
	}
}

func (r *runner) writeLive() {
	now := r.o.Clock.Now()
	var n, errs, total, rywBad int64
	r.liveHist.Reset()
	for _, rec := range r.stripes {
		rec.mu.Lock()
		r.liveHist.Merge(rec.interval)
		rec.interval.Reset()
		n += rec.counts.intervalRequests
		errs += rec.counts.intervalErrors
		rec.counts.intervalRequests, rec.counts.intervalErrors = 0, 0
		total += rec.counts.requests + rec.counts.warmup
		rywBad += rec.counts.rywMissing + rec.counts.rywMismatch
		rec.mu.Unlock()
	}
	secs := now.Sub(r.liveLast).Seconds()
	r.liveLast = now
	h := r.liveHist
	line := fmt.Sprintf("%6s  %9.0f req/s  p50 %s  p99 %s  max %s  errors %d  requests %d",
		now.Sub(r.start).Round(time.Second), float64(n)/secs,
		fmtMs(h.ValueAtQuantile(50)), fmtMs(h.ValueAtQuantile(99)), fmtMs(h.Max()), errs, total)
	if r.o.RYW {
		line += fmt.Sprintf("  ryw failures %d", rywBad)
	}
	if r.o.LiveTerminal {
		fmt.Fprintf(r.o.Live, "\r%s\x1b[K", line)
	} else {
		fmt.Fprintln(r.o.Live, line)
	}
}

// fmtMs formats nanoseconds as milliseconds.
func fmtMs(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) + "ms"
}
