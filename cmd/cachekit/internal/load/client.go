package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// request is one HTTP request to send.
type request struct {
	method      string
	target      []byte // the request target: path and query
	contentType string // "" for none
	ttl         string // the Cache-TTL header, "" for none
	body        []byte // nil for none
}

// sender sends requests, one at a time: each worker owns its senders, so a
// worker's read-your-writes check (its second sender) uses another
// connection than its writes.
type sender interface {
	// send sends req and returns the response's status; with keep, the
	// body is appended to dst and returned, else it is discarded. A kept
	// body longer than the sender's limit (runner.keepLimit) is not read
	// further: the request fails with errBodyTooLarge. Of a 404's body,
	// not kept, the first notFoundPeek bytes are appended (they tell a
	// missing route from a missing entry) and the rest is discarded.
	send(req *request, keep bool, dst []byte) (status int, body []byte, err error)
	close()
}

// newSender returns the sender of one worker: a built-in HTTP/1.1 client
// with a connection of its own for http URLs (it costs about half the CPU
// of net/http's client, which matters when the generator shares the
// machine with the server), net/http for https or when Options gives a
// client.
func (r *runner) newSender(c *http.Client) sender {
	if c == nil && r.scheme == "http" {
		return &rawSender{addr: r.hostPort, host: r.host, auth: r.auth, timeout: r.o.Timeout, maxKeep: r.keepLimit()}
	}
	if c == nil {
		c = r.defaultClient
	}
	return &stdSender{client: c, origin: r.origin, auth: r.auth, timeout: r.o.Timeout, maxKeep: r.keepLimit()}
}

// notFoundPeek is how much of a 404's body a sender returns when it does
// not keep the body: enough to hold the service's "no such route" answer.
// A 404 page may be far larger than any value (a web server's); it counts
// as a 404 whatever its size.
const notFoundPeek = 4 << 10

// bodyMode says what a sender does with a response's body.
type bodyMode uint8

const (
	bodyDiscard bodyMode = iota
	bodyKeep             // append it, or fail with errBodyTooLarge beyond the limit
	bodyPeek             // append it up to the limit, discard the rest
)

// keepLimit is the size of the largest response body a sender keeps: the
// read-your-writes check reads back values of Options.ValueSize bytes (a
// few more for the smallest JSON values), so a body several times as large
// cannot be one, and is not held in memory.
func (r *runner) keepLimit() int {
	return max(min(r.o.ValueSize, math.MaxInt/4)*4, 1<<20)
}

// stdSender sends through a net/http client.
type stdSender struct {
	client  *http.Client
	origin  string // scheme://host
	auth    string // the Authorization header, or ""
	timeout time.Duration
	maxKeep int // the largest body kept
	reader  bytes.Reader
}

func (s *stdSender) send(req *request, keep bool, dst []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	var body io.Reader
	if req.body != nil {
		s.reader.Reset(req.body)
		body = &s.reader
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, s.origin+string(req.target), body)
	if err != nil {
		return 0, dst, err
	}
	if req.contentType != "" {
		hr.Header.Set("Content-Type", req.contentType)
	}
	if req.ttl != "" {
		hr.Header.Set("Cache-TTL", req.ttl)
	}
	if s.auth != "" {
		hr.Header.Set("Authorization", s.auth)
	}
	resp, err := s.client.Do(hr)
	if err != nil {
		return 0, dst, err
	}
	defer resp.Body.Close()
	switch {
	case keep:
		if resp.ContentLength > int64(s.maxKeep) {
			return resp.StatusCode, dst, errBodyTooLarge
		}
		start := len(dst)
		buf := bytes.NewBuffer(dst)
		_, err = io.Copy(buf, io.LimitReader(resp.Body, int64(s.maxKeep)+1))
		dst = buf.Bytes()
		if err == nil && len(dst)-start > s.maxKeep {
			return resp.StatusCode, dst[:start], errBodyTooLarge
		}
	case resp.StatusCode == http.StatusNotFound:
		buf := bytes.NewBuffer(dst)
		if _, err = io.Copy(buf, io.LimitReader(resp.Body, notFoundPeek)); err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
		}
		dst = buf.Bytes()
	default:
		_, err = io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, dst, err
}

func (s *stdSender) close() {}

