package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

const entriesPrefix = "/v1/entries/"

// ttlHeader is the canonical form of the Cache-TTL request header.
const ttlHeader = "Cache-Ttl"

// Header values shared by every response; net/http only reads them.
var (
	ctJSON       = []string{"application/json"}
	ctOctet      = []string{"application/octet-stream"}
	ctText       = []string{"text/plain; charset=utf-8"}
	ctPrometheus = []string{"text/plain; version=0.0.4; charset=utf-8"}
	nosniff      = []string{"nosniff"}
)

// apiError is an error response: its status and its JSON body, rendered
// once for the fixed errors.
type apiError struct {
	status int
	body   []byte
}

func newAPIError(status int, msg string) *apiError {
	b := append([]byte(`{"error":`), appendJSONString(nil, msg)...)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	return &apiError{status: status, body: append(b, "}\n"...)}
}

var (
	errNoEntry        = newAPIError(http.StatusNotFound, "no entry for this key")
	errNoRoute        = newAPIError(http.StatusNotFound, "no such route: the API is /v1/entries/{key}, /v1/entries, /v1/stats, /healthz and /metrics")
	errEmptyKey       = newAPIError(http.StatusBadRequest, "the key is empty")
	errKeyTooLong     = newAPIError(http.StatusBadRequest, "the key is longer than max-key-bytes")
	errKeyControl     = newAPIError(http.StatusBadRequest, "the key holds a control character")
	errValueTooLarge  = newAPIError(http.StatusRequestEntityTooLarge, "the value is larger than max-value-bytes")
	errBodyTooLarge   = newAPIError(http.StatusRequestEntityTooLarge, "the body is larger than max-body-bytes")
	errNotJSON        = newAPIError(http.StatusUnsupportedMediaType, "the Content-Type must be application/json")
	errBadTTL         = newAPIError(http.StatusBadRequest, "invalid TTL (Cache-TTL header or ttl parameter): want seconds (600) or a Go duration (10m)")
	errTTLNotPositive = newAPIError(http.StatusBadRequest, "the TTL must be positive")
	errTTLRepeated    = newAPIError(http.StatusBadRequest, "the Cache-TTL header is given more than once")
	errTTLTooLong     = newAPIError(http.StatusBadRequest, "the TTL exceeds max-ttl")
	errContentType    = newAPIError(http.StatusBadRequest, "the Content-Type is longer than 255 bytes")
	errClosed         = newAPIError(http.StatusServiceUnavailable, "the server is shutting down")
	errInternal       = newAPIError(http.StatusInternalServerError, "internal error (logged)")
	errCorrupt        = newAPIError(http.StatusInternalServerError, "the stored value is not in the server's format")
	errNotUTF8        = newAPIError(http.StatusBadRequest, "malformed JSON: the body is not UTF-8")
	errReadTimeout    = newAPIError(http.StatusRequestTimeout, "timed out reading the request body")
	errTierDelete     = newAPIError(http.StatusServiceUnavailable, "deleted from this instance, but the second tier failed: the key may be served again from it, or by other instances that it did not tell; retry")
	errTierDeleteMiss = newAPIError(http.StatusServiceUnavailable, "this instance does not hold the key, but the second tier failed: the key may still be served from it, or by other instances that it did not tell; retry")
	errEncoded        = newAPIError(http.StatusUnsupportedMediaType, "the body must not be content-encoded (Content-Encoding): send it as is")
	errContentRange   = newAPIError(http.StatusBadRequest, "a PUT stores a whole value: Content-Range is not allowed")
)

// identityOnly is the Accept-Encoding of a 415 for a content-encoded body
// (RFC 9110, section 12.5.3): no coding but identity is accepted.
var identityOnly = []string{"identity"}

