package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Differential fuzzing of the HTTP API against a model map.

const (
	fzMaxKey   = 12
	fzMaxValue = 40
	fzMaxBody  = 400
	fzMaxTTL   = time.Hour
	fzDefTTL   = 10 * time.Minute
)

type fzIn struct {
	b     []byte
	i     int
	clean bool // generate valid messages only
}

func (f *fzIn) u8() byte {
	if f.i >= len(f.b) {
		return 0
	}
	c := f.b[f.i]
	f.i++
	return c
}
func (f *fzIn) n(k int) int { return int(f.u8()) % k }

// bad returns a choice in [0,k) that is not 0 in clean mode.
func (f *fzIn) bad(k int) int {
	c := f.n(k)
	if f.clean && c < 3 {
		return k
	}
	return c
}
func (f *fzIn) done() bool { return f.i >= len(f.b) }

type modelEntry struct {
	ct   string
	body string
	exp  int64 // unix ns; 0: never
}

type fzModel struct {
	m       map[string]modelEntry
	tier    *clockTier            // nil: no tier
	tm      map[string]modelEntry // the tier's model
	tierUp  bool
	now     func() int64
	counts  map[[2]string]uint64
	stored  uint64
	deletes uint64
}

func (m *fzModel) write(k string, e modelEntry) {
	m.m[k] = e
	if m.tier != nil && m.tierUp {
		m.tm[k] = e
	}
}

// read is what a GET should find: the local entry, else the tier's (which
// is then filled in locally).
func (m *fzModel) read(k string) (modelEntry, bool) {
	if e, ok := m.live(k); ok {
		return e, true
	}
	if m.tier == nil || !m.tierUp {
		return modelEntry{}, false
	}
	e, ok := m.tm[k]
	if !ok || e.exp <= m.now() {
		delete(m.tm, k)
		return modelEntry{}, false
	}
	m.m[k] = e
	return e, true
}

func (m *fzModel) live(k string) (modelEntry, bool) {
	e, ok := m.m[k]
	if !ok {
		return e, false
	}
	if e.exp != 0 && e.exp <= m.now() {
		delete(m.m, k)
		return e, false
	}
	return e, true
}

var fzKeyPool = []string{
	"a", "b", "a/b", "/x", "x/", "é", "k%", "%41", "a b", "?q", "#f", "\xff", ".", "..", "a/../b",
	"+", "a;b", "ä\u0301", "😀", "\ufffd", "",
	strings.Repeat("k", fzMaxKey), strings.Repeat("k", fzMaxKey+1), strings.Repeat("é", fzMaxKey/2), strings.Repeat("é", fzMaxKey/2) + "x",
	"a\x01", "\x7f", "tab\t", "nl\n", "\x00",
}

func (f *fzIn) key() string {
	if f.n(2) == 0 {
		return [...]string{"a", "b", "a/b", "é", strings.Repeat("k", fzMaxKey)}[f.n(5)]
	}
	c := f.n(len(fzKeyPool) + 2)
	if c < len(fzKeyPool) {
		return fzKeyPool[c]
	}
	n := f.n(fzMaxKey + 3)
	b := make([]byte, n)
	for i := range b {
		b[i] = f.u8()
	}
	return string(b)
}

// encodeKey percent-encodes a key for the request line, randomly.
func (f *fzIn) encodeKey(k string) string {
	var sb strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		mustEscape := c <= 0x20 || c >= 0x7f || c == '%' || c == '?' || c == '#'
		if !mustEscape && f.n(4) != 0 {
			sb.WriteByte(c)
			continue
		}
		if f.n(2) == 0 {
			fmt.Fprintf(&sb, "%%%02X", c)
		} else {
			fmt.Fprintf(&sb, "%%%02x", c)
		}
	}
	return sb.String()
}

var fzTTLs = []string{
	"1", "0", "-1", "3600", "3601", "1h", "1h0m0.000000001s", "59m59s", "1ns", "0.5s", "+5", "1e3",
	"9223372036854775807", "9223372036854775808", "99999999999h", "-0", "0x10", "1_000", "90m", "60m",
	"2562047h47m16.854775807s", "2562048h", "1.5h", "3599.999999999s", "100ms", "10", "-1s", "0s", "1µs",
}

