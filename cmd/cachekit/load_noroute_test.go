package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/cachekit/cachekit/cmd/cachekit/internal/load"
	"github.com/cachekit/cachekit/service"
)

// serverStats fetches the server's GET /v1/stats.
func serverStats(t *testing.T, addr string) service.Stats {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st service.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// In --mode api every 404 to a read counted as a cache miss, the service's
// "no such route" 404 too: a read run against http://host:port/v1 (a base
// URL with a path) reported 100 misses and no error while the server's store
// saw no read. That 404 is now an error of its own kind.
func TestLoadNoRoute404IsAnError(t *testing.T) {
	checkLeaks(t)
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--log-format", "json"}, nil)
	if addr == "" {
		t.Fatalf("serve exited with %d:\n%s", stop(), logs.String())
	}
	defer stop()
	before := serverStats(t, addr)
	var out, errOut bytes.Buffer
	code := loadContext(context.Background(), []string{"--requests", "100", "--concurrency", "2", "--seed", "3",
		"--json", "-", "http://" + addr + "/v1"}, &out, &errOut, false)
	var rep load.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, %s: %v:\n%s", code, errOut.String(), err, out.String())
	}
	after := serverStats(t, addr)
	storeReads := int64(after.Store.Hits+after.Store.Misses) - int64(before.Store.Hits+before.Store.Misses)
	noRoute := int64(after.Requests["other"]["404"]) - int64(before.Requests["other"]["404"])
	t.Logf("report: requests %d, hits %d, misses %d, errors %d, exit %d; server: store reads %d, unknown-route 404s %d",
		rep.Requests, rep.Hits, rep.Misses, rep.Errors, code, storeReads, noRoute)
	if rep.Hits+rep.Misses != storeReads || rep.Errors != noRoute {
		t.Errorf("the report counts %d misses and %d errors, but the server's store saw %d reads and answered %d requests \"no such route\" (404): "+
			"those are failed requests, not cache misses", rep.Misses, rep.Errors, storeReads, noRoute)
	}
}