// ServeHTTP serves the API; see the package documentation.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if s.entered != nil {
		s.entered(r)
	}
	// The Date header, formatted once a second instead of by net/http for
	// every response.
	w.Header()["Date"] = s.date(start)
	rt, code := routeOther, 0
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler { //nolint:errorlint // a sentinel panic value
				panic(p)
			}
			s.counters.panics.Add(1)
			s.log.Error("handler panic", "panic", p, "method", r.Method, "path", r.URL.Path, "stack", string(debug.Stack()))
			code = s.fail(w, errInternal) // lost if the handler had already written a status
		}
		s.counters.observe(rt, code, time.Since(start))
	}()
	code = s.dispatch(w, r, &rt)
}

// escapedSlashInRoute reports whether the escaped path raw has an escaped
// slash (%2F) before its key: in the part that names the route, before its
// third slash (entriesPrefix's last). Path, which the routes
// match, has it unescaped, which would make /v1%2Fentries%2Fk a request for
// key k.
func escapedSlashInRoute(raw string) bool {
	head := raw
	for i, n := 0, 0; i < len(raw); i++ {
		if raw[i] == '/' {
			if n++; n == 3 {
				head = raw[:i]
				break
			}
		}
	}
	return strings.Contains(head, "%2F") || strings.Contains(head, "%2f")
}

// dateValue is a formatted Date header and the second it stands for.
type dateValue struct {
	sec int64
	v   []string
}

func (s *Server) date(now time.Time) []string {
	sec := now.Unix()
	if d := s.dateCache.Load(); d != nil && d.sec == sec {
		return d.v
	}
	d := &dateValue{sec: sec, v: []string{now.UTC().Format(http.TimeFormat)}}
	s.dateCache.Store(d)
	return d.v
}

// dispatch serves r and returns its status; it sets *rt to r's route
// before it runs the route's handler, so that a handler's panic is counted
// under its route (rt stays routeOther for an unknown route or method).
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, rt *route) int {
	path := r.URL.Path
	if raw := r.URL.RawPath; raw != "" && escapedSlashInRoute(raw) {
		path = "" // no route: an escaped slash belongs to a key
	}
	if key, ok := strings.CutPrefix(path, entriesPrefix); ok {
		switch r.Method {
		case http.MethodGet:
			*rt = routeGet
			return s.get(w, r, key, true)
		case http.MethodHead:
			*rt = routeHead
			return s.get(w, r, key, false)
		case http.MethodPut:
			*rt = routePut
			return s.put(w, r, key)
		case http.MethodDelete:
			*rt = routeDelete
			return s.delete(w, r, key)
		}
		return s.notAllowed(w, r.Method, "GET, HEAD, PUT, DELETE")
	}
	switch path {
	case "/v1/entries":
		if r.Method == http.MethodPost {
			*rt = routePost
			return s.post(w, r)
		}
		return s.notAllowed(w, r.Method, "POST")
	case "/v1/stats":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			*rt = routeStats
			return s.stats(w)
		}
		return s.notAllowed(w, r.Method, "GET, HEAD")
	case "/healthz":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			*rt = routeHealth
			if s.closed.Load() {
				return s.fail(w, errClosed)
			}
			w.Header()["Content-Type"] = ctJSON
			io.WriteString(w, `{"status":"ok"}`+"\n")
			return http.StatusOK
		}
		return s.notAllowed(w, r.Method, "GET, HEAD")
	case "/metrics":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			*rt = routeMetrics
			s.writeMetrics(w)
			return http.StatusOK
		}
		return s.notAllowed(w, r.Method, "GET, HEAD")
	}
	return s.fail(w, errNoRoute)
}

