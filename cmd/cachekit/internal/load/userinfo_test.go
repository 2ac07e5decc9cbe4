package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Options.URL says a ModeGet URL "is fetched as it is": the credentials of
// a URL with user information (http://user:password@host/...) must be sent
// (HTTP basic authentication, as net/http's client sends them), not
// silently dropped, by the built-in client and by net/http's alike.
func TestURLUserInfoSent(t *testing.T) {
	checkLeaks(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ada" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("hi"))
	}))
	defer srv.Close()
	url := strings.Replace(srv.URL, "http://", "http://ada:s3cret@", 1) + "/hello"
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for _, c := range []*http.Client{nil, {Transport: tr}} {
		rep, err := Run(context.Background(), Options{URL: url, Mode: ModeGet, Requests: 20, Concurrency: 2, Seed: 1, Client: c})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Errors != 0 || rep.Hits != 20 {
			t.Errorf("net/http client %v: %d hits, %d errors %v: the URL's credentials were not sent", c != nil, rep.Hits, rep.Errors, rep.ErrorKinds)
		}
	}
}

// The report does not show the password of the URL.
func TestURLPasswordNotReported(t *testing.T) {
	checkLeaks(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hi")) }))
	defer srv.Close()
	url := strings.Replace(srv.URL, "http://", "http://ada:s3cret@", 1) + "/hello?k={key}"
	rep, err := Run(context.Background(), Options{URL: url, Mode: ModeGet, Requests: 2, Concurrency: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	rep.WriteJSON(&b)
	if strings.Contains(b.String(), "s3cret") || !strings.Contains(rep.URL, "ada:xxxxx@") || !strings.HasSuffix(rep.URL, "/hello?k={key}") {
		t.Errorf("report URL %q; report:\n%s", rep.URL, b.String())
	}
}