// refTTL: the documented TTL syntax; ok false: a 400.
func refTTL(v string) (time.Duration, bool) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 || n > int64(fzMaxTTL/time.Second) {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	} else if strings.Trim(v, "+-0123456789") == "" && v != "" {
		return 0, false // digits out of range
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > fzMaxTTL {
		return 0, false
	}
	return d, true
}

// ttlSpec returns the header value (or nil), query and the expected TTL
// (0 with ok: default; !ok: 400).
func (f *fzIn) ttlSpec() (hdr []string, query string, ttl time.Duration, ok bool) {
	pick := func() string {
		if f.n(8) == 0 {
			return ""
		}
		return fzTTLs[f.n(len(fzTTLs))]
	}
	ok = true
	var qv string
	qset := false
	if f.n(2) == 0 {
		return nil, "", 0, true
	}
	switch f.n(6) {
	case 0, 1:
	case 2:
		qv, qset = pick(), true
		query = "ttl=" + strings.ReplaceAll(qv, "+", "%2B")
	case 3:
		qv, qset = pick(), true
		query = "x=1&ttl=" + strings.ReplaceAll(qv, "+", "%2B") + "&ttl=5"
	case 4:
		query = "ttl=5%"
		if f.n(2) == 0 {
			query = "ttl=%zz"
		}
		qv, qset = "!bad", true
	case 5:
		query = "TTL=5&x=2"
	}
	switch f.n(4) {
	case 0, 1:
	case 2:
		hdr = []string{pick()}
	case 3:
		hdr = []string{pick(), pick()}
	}
	var v string
	switch {
	case len(hdr) > 1:
		return hdr, query, 0, false // a repeated Cache-TTL: 400
	case len(hdr) > 0 && strings.TrimSpace(hdr[0]) != "":
		v = strings.TrimSpace(hdr[0])
	case qset:
		v = qv
	}
	if v == "" {
		return hdr, query, 0, true
	}
	if v == "!bad" {
		return hdr, query, 0, false
	}
	ttl, ok = refTTL(v)
	return hdr, query, ttl, ok
}

var fzCTs = []string{"", "application/json", "Application/JSON", "application/json; charset=utf-8", "text/plain; charset=utf-8",
	"TEXT/PLAIN; charset=UTF-8", "application/octet-stream", "text/x-a", "application/jsonx", "text/json", "x/" + strings.Repeat("y", 253), "x/" + strings.Repeat("y", 254)}

func refStoredCT(ct string) string {
	switch {
	case ct == "", strings.EqualFold(ct, "application/octet-stream"):
		return "application/octet-stream"
	case strings.EqualFold(ct, "application/json"):
		return "application/json"
	case strings.EqualFold(ct, "text/plain; charset=utf-8"):
		return "text/plain; charset=utf-8"
	}
	return ct
}

func refIsJSON(cts []string) bool {
	if len(cts) != 1 {
		return false
	}
	mt, _, _ := strings.Cut(cts[0], ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// jsonString encodes s as a JSON string literal with random escapes.
func (f *fzIn) jsonString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			sb.WriteByte(s[i]) // invalid UTF-8, raw
			i++
			continue
		}
		switch {
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r < 0x20 || f.n(4) == 0:
			switch {
			case r == '/' && f.n(2) == 0:
				sb.WriteString(`\/`)
			case r == '\n' && f.n(2) == 0:
				sb.WriteString(`\n`)
			case r > 0xffff:
				r1, r2 := utf16Pair(r)
				fmt.Fprintf(&sb, `\u%04x\u%04X`, r1, r2)
			default:
				if f.n(2) == 0 {
					fmt.Fprintf(&sb, `\u%04x`, r)
				} else {
					fmt.Fprintf(&sb, `\u%04X`, r)
				}
			}
		default:
			sb.WriteString(s[i : i+size])
		}
		i += size
	}
	switch f.bad(12) {
	case 0:
		sb.WriteString(`\ud800`)
	case 1:
		sb.WriteString(`\udc00`)
	case 2:
		sb.WriteString(`\ud83d\ude00`)
	}
	sb.WriteByte('"')
	return sb.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func (f *fzIn) ws() string {
	return [...]string{"", "", "", " ", "\n", "\t\r\n "}[f.n(6)]
}