// startResponse gives the response WriteTimeout from now. net/http starts
// its write deadline once it has read the request's headers, so it would
// also run while the body is read (bounded by ReadTimeout) and the tier is
// called (TierTimeout): a response after a slow upload was cut off, the
// client getting no answer for a write that was stored. Called once the
// body has been read and once the tier has answered, so that requests
// that do neither (a hit, a miss without a tier) pay nothing. The
// ResponseWriter of net/http sets a deadline itself; one that wraps it
// (middleware) reaches it through http.ResponseController (which
// allocates an error for a writer that has none: hence the direct check).
func (s *Server) startResponse(w http.ResponseWriter) {
	deadline := time.Now().Add(s.o.WriteTimeout)
	switch d := w.(type) {
	case interface{ SetWriteDeadline(time.Time) error }:
		_ = d.SetWriteDeadline(deadline)
	case interface{ Unwrap() http.ResponseWriter }:
		_ = http.NewResponseController(w).SetWriteDeadline(deadline)
	}
}

// fail writes an error response and returns its status.
func (s *Server) fail(w http.ResponseWriter, e *apiError) int {
	h := w.Header()
	h["Content-Type"] = ctJSON
	h["X-Content-Type-Options"] = nosniff
	w.WriteHeader(e.status)
	w.Write(e.body)
	return e.status
}

func (s *Server) notAllowed(w http.ResponseWriter, method, allow string) int {
	w.Header().Set("Allow", allow)
	return s.fail(w, newAPIError(http.StatusMethodNotAllowed, "method "+method+" not allowed here; allowed: "+allow))
}

// checkKey returns the error for an unacceptable key, or nil.
func checkKey[K string | []byte](key K, maxBytes int) *apiError {
	if len(key) == 0 {
		return errEmptyKey
	}
	if len(key) > maxBytes {
		return errKeyTooLong
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f {
			return errKeyControl
		}
	}
	return nil
}

