package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A ModeGet URL "is fetched as it is": a path that url.Parse accepts with a
// space or a byte outside ASCII in it is requested, escaped as net/http's
// client escapes it, by the built-in client too (it sent the raw bytes: a
// request line with a space in its target, which the server refuses with a
// 400).
func TestGetModeURLEscaped(t *testing.T) {
	checkLeaks(t)
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Write([]byte("hi"))
	}))
	defer srv.Close()
	for _, path := range []string{"/a b/{key}", "/caf\u00e9/{key}"} {
		paths = nil
		rep, err := Run(context.Background(), Options{URL: srv.URL + path, Mode: ModeGet, Requests: 3, Concurrency: 1, Cardinality: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := path[:len(path)-len("{key}")] + "key-0"
		if rep.Errors != 0 || len(paths) != 3 || paths[0] != want {
			t.Errorf("URL path %q: %d errors %v; the server saw %q, want %q", path, rep.Errors, rep.ErrorKinds, paths, want)
		}
	}
}