func (f *fzIn) jsonValue(depth int) string {
	switch c := f.n(10); {
	case c == 0:
		return "null"
	case c == 1:
		return [...]string{"true", "false", "-0", "1e400", "0.5E-3", "-12", "123456789012345678901234567890"}[f.n(7)]
	case c == 2 && depth < 3:
		n := f.n(3)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f.ws() + f.jsonValue(depth+1) + f.ws()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case c == 3 && depth < 3:
		n := f.n(3)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f.jsonString(fzKeyPool[f.n(5)]) + f.ws() + ":" + f.ws() + f.jsonValue(depth+1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case c == 4:
		// a string filling the value near the limit
		n := fzMaxValue - 3 + f.n(4)
		return `"` + strings.Repeat("v", n-2) + `"`
	case c == 5:
		return f.jsonString(`q"\/` + "\u00e9\U0001F600")
	default:
		return strconv.Itoa(f.n(100))
	}
}

func (f *fzIn) message() string {
	type member struct{ name, val string }
	var ms []member
	idName := func() string {
		switch f.bad(16) {
		case 0:
			return `"i\u0064"`
		case 1:
			return `"ID"`
		}
		return `"id"`
	}
	idVal := func() string {
		switch f.bad(16) {
		case 0:
			return "7"
		case 1:
			return "null"
		case 2:
			return `["a"]`
		}
		return f.jsonString(f.key())
	}
	if f.bad(16) != 0 {
		ms = append(ms, member{idName(), idVal()})
	}
	if f.bad(16) != 0 {
		ms = append(ms, member{`"entry"`, f.jsonValue(0)})
	}
	switch f.bad(20) {
	case 0:
		ms = append(ms, member{idName(), idVal()})
	case 1:
		ms = append(ms, member{`"entry"`, f.jsonValue(0)})
	case 2:
		ms = append(ms, member{`"ttl"`, "5"})
	}
	if len(ms) > 1 && f.n(2) == 0 {
		ms[0], ms[1] = ms[1], ms[0]
	}
	var sb strings.Builder
	sb.WriteString("{" + f.ws())
	for i, m := range ms {
		if i > 0 {
			sb.WriteString("," + f.ws())
		}
		sb.WriteString(m.name + f.ws() + ":" + f.ws() + m.val + f.ws())
	}
	sb.WriteString("}")
	return sb.String()
}

func (f *fzIn) postBody() string {
	f.clean = f.n(2) == 0
	defer func() { f.clean = false }()
	var body string
	if f.n(3) == 0 {
		body = f.ws() + f.message() + f.ws()
	} else {
		n := f.n(5)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f.ws() + f.message() + f.ws()
		}
		body = "[" + strings.Join(parts, ",") + "]"
	}
	switch f.bad(10) {
	case 0:
		if len(body) > 0 {
			body = body[:f.n(len(body))]
		}
	case 1:
		p := f.n(len(body) + 1)
		body = body[:p] + string([]byte{f.u8()}) + body[p:]
	case 2:
		body += [...]string{" x", "{}", " ", ",", "\x00"}[f.n(5)]
	}
	return body
}

type fzReq struct {
	method  string
	target  string
	headers [][2]string
	body    string
	// framing: 0 exact Content-Length, 1 short CL, 2 long CL, 3 chunked, 4 none
	framing int
	cut     int
}

// newWrite returns a write request (PUT or POST) to target, with the TTL
// that ttlSpec chose: a query, and Cache-TTL headers.
func newWrite(method, target, query string, ttlHeaders []string) *fzReq {
	r := &fzReq{method: method, target: target}
	if query != "" {
		r.target += "?" + query
	}
	r.add("Cache-TTL", ttlHeaders...)
	return r
}

// add adds a header line name: v for each of values.
func (r *fzReq) add(name string, values ...string) {
	for _, v := range values {
		r.headers = append(r.headers, [2]string{name, v})
	}
}

