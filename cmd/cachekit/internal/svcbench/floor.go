package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"
)

// The machine's floor. The service's targets are latencies measured with
// the load generator on the same two cores, so part of every figure is
// what the generator, the kernel's loopback TCP and the scheduler cost
// whatever the server does. The floor phases send the same load to a
// server that does as little as an HTTP/1.1 server can (floorServe), in a
// process of its own as cachekit serve is: its figures bound from below
// what any server could get here.

// floorServe serves on ln until it is closed. For each request
// on a connection it reads the header lines, skips a Content-Length body,
// and writes one fixed response with a single write: 200 with a body of
// valueSize bytes to a GET, 204 to any other method. It stores nothing,
// parses nothing else and allocates nothing per request.
func floorServe(ln net.Listener, valueSize int) error {
	body := bytes.Repeat([]byte("x"), valueSize)
	ok := append([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(valueSize)+"\r\n\r\n"), body...)
	noContent := []byte("HTTP/1.1 204 No Content\r\n\r\n")
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go floorConn(c, ok, noContent)
	}
}

func floorConn(c net.Conn, ok, noContent []byte) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 16<<10)
	for {
		get, length, err := floorRequest(br)
		if err != nil {
			return
		}
		if _, err := br.Discard(int(length)); err != nil {
			return
		}
		resp := noContent
		if get {
			resp = ok
		}
		if _, err := c.Write(resp); err != nil {
			return
		}
	}
}

// floorRequest reads one request's head: whether it is a GET, and its
// Content-Length (0 without one).
func floorRequest(br *bufio.Reader) (get bool, length int64, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return false, 0, err
	}
	get = bytes.HasPrefix(line, []byte("GET "))
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return false, 0, err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return get, length, nil
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if found && bytes.EqualFold(name, []byte("Content-Length")) {
			if length, err = parseLength(bytes.TrimSpace(value)); err != nil {
				return false, 0, err
			}
		}
	}
}

var errBadLength = errors.New("floor: bad Content-Length")

func parseLength(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 12 {
		return 0, errBadLength
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errBadLength
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// floorMain runs floorServe for the -floor-serve flag and never returns.
func floorMain(addr string, valueSize int) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		err = floorServe(ln, valueSize)
	}
	fmt.Fprintf(os.Stderr, "svcbench floor: %v\n", err)
	os.Exit(1)
}

// hiccups is what a thread that only reads the clock lost to the machine.
type hiccups struct {
	Seconds float64 `json:"seconds"`
	LostMs  float64 `json:"lost_ms"` // the sum of the gaps over 100µs
	Over    []int   `json:"gaps_over"`
	MaxMs   float64 `json:"max_gap_ms"`
}

// hiccupThresholds are the gap lengths hiccups counts, in order.
var hiccupThresholds = []time.Duration{100 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond}

// measureHiccups reads the clock in a loop for d, on a thread of its own,
// and returns the gaps between consecutive readings: time the thread did
// not run (the host took the virtual CPU, or the kernel ran something
// else). Every request in flight during a gap is late by it, whatever the
// server.
func measureHiccups(d time.Duration) hiccups {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := hiccups{Seconds: d.Seconds(), Over: make([]int, len(hiccupThresholds))}
	start := time.Now()
	prev := start
	for prev.Sub(start) < d {
		now := time.Now()
		gap := now.Sub(prev)
		prev = now
		if gap <= hiccupThresholds[0] {
			continue
		}
		h.LostMs += float64(gap) / 1e6
		h.MaxMs = max(h.MaxMs, float64(gap)/1e6)
		for i, th := range hiccupThresholds {
			if gap > th {
				h.Over[i]++
			}
		}
	}
	return h
}
