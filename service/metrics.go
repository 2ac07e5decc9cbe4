package service

import (
	"bytes"
	"math"
	"net/http"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"time"
)

// route identifies what a request asked for, for the statistics.
type route uint8

const (
	routeGet route = iota
	routeHead
	routePut
	routeDelete
	routePost
	routeStats
	routeHealth
	routeMetrics
	routeOther // unknown paths and methods
	numRoutes
)

var routeNames = [numRoutes]string{"entry_get", "entry_head", "entry_put", "entry_delete", "entries_post", "stats", "healthz", "metrics", "other"}

// The status codes counted one by one; others are counted as "other".
var statusCodes = [...]int{200, 204, 400, 404, 405, 408, 413, 415, 500, 503}

const numCodes = len(statusCodes) + 1

func codeIndex(code int) int {
	for i, c := range statusCodes {
		if c == code {
			return i
		}
	}
	return len(statusCodes)
}

func codeName(i int) string {
	if i < len(statusCodes) {
		return strconv.Itoa(statusCodes[i])
	}
	return "other"
}

// Upper bounds of the request duration histogram, in seconds.
var durationBuckets = [...]float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

const numBuckets = len(durationBuckets) + 1 // the last is +Inf

// routeCounters are one route's counters; cache-line padding keeps routes
// that are hit at once from sharing lines.
type routeCounters struct {
	codes   [numCodes]atomic.Uint64
	buckets [numBuckets]atomic.Uint64
	sumNs   atomic.Uint64 // 584 years of request time before it wraps (an int64 went negative at 292)
	_       [64]byte
}

// counters are the server's own statistics (the store keeps its own).
type counters struct {
	routes        [numRoutes]routeCounters
	entriesStored atomic.Uint64 // entries written by PUT and POST
	tierHits      atomic.Uint64
	tierMisses    atomic.Uint64
	tierErrors    atomic.Uint64
	panics        atomic.Uint64
}

func (c *counters) observe(r route, code int, d time.Duration) {
	rs := &c.routes[r]
	rs.codes[codeIndex(code)].Add(1)
	secs := d.Seconds()
	i := 0
	for i < len(durationBuckets) && secs > durationBuckets[i] {
		i++
	}
	rs.buckets[i].Add(1)
	rs.sumNs.Add(uint64(max(d, 0)))
}

// runtimeStats are the Go runtime figures the server reports.
type runtimeStats struct {
	HeapObjectsBytes uint64  `json:"heap_objects_bytes"` // memory of live and not yet swept heap objects
	HeapGoalBytes    uint64  `json:"heap_goal_bytes"`
	TotalMappedBytes uint64  `json:"total_mapped_bytes"` // all memory mapped by the runtime
	Goroutines       uint64  `json:"goroutines"`
	GCCycles         uint64  `json:"gc_cycles"`
	GCPauseP99       float64 `json:"gc_pause_p99_seconds"` // over the process's life, from the runtime's histogram
	GCPauseMax       float64 `json:"gc_pause_max_seconds"` // upper bound of the highest non-empty bucket
}

var runtimeSamples = []string{
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/goal:bytes",
	"/memory/classes/total:bytes",
	"/sched/goroutines:goroutines",
	"/gc/cycles/total:gc-cycles",
	"/sched/pauses/total/gc:seconds",
}

func readRuntime() runtimeStats {
	s := make([]metrics.Sample, len(runtimeSamples))
	for i, name := range runtimeSamples {
		s[i].Name = name
	}
	metrics.Read(s)
	u := func(i int) uint64 {
		if s[i].Value.Kind() == metrics.KindUint64 {
			return s[i].Value.Uint64()
		}
		return 0
	}
	rs := runtimeStats{
		HeapObjectsBytes: u(0), HeapGoalBytes: u(1), TotalMappedBytes: u(2), Goroutines: u(3), GCCycles: u(4),
	}
	if s[5].Value.Kind() == metrics.KindFloat64Histogram {
		h := s[5].Value.Float64Histogram()
		var total uint64
		for _, c := range h.Counts {
			total += c
		}
		var seen uint64
		for i, c := range h.Counts {
			if c == 0 {
				continue
			}
			seen += c
			if rs.GCPauseP99 == 0 && float64(seen) >= 0.99*float64(total) {
				rs.GCPauseP99 = finite(h.Buckets[i+1])
			}
			rs.GCPauseMax = finite(h.Buckets[i+1])
		}
	}
	return rs
}

