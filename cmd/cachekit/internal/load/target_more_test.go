package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// A ModeGet URL's fragment is not sent, and a '/' or '?' in it is not
// taken for the path or the query: "http://host#a/b" requested "/b".
func TestGetModeFragmentNotTarget(t *testing.T) {
	checkLeaks(t)
	var mu sync.Mutex
	var targets []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		targets = append(targets, r.RequestURI)
		mu.Unlock()
		w.Write([]byte("hi"))
	}))
	defer srv.Close()
	for _, tc := range []struct{ suffix, want string }{
		{"#a/b", "/"},
		{"#x?y=1", "/"},
		{"/p{key}#frag/x", "/pkey-0"},
	} {
		mu.Lock()
		targets = nil
		mu.Unlock()
		rep, err := Run(context.Background(), Options{URL: srv.URL + tc.suffix, Mode: ModeGet, Requests: 1, Concurrency: 1, Cardinality: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if rep.Errors != 0 || len(targets) != 1 || targets[0] != tc.want {
			t.Errorf("URL %q: %d errors; the server saw %q, want %q", srv.URL+tc.suffix, rep.Errors, targets, tc.want)
		}
		mu.Unlock()
	}
}
