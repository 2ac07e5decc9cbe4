package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// A --json file that cannot be created is an error before the run, as a
// --cpuprofile file that cannot be created is: the run (minutes, perhaps)
// must not be sent only for its report to be lost at the end.
func TestLoadJSONFileCheckedBeforeRun(t *testing.T) {
	checkLeaks(t)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	bad := filepath.Join(t.TempDir(), "no-such-dir", "report.json")
	var out, errOut bytes.Buffer
	code := loadContext(context.Background(), []string{"--mode", "get", "--requests", "5", "--concurrency", "1", "--json", bad, srv.URL},
		&out, &errOut, false)
	if code == 0 || n.Load() != 0 {
		t.Errorf("--json %s: exit %d after sending %d requests; want a failure before any request\nstderr: %s", bad, code, n.Load(), errOut.String())
	}
}