func finite(f float64) float64 {
	if math.IsInf(f, 0) {
		return math.MaxFloat64
	}
	return f
}

// writeMetrics writes every metric in the Prometheus text format (version
// 0.0.4).
func (s *Server) writeMetrics(w http.ResponseWriter) {
	var b bytes.Buffer
	st := s.cache.Stats()
	rt := readRuntime()
	c := &s.counters

	header := func(name, typ, help string) {
		b.WriteString("# HELP ")
		b.WriteString(name)
		b.WriteByte(' ')
		b.WriteString(help)
		b.WriteString("\n# TYPE ")
		b.WriteString(name)
		b.WriteByte(' ')
		b.WriteString(typ)
		b.WriteByte('\n')
	}
	num := func(v float64) {
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	}
	one := func(name, typ, help string, v float64) {
		header(name, typ, help)
		b.WriteString(name)
		b.WriteByte(' ')
		num(v)
		b.WriteByte('\n')
	}

	header("cachekit_http_requests_total", "counter", "HTTP requests served, by route and status code.")
	for r := range numRoutes {
		for i := range numCodes {
			n := c.routes[r].codes[i].Load()
			if n == 0 {
				continue
			}
			b.WriteString(`cachekit_http_requests_total{route="` + routeNames[r] + `",code="` + codeName(i) + `"} `)
			b.WriteString(strconv.FormatUint(n, 10))
			b.WriteByte('\n')
		}
	}
	header("cachekit_http_request_duration_seconds", "histogram", "Time spent handling HTTP requests (from routing to the handler's return), by route.")
	for r := range numRoutes {
		rs := &c.routes[r]
		var cum uint64
		for i := range numBuckets {
			cum += rs.buckets[i].Load()
			le := "+Inf"
			if i < len(durationBuckets) {
				le = strconv.FormatFloat(durationBuckets[i], 'g', -1, 64)
			}
			b.WriteString(`cachekit_http_request_duration_seconds_bucket{route="` + routeNames[r] + `",le="` + le + `"} `)
			b.WriteString(strconv.FormatUint(cum, 10))
			b.WriteByte('\n')
		}
		b.WriteString(`cachekit_http_request_duration_seconds_sum{route="` + routeNames[r] + `"} `)
		num(float64(rs.sumNs.Load()) / 1e9)
		b.WriteString("\n" + `cachekit_http_request_duration_seconds_count{route="` + routeNames[r] + `"} `)
		b.WriteString(strconv.FormatUint(cum, 10))
		b.WriteByte('\n')
	}

	one("cachekit_entries_stored_total", "counter", "Entries written by PUT and POST.", float64(c.entriesStored.Load()))
	one("cachekit_store_hits_total", "counter", "Store reads that found their key.", float64(st.Hits))
	one("cachekit_store_misses_total", "counter", "Store reads that did not.", float64(st.Misses))
	one("cachekit_store_sets_total", "counter", "Entries stored.", float64(st.Sets))
	one("cachekit_store_deletes_total", "counter", "Live entries deleted.", float64(st.Deletes))
	one("cachekit_store_evictions_total", "counter", "Live entries evicted to make room (they are no longer readable).", float64(st.Evictions))
	one("cachekit_store_expirations_total", "counter", "Entries removed because their TTL had passed.", float64(st.Expirations))
	one("cachekit_store_collisions_total", "counter", "Keys compared in full that differed from the key sought though their 32-bit hash tags matched, on reads, writes and deletes.", float64(st.Collisions))
	one("cachekit_store_entries", "gauge", "Entries in the store's index (live and expired ones not yet removed).", float64(st.Entries))
	one("cachekit_store_live_bytes", "gauge", "Bytes of the entries in the store's index (headers, keys and values; live and expired ones not yet removed).", float64(st.BytesLive))
	one("cachekit_store_used_bytes", "gauge", "Bytes of the rings in use (live entries and space not yet reclaimed).", float64(st.BytesUsed))
	one("cachekit_store_max_bytes", "gauge", "The store's entry storage budget (--max-bytes).", float64(st.BytesMax))
	one("cachekit_store_chunk_bytes", "gauge", "Memory allocated for entry storage (at most the budget).", float64(st.ChunkBytes))
	one("cachekit_store_index_bytes", "gauge", "Memory of the store's indexes.", float64(st.IndexBytes))
	if s.o.Tier != nil {
		one("cachekit_tier_hits_total", "counter", "Store misses found in the second tier.", float64(c.tierHits.Load()))
		one("cachekit_tier_misses_total", "counter", "Store misses not found in the second tier.", float64(c.tierMisses.Load()))
		one("cachekit_tier_errors_total", "counter", "Failed calls to the second tier, and POST entries that skipped it after one failed.", float64(c.tierErrors.Load()))
	}
	one("cachekit_handler_panics_total", "counter", "Handler panics recovered (answered with a 500).", float64(c.panics.Load()))
	one("cachekit_uptime_seconds", "gauge", "Seconds since the server was created.", time.Since(s.start).Seconds())

	one("go_goroutines", "gauge", "Goroutines.", float64(rt.Goroutines))
	one("go_heap_objects_bytes", "gauge", "Memory of heap objects, live and not yet swept.", float64(rt.HeapObjectsBytes))
	one("go_heap_goal_bytes", "gauge", "The heap size at which the next GC cycle starts.", float64(rt.HeapGoalBytes))
	one("go_memory_mapped_bytes", "gauge", "All memory mapped by the Go runtime.", float64(rt.TotalMappedBytes))
	one("go_gc_cycles_total", "counter", "Completed GC cycles.", float64(rt.GCCycles))
	one("go_gc_pause_p99_seconds", "gauge", "99th percentile of the GC's stop-the-world pauses over the process's life (upper bound of its histogram bucket).", rt.GCPauseP99)
	one("go_gc_pause_max_seconds", "gauge", "Longest GC stop-the-world pause over the process's life (upper bound of its histogram bucket).", rt.GCPauseMax)
	w.Header()["Content-Type"] = ctPrometheus
	w.Write(b.Bytes())
}