// rawSender is a minimal HTTP/1.1 client over one kept-alive connection:
// it writes each request with one system call and parses the status line,
// Content-Length, Transfer-Encoding: chunked and Connection: close. A
// broken connection is redialled for the next request, and so is one idle
// for idleCheck that its server has closed meanwhile (a peek at the socket,
// before the request is written). A request that fails on a reused
// connection before any byte of the response arrived is sent once more on
// a new one, if its timeout has not expired (the timeout bounds the whole
// request, dial and retry included), and if that cannot apply it twice: a
// GET or HEAD, or any request whose writing failed (a server that closed
// the connection did not read it). A PUT, POST or DELETE that was written
// whole may have been applied, its answer lost (a server's write timeout,
// a shutdown): it fails, as net/http's Transport has it.
type rawSender struct {
	addr     string // host:port to dial
	host     string // the Host header
	auth     string // the Authorization header, or ""
	timeout  time.Duration
	maxKeep  int // the largest body kept
	conn     net.Conn
	br       *bufio.Reader
	wbuf     []byte
	lastUsed time.Time // when the last request on conn ended
}

// idleCheck is how long a connection stays unused before the next request
// first checks that its server has not closed it: servers close idle
// connections after seconds at the least, and the check costs a system
// call that busy connections need not pay.
const idleCheck = 500 * time.Millisecond

var (
	errBadResponse  = errors.New("malformed HTTP response")
	errHeaderLarge  = errors.New("HTTP response header too large")
	errBodyTooLarge = errors.New("HTTP response body too large to be a value written by the load generator")
)

func (s *rawSender) close() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

func (s *rawSender) send(req *request, keep bool, dst []byte) (int, []byte, error) {
	s.wbuf = s.appendRequest(s.wbuf[:0], req)
	deadline := time.Now().Add(s.timeout)
	for attempt := 0; ; attempt++ {
		if s.conn != nil && time.Since(s.lastUsed) >= idleCheck && peerClosed(s.conn) {
			s.close()
		}
		reused := s.conn != nil
		if !reused {
			d := net.Dialer{Deadline: deadline, KeepAlive: 30 * time.Second}
			c, err := d.Dial("tcp", s.addr)
			if err != nil {
				return 0, dst, err
			}
			s.conn = c
			if s.br == nil {
				s.br = bufio.NewReaderSize(c, 16<<10)
			} else {
				s.br.Reset(c)
			}
		}
		status, body, written, started, err := s.roundTrip(deadline, keep, dst)
		if err == nil {
			s.lastUsed = time.Now()
			return status, body, nil
		}
		s.close()
		if !reused || started || attempt > 0 || !retryable(err) || !time.Now().Before(deadline) ||
			written && !idempotent(req.method) {
			return 0, dst, err
		}
	}
}

// idempotent reports whether a request of method may be sent twice.
func idempotent(method string) bool { return method == http.MethodGet || method == http.MethodHead }

func retryable(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (s *rawSender) appendRequest(b []byte, req *request) []byte {
	b = append(b, req.method...)
	b = append(b, ' ')
	b = append(b, req.target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, s.host...)
	b = append(b, "\r\nUser-Agent: cachekit-load\r\n"...)
	if s.auth != "" {
		b = append(b, "Authorization: "...)
		b = append(b, s.auth...)
		b = append(b, "\r\n"...)
	}
	if req.contentType != "" {
		b = append(b, "Content-Type: "...)
		b = append(b, req.contentType...)
		b = append(b, "\r\n"...)
	}
	if req.ttl != "" {
		b = append(b, "Cache-TTL: "...)
		b = append(b, req.ttl...)
		b = append(b, "\r\n"...)
	}
	if req.body != nil {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(req.body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, req.body...)
}

// roundTrip writes s.wbuf and reads the response by deadline; started
// reports whether any byte of the response arrived. With keep, the body is
// appended to dst, up to s.maxKeep bytes; without, a 404's first
// notFoundPeek bytes are (see sender).
func (s *rawSender) roundTrip(deadline time.Time, keep bool, dst []byte) (status int, body []byte, written, started bool, err error) {
	if err := s.conn.SetDeadline(deadline); err != nil {
		return 0, dst, false, false, err
	}
	limit := len(dst) + s.maxKeep // the longest dst may grow
	// A server may answer before it has read the whole request, and close
	// the connection: a 413 for a body over its limit. The rest of the
	// body then cannot be written, but the answer can still be read, and
	// it tells why the request failed better than the write's error
	// (broken pipe) does. Without an answer, the write's error stands.
	_, werr := s.conn.Write(s.wbuf)
	written = werr == nil
	var line []byte
	for {
		line, err = s.readLine()
		if err != nil {
			if werr != nil && len(line) == 0 {
				return 0, dst, false, false, werr
			}
			return 0, dst, written, len(line) > 0, err
		}
		started = true
		// HTTP/1.x NNN reason
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return 0, dst, written, true, errBadResponse
		}
		status, err = strconv.Atoi(string(line[9:12]))
		if err != nil {
			return 0, dst, written, true, errBadResponse
		}
		closeConn := line[7] == '0' // HTTP/1.0 closes unless told otherwise
		length, chunked := int64(-1), false
		for {
			h, err := s.readLine()
			if err != nil {
				return 0, dst, written, true, err
			}
			h = bytes.TrimRight(h, "\r\n")
			if len(h) == 0 {
				break
			}
			name, value, ok := bytes.Cut(h, []byte(":"))
			if !ok {
				return 0, dst, written, true, errBadResponse
			}
			value = bytes.TrimSpace(value)
			switch {
			case bytes.EqualFold(name, []byte("Content-Length")):
				length, err = strconv.ParseInt(string(value), 10, 64)
				if err != nil || length < 0 {
					return 0, dst, written, true, errBadResponse
				}
			case bytes.EqualFold(name, []byte("Transfer-Encoding")):
				chunked = bytes.EqualFold(value, []byte("chunked"))
			case bytes.EqualFold(name, []byte("Connection")):
				if bytes.EqualFold(value, []byte("close")) {
					closeConn = true
				} else if bytes.EqualFold(value, []byte("keep-alive")) {
					closeConn = false
				}
			}
		}
		if status >= 100 && status < 200 && status != 101 {
			continue // an interim response: the real one follows
		}
		mode, bodyLimit := bodyDiscard, limit
		switch {
		case keep:
			mode = bodyKeep
		case status == http.StatusNotFound:
			mode, bodyLimit = bodyPeek, len(dst)+notFoundPeek
		}
		switch {
		case status == 204 || status == 304:
		case chunked:
			dst, err = s.readChunked(mode, dst, bodyLimit)
		case length >= 0:
			dst, err = s.readN(length, mode, dst, bodyLimit)
		default: // the body lasts until the connection closes
			closeConn = true
			dst, err = s.readToEOF(mode, dst, bodyLimit)
		}
		if err != nil {
			return 0, dst, written, true, err
		}
		if closeConn || werr != nil {
			s.close()
		}
		return status, dst, written, true, nil
	}
}

func (s *rawSender) readLine() ([]byte, error) {
	line, err := s.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return line, errHeaderLarge
	}
	return line, err
}