// get serves GET (withBody) and HEAD /v1/entries/{key}.
func (s *Server) get(w http.ResponseWriter, r *http.Request, key string, withBody bool) int {
	if e := checkKey(key, s.o.MaxKeyBytes); e != nil {
		return s.fail(w, e)
	}
	b := s.getBuf()
	defer s.putBuf(b)
	b.key = append(b.key[:0], key...)
	// A fill from the Tier must not overwrite a change made after this
	// miss: take the fence's generation before reading the store.
	var gen uint64
	if s.fence != nil {
		gen = s.fence.begin(b.key)
	}
	v, ok := s.cache.Get(b.val[:0], b.key)
	if !ok && s.fence != nil && !s.closed.Load() {
		// After Close the Tier is not read either: 503, below.
		v, ok = s.tierGet(r.Context(), b, gen)
		s.startResponse(w)
	}
	b.val = v // keep the grown buffer
	if !ok {
		if s.closed.Load() {
			return s.fail(w, errClosed) // the closed store misses every key
		}
		return s.fail(w, errNoEntry)
	}
	ct, body, valid := decodeValue(v)
	if !valid {
		s.log.Error("store: a value is not in the server's format", "key", key)
		return s.fail(w, errCorrupt)
	}
	h := w.Header()
	h["Content-Type"] = ct
	// net/http adds Content-Length itself to small bodies written at once.
	if !withBody || len(body) > 2048 {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	w.WriteHeader(http.StatusOK)
	if withBody {
		w.Write(body)
	}
	return http.StatusOK
}

// put serves PUT /v1/entries/{key}: the body is the value.
func (s *Server) put(w http.ResponseWriter, r *http.Request, key string) int {
	if e := checkKey(key, s.o.MaxKeyBytes); e != nil {
		return s.fail(w, e)
	}
	ttl, e := s.requestTTL(r)
	if e != nil {
		return s.fail(w, e)
	}
	if e := checkEncoding(w, r); e != nil {
		return s.fail(w, e)
	}
	if _, ok := r.Header["Content-Range"]; ok {
		// Part of a value, which would be stored as the whole (RFC 9110,
		// section 14.4: an origin server must refuse it).
		return s.fail(w, errContentRange)
	}
	if r.ContentLength > int64(s.o.MaxValueBytes) {
		return s.fail(w, errValueTooLarge)
	}
	b := s.getBuf()
	defer s.putBuf(b)
	var ok bool
	if b.val, ok = appendValueHeader(b.val[:0], r.Header["Content-Type"]); !ok {
		return s.fail(w, errContentType)
	}
	var err error
	b.val, err = readBody(r.Body, b.val, s.o.MaxValueBytes, r.ContentLength)
	if err != nil {
		return s.bodyError(w, err, errValueTooLarge)
	}
	b.key = append(b.key[:0], key...)
	err = s.write(r.Context(), b.key, b.val, ttl)
	s.startResponse(w) // after the body and the tier
	if err != nil {
		return s.fail(w, s.storeError(err))
	}
	w.WriteHeader(http.StatusNoContent)
	return http.StatusNoContent
}

// delete serves DELETE /v1/entries/{key}: 204 if the key was there (in
// the store or the tier), else 404.
func (s *Server) delete(w http.ResponseWriter, r *http.Request, key string) int {
	if e := checkKey(key, s.o.MaxKeyBytes); e != nil {
		return s.fail(w, e)
	}
	b := s.getBuf()
	defer s.putBuf(b)
	b.key = append(b.key[:0], key...)
	found, err := s.del(r.Context(), b.key)
	if s.fence != nil {
		s.startResponse(w) // after the tier
	}
	if err != nil {
		if !found { // found is this instance's alone
			return s.fail(w, errTierDeleteMiss)
		}
		return s.fail(w, errTierDelete)
	}
	if !found {
		if s.closed.Load() {
			return s.fail(w, errClosed) // the closed store holds no key
		}
		return s.fail(w, errNoEntry)
	}
	w.WriteHeader(http.StatusNoContent)
	return http.StatusNoContent
}

// post serves POST /v1/entries: one message {"id": "...", "entry": ...} or
// an array of them; each entry's raw JSON is stored under its id. The
// whole body is checked before anything is stored, so a bad message stores
// nothing.
func (s *Server) post(w http.ResponseWriter, r *http.Request) int {
	if !isJSON(r.Header["Content-Type"]) {
		return s.fail(w, errNotJSON)
	}
	if e := checkEncoding(w, r); e != nil {
		return s.fail(w, e)
	}
	ttl, e := s.requestTTL(r)
	if e != nil {
		return s.fail(w, e)
	}
	if r.ContentLength > s.o.MaxBodyBytes {
		return s.fail(w, errBodyTooLarge)
	}
	b := s.getBuf()
	defer s.putBuf(b)
	var err error
	b.val, err = readBody(r.Body, b.val[:0], int(min(s.o.MaxBodyBytes, int64(^uint(0)>>1))), r.ContentLength)
	if err != nil {
		return s.bodyError(w, err, errBodyTooLarge)
	}
	s.startResponse(w) // after the body
	body := b.val
	if !utf8.Valid(body) {
		return s.fail(w, errNotUTF8)
	}
	if !json.Valid(body) {
		var v json.RawMessage
		msg := "malformed JSON"
		if err := json.Unmarshal(body, &v); err != nil {
			msg += ": " + err.Error()
		}
		return s.fail(w, newAPIError(http.StatusBadRequest, msg))
	}
	// Check every message, then walk the body again to store them: no
	// copy of the messages is kept (it would cost several times the body).
	err = parseMessages(body, func(id, entry []byte) error {
		if e := checkKey(id, s.o.MaxKeyBytes); e != nil {
			return e
		}
		if len(entry) > s.o.MaxValueBytes {
			return errValueTooLarge
		}
		return nil
	})
	if err != nil {
		var e *apiError
		if errors.As(err, &e) {
			return s.fail(w, e)
		}
		return s.fail(w, newAPIError(http.StatusBadRequest, err.Error()))
	}
	if s.closed.Load() {
		// Even an empty batch: a POST is a write, which the closed store
		// refuses (a batch it had begun fails at its first write).
		return s.fail(w, errClosed)
	}
	stored := 0
	var werr error
	tierDown := false // after one failed Tier write, the rest skip the Tier
	parseMessages(body, func(id, entry []byte) error {
		b.tmp = append(append(b.tmp[:0], kindJSON), entry...)
		var failed bool
		failed, werr = s.writeTier(r.Context(), id, b.tmp, ttl, tierDown)
		tierDown = tierDown || failed
		if werr != nil {
			return werr // not bad input (it was all checked): the store is closing
		}
		stored++
		return nil
	})
	s.startResponse(w) // after the tier
	if werr != nil {
		e := s.storeError(werr)
		if stored > 0 {
			// Close cut the batch short after its first entries were
			// stored, in the Tier too: say how many, so that the
			// client knows this failure changed something.
			body := append(bytes.TrimSuffix(e.body, []byte("}\n")), `,"stored":`...)
			body = strconv.AppendInt(body, int64(stored), 10)
			e = &apiError{status: e.status, body: append(body, "}\n"...)}
		}
		return s.fail(w, e)
	}
	w.Header()["Content-Type"] = ctJSON
	out := strconv.AppendInt(append(b.tmp[:0], `{"stored":`...), int64(stored), 10)
	w.Write(append(out, "}\n"...))
	return http.StatusOK
}

func (e *apiError) Error() string { return string(e.body) }

func (s *Server) stats(w http.ResponseWriter) int {
	body, err := json.Marshal(s.Stats())
	if err != nil {
		s.log.Error("stats: encoding failed", "err", err)
		return s.fail(w, errInternal)
	}
	w.Header()["Content-Type"] = ctJSON
	w.Write(append(body, '\n'))
	return http.StatusOK
}

// bodyError answers a failed body read.
func (s *Server) bodyError(w http.ResponseWriter, err error, tooLarge *apiError) int {
	s.startResponse(w) // after the body, or the wait for it
	if errors.Is(err, errTooLarge) {
		return s.fail(w, tooLarge)
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return s.fail(w, tooLarge)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		w.Header().Set("Connection", "close")
		return s.fail(w, errReadTimeout)
	}
	return s.fail(w, newAPIError(http.StatusBadRequest, "reading the body: "+err.Error()))
}

var errTooLarge = errors.New("body too large")

// maxPrealloc bounds the buffer readBody allocates for a body of known
// length before any of it has arrived: the length is only the client's
// claim, and with a large limit a claim of 100 GiB in a header would
// otherwise be allocated at once (past the machine's memory, a fatal
// error for the process, which no handler recovers).
// A longer body's buffer doubles as the body arrives, up to its length.
const maxPrealloc = 64 << 20

// readBody appends the body to dst, failing with errTooLarge once more than
// limit bytes were read: it reads at most limit+1 bytes, into a buffer
// that grows (doubling) to at most that.
func readBody(body io.Reader, dst []byte, limit int, contentLength int64) ([]byte, error) {
	start := len(dst)
	// The most dst may hold: the body's limit and a byte to see it is over.
	end := math.MaxInt
	if limit < math.MaxInt-start {
		end = start + limit + 1
	}
	// dst's length with a body of known length, plus a byte to see its
	// end; 0 if unknown (or too long for a slice: its capacity overflowed).
	want := 0
	if contentLength > 0 && contentLength <= int64(limit) && contentLength < int64(math.MaxInt-start) {
		want = start + int(contentLength) + 1
	}
	if want > cap(dst) {
		grown := make([]byte, len(dst), min(want, start+maxPrealloc))
		copy(grown, dst)
		dst = grown
	}
	for {
		if len(dst) == cap(dst) {
			n := max(len(dst), 512)
			if want > len(dst) {
				n = min(n, want-len(dst))
			}
			grown := make([]byte, len(dst), len(dst)+min(n, end-len(dst)))
			copy(grown, dst)
			dst = grown
		}
		n, err := body.Read(dst[len(dst):min(cap(dst), end)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst, errTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// requestTTL returns the TTL asked for by the Cache-TTL header or the ttl
// query parameter (the header wins), else the default. A header given on
// more than one line is refused: read as one field ("5, abc") it is not a
// TTL, and reading its first line alone would ignore the others.
func (s *Server) requestTTL(r *http.Request) (time.Duration, *apiError) {
	var v string
	if hv := r.Header[ttlHeader]; len(hv) > 1 {
		return 0, errTTLRepeated
	} else if len(hv) == 1 && hv[0] != "" {
		v = hv[0]
	} else if r.URL.RawQuery != "" {
		var ok bool
		if v, ok = queryValue(r.URL.RawQuery, "ttl"); !ok {
			return 0, errBadTTL
		}
	}
	if v == "" {
		return s.defaultTTL(), nil
	}
	d, ok := parseTTL(v)
	switch {
	case !ok:
		return 0, errBadTTL
	case d <= 0:
		return 0, errTTLNotPositive
	case d > s.o.MaxTTL:
		return 0, errTTLTooLong
	}
	return d, nil
}

// parseTTL parses whole seconds ("600") or a Go duration ("10m").
func parseTTL(v string) (time.Duration, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	// ParseInt reports ErrRange as soon as the digits overflow, before it
	// looks at the rest: only a whole number is too large ("99…9abc" is
	// not a number).
	if errors.Is(err, strconv.ErrRange) && isInteger(v) {
		if n > 0 {
			return DefaultMaxTTL + time.Second, true
		}
		return 0, true
	}
	if err == nil {
		switch {
		case n > int64(DefaultMaxTTL/time.Second):
			return DefaultMaxTTL + time.Second, true // too long, reported as such
		case n <= 0:
			return 0, true
		}
		return time.Duration(n) * time.Second, true
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		if over, neg := durationOverflows(v); over {
			if neg {
				return 0, true // not positive, however long
			}
			return DefaultMaxTTL + time.Second, true
		}
	}
	return d, err == nil
}

// isInteger reports whether v is decimal digits with an optional sign.
func isInteger(v string) bool {
	if v != "" && (v[0] == '+' || v[0] == '-') {
		v = v[1:]
	}
	return v != "" && strings.Trim(v, "0123456789") == ""
}

// durationUnits are time.ParseDuration's units, in seconds.
var durationUnits = map[string]float64{"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}

// durationOverflows reports whether v, which time.ParseDuration refused, is
// a duration in its syntax that is merely too long for it, and whether it
// is negative.
func durationOverflows(v string) (over, neg bool) {
	s := v
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	total := 0.0
	for s != "" {
		i := 0
		for i < len(s) && (s[i] == '.' || s[i] >= '0' && s[i] <= '9') {
			i++
		}
		f, err := strconv.ParseFloat(s[:i], 64)
		if i == 0 || err != nil && !math.IsInf(f, 1) {
			return false, false // not a number (ErrRange's +Inf is one: too long)
		}
		j := i
		for j < len(s) && s[j] != '.' && (s[j] < '0' || s[j] > '9') {
			j++
		}
		u, ok := durationUnits[s[i:j]]
		if !ok {
			return false, false
		}
		total += f * u
		s = s[j:]
	}
	return total*1e9 >= float64(1<<63), neg
}

// queryValue returns the first value of parameter name in a raw query, and
// false if it is not properly escaped.
func queryValue(raw, name string) (string, bool) {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, "%+") {
			// Decoded as url.ParseQuery does: "%74tl" is ttl.
			if u, err := url.QueryUnescape(k); err == nil {
				k = u
			}
		}
		if k != name {
			continue
		}
		if strings.ContainsAny(v, "%+") {
			u, err := url.QueryUnescape(v)
			return u, err == nil
		}
		return v, true
	}
	return "", true
}

// checkEncoding returns the error for a request body with a content coding
// (Content-Encoding gzip, ...), which the server does not decode: stored
// as sent, it would be served back still encoded but without its
// Content-Encoding. It sets the Accept-Encoding of that error's response.
func checkEncoding(w http.ResponseWriter, r *http.Request) *apiError {
	for _, v := range r.Header["Content-Encoding"] {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				w.Header()["Accept-Encoding"] = identityOnly
				return errEncoded
			}
		}
	}
	return nil
}

// isJSON reports whether a Content-Type header is application/json (with
// optional parameters).
func isJSON(ct []string) bool {
	if len(ct) != 1 {
		return false
	}
	mt, _, _ := strings.Cut(ct[0], ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// The stored form of a value: one byte giving its content type, then for
// kindCustom a length byte and the content type, then the body.
const (
	kindOctet  byte = 0 // no Content-Type given: served as application/octet-stream
	kindJSON   byte = 1 // application/json (every POSTed entry)
	kindText   byte = 2 // text/plain; charset=utf-8
	kindCustom byte = 3 // any other Content-Type, up to 255 bytes

	maxValueHeader = 2 + 255
)

// appendValueHeader appends the stored header for a Content-Type header;
// false if it cannot be stored (longer than 255 bytes).
func appendValueHeader(dst []byte, ct []string) ([]byte, bool) {
	if len(ct) == 0 || ct[0] == "" {
		return append(dst, kindOctet), true
	}
	switch c := ct[0]; {
	case strings.EqualFold(c, "application/json"):
		return append(dst, kindJSON), true
	case strings.EqualFold(c, "text/plain; charset=utf-8"):
		return append(dst, kindText), true
	case strings.EqualFold(c, "application/octet-stream"):
		return append(dst, kindOctet), true
	case len(c) > 255:
		return dst, false
	default:
		dst = append(dst, kindCustom, byte(len(c)))
		return append(dst, c...), true
	}
}

// EncodeValue returns the stored form of body with the given Content-Type
// ("" for none), for writing to Server.Store directly (a preload). A content
// type longer than 255 bytes, or holding a control character other than a
// tab (which no PUT could carry: net/http refuses such a header), is an
// error.
func EncodeValue(dst []byte, contentType string, body []byte) ([]byte, error) {
	if i := strings.IndexFunc(contentType, isControl); i >= 0 {
		return dst, fmt.Errorf("service: content type %q holds a control character (byte %d)", contentType, i)
	}
	var ct []string
	if contentType != "" {
		ct = []string{contentType}
	}
	dst, ok := appendValueHeader(dst, ct)
	if !ok {
		return dst, errors.New("service: content type longer than 255 bytes")
	}
	return append(dst, body...), nil
}

// isControl reports whether r may not be in a Content-Type: a control
// character other than a tab.
func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }

// decodeValue splits a stored value into its Content-Type and body. A
// value that the server cannot have written (from a Tier shared with
// something else, or a crafted snapshot) is not ok: among them a custom
// Content-Type that is empty or holds a control character, which would
// make a malformed response header.
func decodeValue(v []byte) (ct []string, body []byte, ok bool) {
	if len(v) == 0 {
		return nil, nil, false
	}
	switch v[0] {
	case kindOctet:
		return ctOctet, v[1:], true
	case kindJSON:
		return ctJSON, v[1:], true
	case kindText:
		return ctText, v[1:], true
	case kindCustom:
		if len(v) < 2 || len(v) < 2+int(v[1]) {
			return nil, nil, false
		}
		end := 2 + int(v[1]) // not 2+v[1]: byte arithmetic wraps for 254 and 255
		ct := string(v[2:end])
		if ct == "" || strings.ContainsFunc(ct, isControl) {
			return nil, nil, false
		}
		return []string{ct}, v[end:], true
	}
	return nil, nil, false
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
