package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachekit/cachekit/cmd/cachekit/internal/load"
)

// The preload writes every key the runs use (their --cardinality is
// -entries): with -entries not a multiple of 100 it wrote the multiple of
// 100 below, and under 100 it asked for --requests 0 (no limit) with a
// batch larger than the keys, which the load generator refuses. The
// arguments are run through the load generator against a server that
// notes the keys written.
func TestPreloadWritesEveryKey(t *testing.T) {
	for _, entries := range []int{1, 50, 100, 250, 1001} {
		args := preloadArgs(entries)
		o := load.Options{URL: "http://fake.invalid", Cardinality: entries, Concurrency: 4, Seed: 1}
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "--write-ratio":
				o.WriteRatio, _ = strconv.ParseFloat(args[i+1], 64)
				i++
			case "--batch":
				o.Batch, _ = strconv.Atoi(args[i+1])
				i++
			case "--requests":
				o.Requests, _ = strconv.ParseInt(args[i+1], 10, 64)
				i++
			case "--sequential":
				o.Sequential = true
			default:
				t.Fatalf("unexpected argument %q in %q", args[i], args)
			}
		}
		if o.Requests <= 0 {
			t.Errorf("-entries %d: preload arguments %q send no bounded number of requests", entries, args)
			continue
		}
		var mu sync.Mutex
		written := map[string]bool{}
		o.Client = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			var msgs []struct {
				ID string `json:"id"`
			}
			body, _ := io.ReadAll(r.Body)
			if len(body) > 0 && body[0] != '[' {
				body = append(append([]byte{'['}, body...), ']')
			}
			if err := json.Unmarshal(body, &msgs); err != nil {
				return nil, err
			}
			mu.Lock()
			for _, m := range msgs {
				written[m.ID] = true
			}
			mu.Unlock()
			return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
		})}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		rep, err := load.Run(ctx, o)
		cancel()
		if err != nil {
			t.Errorf("-entries %d: preload arguments %q: %v", entries, args, err)
			continue
		}
		missing := 0
		for k := range entries {
			if !written["key-"+strconv.Itoa(k)] {
				missing++
			}
		}
		if missing > 0 || rep.Errors > 0 {
			t.Errorf("-entries %d: preload arguments %q left %d of the %d keys unwritten (%d errors)", entries, args, missing, entries, rep.Errors)
		}
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The flags that the load generator would refuse only after the build and
// the floor phases, or take for its default (a zero duration: 10 s), are
// refused at once.
func TestConfigRefused(t *testing.T) {
	good := config{Entries: 1000, ValueSize: 450, Duration: time.Minute, SweepFor: time.Minute, Concurrency: 8, MaxBytes: "8GiB"}
	if err := good.check(); err != nil {
		t.Fatalf("%+v refused: %v", good, err)
	}
	for flag, c := range map[string]config{
		"-entries":        {Entries: 0, ValueSize: 450, Duration: time.Minute, SweepFor: time.Minute, Concurrency: 8},
		"-value-size":     {Entries: 1000, ValueSize: -1, Duration: time.Minute, SweepFor: time.Minute, Concurrency: 8},
		"-concurrency":    {Entries: 1000, ValueSize: 450, Duration: time.Minute, SweepFor: time.Minute, Concurrency: 0},
		"-duration":       {Entries: 1000, ValueSize: 450, Duration: 0, SweepFor: time.Minute, Concurrency: 8},
		"-sweep-duration": {Entries: 1000, ValueSize: 450, Duration: time.Minute, SweepFor: -time.Second, Concurrency: 8},
	} {
		if err := c.check(); err == nil || !strings.HasPrefix(err.Error(), flag+" ") {
			t.Errorf("%s: %+v: error %v, want one about %s", flag, c, err, flag)
		}
	}
}