func (r *fzReq) raw() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: x\r\n", r.method, r.target)
	for _, h := range r.headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	switch r.framing {
	case 0:
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(r.body), r.body)
	case 1:
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(r.body)-r.cut, r.body)
	case 2:
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(r.body)+r.cut, r.body)
	case 3:
		b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		rest := r.body
		for len(rest) > 0 {
			n := min(len(rest), 7)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		b.WriteString("0\r\n\r\n")
	case 4:
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

// effective body the server can read, and whether reading it fails.
func (r *fzReq) effective() (string, bool) {
	switch r.framing {
	case 1:
		return r.body[:len(r.body)-r.cut], true
	case 2:
		return r.body, false
	case 4:
		return "", true
	}
	return r.body, true
}

func (r *fzReq) contentLength() int64 {
	switch r.framing {
	case 0:
		return int64(len(r.body))
	case 1:
		return int64(len(r.body) - r.cut)
	case 2:
		return int64(len(r.body) + r.cut)
	case 3:
		return -1
	}
	return 0
}

func (f *fzIn) framing(r *fzReq) {
	r.framing = [...]int{0, 0, 0, 0, 1, 2, 3, 3, 4}[f.n(9)]
	if r.framing == 4 && r.body == "" {
		r.framing = 0
	}
	r.cut = 1 + f.n(3)
	if r.framing == 1 && r.cut > len(r.body) {
		r.framing = 0
	}
}

// refKeyErr returns the expected status for a bad key, or 0.
func refKeyErr(k string) int {
	if len(k) == 0 || len(k) > fzMaxKey {
		return 400
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] == 0x7f {
			return 400
		}
	}
	return 0
}

type fzCheck struct {
	addr  string // serve over TCP to this address
	tier  *clockTier
	t     testing.TB
	s     *Server
	m     *fzModel
	clock *fakeClock
	trace []string
}

func (c *fzCheck) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("%s\ntrace:\n%s", fmt.Sprintf(format, args...), strings.Join(c.trace, "\n"))
}

func (c *fzCheck) serve(r *fzReq) *httptest.ResponseRecorder {
	raw := r.raw()
	if c.addr != "" {
		return c.serveTCP(r, raw)
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		c.fatalf("ReadRequest %q: %v", raw, err)
	}
	req.RemoteAddr = "192.0.2.1:1234"
	rec := httptest.NewRecorder()
	c.s.ServeHTTP(rec, req)
	c.trace = append(c.trace, fmt.Sprintf("%q -> %d %q", raw, rec.Code, rec.Body.String()))
	return rec
}

func (c *fzCheck) count(route string, code int) {
	c.m.counts[[2]string{route, strconv.Itoa(code)}]++
}