// Stats is the body of GET /v1/stats.
type Stats struct {
	UptimeSeconds float64 `json:"uptime_seconds"`
	Store         struct {
		Entries     uint64 `json:"entries"`
		Hits        uint64 `json:"hits"`
		Misses      uint64 `json:"misses"`
		Sets        uint64 `json:"sets"`
		Deletes     uint64 `json:"deletes"`
		Evictions   uint64 `json:"evictions"`
		Expirations uint64 `json:"expirations"`
		Collisions  uint64 `json:"collisions"`
		BytesLive   int64  `json:"bytes_live"`
		BytesUsed   int64  `json:"bytes_used"`
		BytesMax    int64  `json:"bytes_max"`
		ChunkBytes  int64  `json:"chunk_bytes"`
		IndexBytes  int64  `json:"index_bytes"`
	} `json:"store"`
	// Requests counts the HTTP requests by route and status code.
	Requests      map[string]map[string]uint64 `json:"requests"`
	EntriesStored uint64                       `json:"entries_stored"`
	Panics        uint64                       `json:"panics"`
	Tier          *TierStats                   `json:"tier,omitempty"`
	Runtime       runtimeStats                 `json:"runtime"`
}

// TierStats are the second tier's counters in Stats.
type TierStats struct {
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
	Errors uint64 `json:"errors"`
}

// Stats returns the server's statistics, as GET /v1/stats reports them.
func (s *Server) Stats() Stats {
	var out Stats
	out.UptimeSeconds = time.Since(s.start).Seconds()
	st := s.cache.Stats()
	o := &out.Store
	o.Entries, o.Hits, o.Misses, o.Sets, o.Deletes = st.Entries, st.Hits, st.Misses, st.Sets, st.Deletes
	o.Evictions, o.Expirations, o.Collisions = st.Evictions, st.Expirations, st.Collisions
	o.BytesLive, o.BytesUsed, o.BytesMax, o.ChunkBytes, o.IndexBytes = st.BytesLive, st.BytesUsed, st.BytesMax, st.ChunkBytes, st.IndexBytes
	c := &s.counters
	out.Requests = map[string]map[string]uint64{}
	for r := range numRoutes {
		for i := range numCodes {
			if n := c.routes[r].codes[i].Load(); n > 0 {
				if out.Requests[routeNames[r]] == nil {
					out.Requests[routeNames[r]] = map[string]uint64{}
				}
				out.Requests[routeNames[r]][codeName(i)] = n
			}
		}
	}
	out.EntriesStored = c.entriesStored.Load()
	out.Panics = c.panics.Load()
	if s.o.Tier != nil {
		out.Tier = &TierStats{Hits: c.tierHits.Load(), Misses: c.tierMisses.Load(), Errors: c.tierErrors.Load()}
	}
	out.Runtime = readRuntime()
	return out
}