// readN reads n bytes of body and appends them to dst as mode says, up to
// limit bytes of dst.
func (s *rawSender) readN(n int64, mode bodyMode, dst []byte, limit int) ([]byte, error) {
	if mode == bodyDiscard {
		_, err := io.CopyN(io.Discard, s.br, n)
		return dst, unexpected(err)
	}
	room := int64(limit - len(dst))
	if n > room && mode == bodyKeep {
		return dst, errBodyTooLarge
	}
	start, kept := len(dst), min(n, room)
	dst = slices.Grow(dst, int(kept))[:start+int(kept)]
	_, err := io.ReadFull(s.br, dst[start:])
	if err == nil && n > kept {
		_, err = io.CopyN(io.Discard, s.br, n-kept)
	}
	return dst, unexpected(err)
}

// readToEOF reads the body until the connection closes and appends it to
// dst as mode says, up to limit bytes of dst.
func (s *rawSender) readToEOF(mode bodyMode, dst []byte, limit int) ([]byte, error) {
	if mode == bodyDiscard {
		_, err := io.Copy(io.Discard, s.br)
		return dst, err
	}
	start := len(dst)
	buf := bytes.NewBuffer(dst)
	_, err := io.Copy(buf, io.LimitReader(s.br, int64(limit-start)+1))
	dst = buf.Bytes()
	if err == nil && len(dst) > limit {
		if mode == bodyKeep {
			return dst[:start], errBodyTooLarge
		}
		dst = dst[:limit]
		_, err = io.Copy(io.Discard, s.br)
	}
	return dst, err
}

// readChunked reads a chunked body and appends it to dst as mode says, up
// to limit bytes of dst.
func (s *rawSender) readChunked(mode bodyMode, dst []byte, limit int) ([]byte, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			return dst, unexpected(err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return dst, errBadResponse
		}
		if size == 0 { // trailers, then an empty line
			for {
				t, err := s.readLine()
				if err != nil {
					return dst, unexpected(err)
				}
				if len(bytes.TrimRight(t, "\r\n")) == 0 {
					return dst, nil
				}
			}
		}
		if dst, err = s.readN(size, mode, dst, limit); err != nil {
			return dst, err
		}
		if crlf, err := s.readLine(); err != nil || len(bytes.TrimRight(crlf, "\r\n")) != 0 {
			if err == nil {
				err = errBadResponse
			}
			return dst, unexpected(err)
		}
	}
}

// unexpected turns io.EOF in the middle of a response into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return fmt.Errorf("%w (the body was cut short)", io.ErrUnexpectedEOF)
	}
	return err
}