func (c *fzCheck) checkErrorBody(rec *httptest.ResponseRecorder, head bool) {
	if rec.Code < 400 {
		return
	}
	if rec.Code >= 500 && !(rec.Code == 503 && c.m.tier != nil && !c.m.tierUp) {
		c.fatalf("5xx: %d %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("Content-Type") != "application/json" {
		c.fatalf("error Content-Type %q", rec.Header().Get("Content-Type"))
	}
	if head {
		return
	}
	var e struct {
		Error  string `json:"error"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Status != rec.Code || e.Error == "" {
		c.fatalf("error body %q: %v", rec.Body, err)
	}
}

func (c *fzCheck) expect(rec *httptest.ResponseRecorder, allowed ...int) {
	c.t.Helper()
	if !slices.Contains(allowed, rec.Code) {
		c.fatalf("status %d, want one of %v (body %q)", rec.Code, allowed, rec.Body)
	}
}

var fzPrefixes = []string{"/v1/entries/", "/v1/entries/", "/v1/entries/", "/v1/entries/", "/v1/%65ntries/", "/v1%2Fentries/", "/v1/entries%2F", "//v1/entries/", "/V1/entries/"}

func (c *fzCheck) step(f *fzIn) {
	m := c.m
	op := f.n(10)
	if op == 8 && m.tier != nil && f.n(2) == 0 {
		switch f.n(4) {
		case 0:
			k := f.key()
			_, ok := m.live(k)
			delete(m.m, k)
			if got := c.s.Invalidate([]byte(k)); got != ok {
				c.fatalf("Invalidate(%q) = %v, model %v", k, got, ok)
			}
			if ok {
				m.deletes++
			}
			c.trace = append(c.trace, fmt.Sprintf("Invalidate %q", k))
		case 1:
			clear(m.m)
			c.s.InvalidateAll()
			c.trace = append(c.trace, "InvalidateAll")
		default:
			m.tierUp = !m.tierUp
			c.tier.setFail(!m.tierUp)
			c.trace = append(c.trace, fmt.Sprintf("tier up: %v", m.tierUp))
		}
		return
	}
	switch op {
	case 0, 1: // GET/HEAD
		k := f.key()
		pi := f.n(len(fzPrefixes))
		prefix := fzPrefixes[pi]
		method := "GET"
		if f.n(3) == 0 {
			method = "HEAD"
		}
		r := &fzReq{method: method, target: prefix + f.encodeKey(k), framing: 4}
		rec := c.serve(r)
		c.checkErrorBody(rec, method == "HEAD")
		route := map[string]string{"GET": "entry_get", "HEAD": "entry_head"}[method]
		if pi >= 5 {
			c.expect(rec, 404)
			c.count("other", rec.Code)
			return
		}
		c.count(route, rec.Code)
		if e := refKeyErr(k); e != 0 {
			c.expect(rec, e)
			return
		}
		e, ok := m.read(k)
		if !ok {
			c.expect(rec, 404)
			return
		}
		c.expect(rec, 200)
		if ct := rec.Header().Get("Content-Type"); ct != e.ct {
			c.fatalf("GET %q: Content-Type %q, want %q", k, ct, e.ct)
		}
		if method == "GET" && rec.Body.String() != e.body {
			c.fatalf("GET %q: body %q, want %q", k, rec.Body, e.body)
		}
		if method == "HEAD" {
			if rec.Body.Len() != 0 {
				c.fatalf("HEAD with a body")
			}
			if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(len(e.body)) {
				c.fatalf("HEAD %q: Content-Length %q, want %d", k, cl, len(e.body))
			}
		}
	case 2, 3: // PUT
		k := f.key()
		hdr, query, ttl, ttlOK := f.ttlSpec()
		r := newWrite("PUT", "/v1/entries/"+f.encodeKey(k), query, hdr)
		var cts []string
		switch f.n(4) {
		case 0:
		case 1, 2:
			cts = []string{fzCTs[f.n(len(fzCTs))]}
		case 3:
			cts = []string{fzCTs[f.n(len(fzCTs))], fzCTs[f.n(len(fzCTs))]}
		}
		r.add("Content-Type", cts...)
		n := f.n(fzMaxValue + 4)
		if f.n(4) == 0 {
			n = fzMaxValue - 1 + f.n(3)
		}
		body := make([]byte, n)
		for i := range body {
			body[i] = 'a' + f.u8()%26
		}
		r.body = string(body)
		f.framing(r)
		rec := c.serve(r)
		c.checkErrorBody(rec, false)
		c.count("entry_put", rec.Code)
		var errs []int
		if e := refKeyErr(k); e != 0 {
			errs = append(errs, e)
		}
		if !ttlOK {
			errs = append(errs, 400)
		}
		ct := ""
		if len(cts) > 0 {
			ct = strings.TrimSpace(cts[0])
		}
		if len(ct) > 255 {
			errs = append(errs, 400)
		}
		eff, readOK := r.effective()
		if r.contentLength() > fzMaxValue || len(eff) > fzMaxValue {
			errs = append(errs, 413)
		}
		if !readOK {
			errs = append(errs, 400)
		}
		if len(errs) > 0 {
			c.expect(rec, errs...)
			return
		}
		c.expect(rec, 204)
		if ttl == 0 {
			ttl = fzDefTTL
		}
		m.write(k, modelEntry{ct: refStoredCT(ct), body: eff, exp: m.now() + int64(ttl)})
		m.stored++
	case 4: // DELETE
		k := f.key()
		pi := f.n(len(fzPrefixes))
		r := &fzReq{method: "DELETE", target: fzPrefixes[pi] + f.encodeKey(k), framing: 4}
		rec := c.serve(r)
		c.checkErrorBody(rec, false)
		if pi >= 5 {
			c.expect(rec, 404)
			c.count("other", rec.Code)
			return
		}
		c.count("entry_delete", rec.Code)
		if e := refKeyErr(k); e != 0 {
			c.expect(rec, e)
			return
		}
		_, local := m.live(k)
		delete(m.m, k)
		if local {
			m.deletes++
		}
		inTier := false
		if m.tier != nil {
			if !m.tierUp {
				c.expect(rec, 503)
				return
			}
			e, ok := m.tm[k]
			inTier = ok && e.exp > m.now()
			delete(m.tm, k)
		}
		if local || inTier {
			c.expect(rec, 204)
		} else {
			c.expect(rec, 404)
		}
	case 5, 6: // POST
		hdr, query, ttl, ttlOK := f.ttlSpec()
		r := newWrite("POST", "/v1/entries", query, hdr)
		var cts []string
		switch f.n(12) {
		case 0:
		case 1, 2, 3, 4, 6, 7, 8, 9, 10:
			cts = []string{fzCTs[1+f.n(3)]}
		case 5:
			cts = []string{fzCTs[f.n(len(fzCTs))], fzCTs[f.n(len(fzCTs))]}
		}
		r.add("Content-Type", cts...)
		r.body = f.postBody()
		f.framing(r)
		rec := c.serve(r)
		c.checkErrorBody(rec, false)
		c.count("entries_post", rec.Code)
		var errs []int
		for i := range cts {
			cts[i] = strings.TrimSpace(cts[i])
		}
		if !refIsJSON(cts) {
			errs = append(errs, 415)
		}
		if !ttlOK {
			errs = append(errs, 400)
		}
		eff, readOK := r.effective()
		if r.contentLength() > fzMaxBody || len(eff) > fzMaxBody {
			errs = append(errs, 413)
		}
		if !readOK {
			errs = append(errs, 400)
		}
		msgs, ok := refParse([]byte(eff))
		if !utf8.ValidString(eff) || !json.Valid([]byte(eff)) || !ok {
			errs = append(errs, 400)
			// A message before the bad one may be refused first.
			errs = append(errs, 413)
		}
		for _, p := range msgs {
			if e := refKeyErr(p.id); e != 0 {
				errs = append(errs, e)
			}
			if len(p.entry) > fzMaxValue {
				errs = append(errs, 413)
			}
		}
		if len(errs) > 0 {
			c.expect(rec, errs...)
			return
		}
		c.expect(rec, 200)
		if got, want := rec.Body.String(), fmt.Sprintf("{\"stored\":%d}\n", len(msgs)); got != want {
			c.fatalf("POST answered %q, want %q", got, want)
		}
		if ttl == 0 {
			ttl = fzDefTTL
		}
		for _, p := range msgs {
			m.write(p.id, modelEntry{ct: "application/json", body: p.entry, exp: m.now() + int64(ttl)})
		}
		m.stored += uint64(len(msgs))
	case 7: // advance the clock
		var d time.Duration
		switch f.n(4) {
		case 0:
			d = []time.Duration{time.Nanosecond, time.Second, time.Minute, fzDefTTL, fzMaxTTL}[f.n(5)]
		case 1, 2: // to an entry's expiry, or just before
			keys := make([]string, 0, len(m.m))
			for k := range m.m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if len(keys) == 0 {
				return
			}
			e := m.m[keys[f.n(len(keys))]]
			d = time.Duration(e.exp - m.now() - int64(f.n(2)))
			if d < 0 {
				d = 0
			}
		default:
			d = time.Duration(f.u8()) * 10 * time.Second
		}
		c.clock.advance(d)
		c.trace = append(c.trace, fmt.Sprintf("advance %v", d))
	case 8: // other routes and methods
		paths := []string{"/v1/entries", "/v1/stats", "/healthz", "/metrics", "/", "/v1/entries?x", "/v1/entriesx", "/v1/stats/", "/v1/entries/a"}
		methods := []string{"GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "FOO"}
		p, meth := paths[f.n(len(paths))], methods[f.n(len(methods))]
		if p == "/v1/entries/a" && slices.Contains([]string{"GET", "HEAD", "PUT", "DELETE", "POST"}, meth) {
			return
		}
		if (p == "/v1/entries" || p == "/v1/entries?x") && meth == "POST" {
			return
		}
		r := &fzReq{method: meth, target: p, framing: 4}
		rec := c.serve(r)
		c.checkErrorBody(rec, meth == "HEAD")
		path, _, _ := strings.Cut(p, "?")
		getOK := meth == "GET" || meth == "HEAD"
		switch {
		case path == "/v1/stats" && getOK:
			c.expect(rec, 200)
			c.count("stats", 200)
		case path == "/healthz" && getOK:
			c.expect(rec, 200)
			c.count("healthz", 200)
		case path == "/metrics" && getOK:
			c.expect(rec, 200)
			c.count("metrics", 200)
		case path == "/v1/entries" || path == "/v1/stats" || path == "/healthz" || path == "/metrics" || path == "/v1/entries/a":
			c.expect(rec, 405)
			if rec.Header().Get("Allow") == "" {
				c.fatalf("405 without Allow")
			}
			c.count("other", 405)
		default:
			c.expect(rec, 404)
			c.count("other", 404)
		}
	case 9: // compare the whole model
		keys := make([]string, 0, len(m.m))
		for k := range m.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			e, ok := m.live(k)
			v, got := c.s.Store().Get(nil, []byte(k))
			if ok != got {
				c.fatalf("store has %q: %v, model %v", k, got, ok)
			}
			if ok {
				ct, body, valid := decodeValue(v)
				if !valid || ct[0] != e.ct || string(body) != e.body {
					c.fatalf("store %q = %q %q, model %+v", k, ct, body, e)
				}
			}
		}
	}
}

func runHTTPFuzz(t testing.TB, data []byte) {
	clock := newFakeClock()
	f := &fzIn{b: data}
	o := Options{MaxBytes: 4 << 20, Shards: 1, MaxKeyBytes: fzMaxKey, MaxValueBytes: fzMaxValue, MaxBodyBytes: fzMaxBody,
		MaxTTL: fzMaxTTL, DefaultTTL: fzDefTTL, Logger: quietLogger(), Now: clock.now}
	var tier *clockTier
	if f.n(2) == 0 {
		tier = &clockTier{m: map[string]tierEntry{}, clock: clock}
		o.Tier = tier
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := &fzModel{m: map[string]modelEntry{}, now: func() int64 { return clock.now().UnixNano() }, counts: map[[2]string]uint64{},
		tier: tier, tm: map[string]modelEntry{}, tierUp: true}
	c := &fzCheck{t: t, s: s, m: m, clock: clock, tier: tier}
	for steps := 0; !f.done() && steps < 200; steps++ {
		c.step(f)
	}
	st := s.Stats()
	if st.Panics != 0 {
		c.fatalf("%d panics", st.Panics)
	}
	got := map[[2]string]uint64{}
	for r, codes := range st.Requests {
		for code, n := range codes {
			got[[2]string{r, code}] = n
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(m.counts) {
		c.fatalf("request counters %v, model %v", got, m.counts)
	}
	if st.EntriesStored != m.stored {
		c.fatalf("entries_stored %d, model %d", st.EntriesStored, m.stored)
	}
	if st.Store.Sets != m.stored && tier == nil {
		c.fatalf("store sets %d, model %d", st.Store.Sets, m.stored)
	}
	if st.Store.Deletes != m.deletes {
		c.fatalf("store deletes %d, model %d", st.Store.Deletes, m.deletes)
	}
	if st.Store.Evictions != 0 {
		c.fatalf("%d evictions", st.Store.Evictions)
	}
}

type tierEntry struct {
	v   []byte
	exp int64
}

// clockTier is a Tier with TTLs on the fake clock.
type clockTier struct {
	mu    sync.Mutex
	m     map[string]tierEntry
	clock *fakeClock
	fail  bool
}

func (c *clockTier) setFail(b bool) { c.mu.Lock(); c.fail = b; c.mu.Unlock() }

func (c *clockTier) Get(_ context.Context, dst, key []byte) ([]byte, time.Duration, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return dst, 0, false, errTierDown
	}
	e, ok := c.m[string(key)]
	now := c.clock.now().UnixNano()
	if !ok || e.exp <= now {
		return dst, 0, false, nil
	}
	return append(dst, e.v...), time.Duration(e.exp - now), true, nil
}

func (c *clockTier) Set(_ context.Context, key, value []byte, ttl time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return errTierDown
	}
	c.m[string(key)] = tierEntry{v: bytes.Clone(value), exp: c.clock.now().UnixNano() + int64(ttl)}
	return nil
}

func (c *clockTier) Delete(_ context.Context, key []byte) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return false, errTierDown
	}
	e, ok := c.m[string(key)]
	delete(c.m, string(key))
	return ok && e.exp > c.clock.now().UnixNano(), nil
}

// FuzzHTTP drives a Server with the requests that its input describes
// (runHTTPFuzz) and checks every answer against a model map.
func FuzzHTTP(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 30 {
		b := make([]byte, 64+rng.IntN(400))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runHTTPFuzz(t, data)
	})
}

// TestHTTPModelRandom runs the model with random inputs (a quick smoke
// test outside fuzzing mode).
func TestHTTPModelRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 300
	if testing.Short() {
		n = 30
	}
	for range n {
		b := make([]byte, 64+rng.IntN(1500))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		runHTTPFuzz(t, b)
		if t.Failed() {
			return
		}
	}
}

// serveTCP sends raw on a new connection and reads the response.
func (c *fzCheck) serveTCP(r *fzReq, raw []byte) *httptest.ResponseRecorder {
	conn, err := net.Dial("tcp", c.addr)
	if err != nil {
		c.fatalf("dial: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(raw); err != nil {
		c.fatalf("write: %v", err)
	}
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: r.method})
	if err != nil {
		c.fatalf("%q: reading the response: %v", raw, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.fatalf("%q: reading the response body: %v", raw, err)
	}
	rec := httptest.NewRecorder()
	for k, v := range resp.Header {
		rec.Header()[k] = v
	}
	rec.WriteHeader(resp.StatusCode)
	rec.Body.Write(body)
	if r.method == "HEAD" && resp.ContentLength >= 0 {
		rec.Header().Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	c.trace = append(c.trace, fmt.Sprintf("%q -> %d %q", raw, rec.Code, rec.Body.String()))
	return rec
}

// TestHTTPModelTCP runs the model over real connections to a Server.
func TestHTTPModelTCP(t *testing.T) {
	checkLeaks(t)
	rng := rand.New(rand.NewPCG(7, 8))
	n := 60
	if testing.Short() {
		n = 5
	}
	for range n {
		b := make([]byte, 64+rng.IntN(1500))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		func() {
			clock := newFakeClock()
			f := &fzIn{b: b}
			o := Options{MaxBytes: 4 << 20, Shards: 1, MaxKeyBytes: fzMaxKey, MaxValueBytes: fzMaxValue, MaxBodyBytes: fzMaxBody,
				MaxTTL: fzMaxTTL, DefaultTTL: fzDefTTL, Now: clock.now}
			var tier *clockTier
			if f.n(2) == 0 {
				tier = &clockTier{m: map[string]tierEntry{}, clock: clock}
				o.Tier = tier
			}
			ts := startServer(t, o)
			defer ts.stop()
			m := &fzModel{m: map[string]modelEntry{}, now: func() int64 { return clock.now().UnixNano() }, counts: map[[2]string]uint64{},
				tier: tier, tm: map[string]modelEntry{}, tierUp: true}
			c := &fzCheck{t: t, s: ts.Server, m: m, clock: clock, tier: tier, addr: strings.TrimPrefix(ts.url, "http://")}
			for steps := 0; !f.done() && steps < 200; steps++ {
				c.step(f)
			}
			st := ts.Stats()
			got := map[[2]string]uint64{}
			for r, codes := range st.Requests {
				for code, n := range codes {
					got[[2]string{r, code}] = n
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(m.counts) {
				c.fatalf("request counters %v, model %v", got, m.counts)
			}
		}()
		if t.Failed() {
			return
		}
	}
}
