package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// A 404 whose body was larger than the senders' keep limit (1 MiB by
// default) was counted as an error of kind "other" ("HTTP response body
// too large to be a value written by the load generator"), not "status
// 404": the senders kept every 404's body, to tell the service's "no such
// route" from a missing entry, and failed the request when it was large,
// as if it were a read-your-writes read-back. A server with a large "not
// found" page showed no 404 in the report. They now read the first
// notFoundPeek bytes of a 404 they do not keep and discard the rest,
// whatever the body's framing.
func TestLargeNotFoundPageCountsAsStatus404(t *testing.T) {
	checkLeaks(t)
	page := strings.Repeat("not found ", 200_000) // 2 MB
	for _, framing := range []string{"chunked", "length", "eof"} {
		var url string
		switch framing {
		case "chunked", "length":
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if framing == "length" {
					w.Header().Set("Content-Length", strconv.Itoa(len(page)))
				}
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(page))
			}))
			defer srv.Close()
			url = srv.URL
		case "eof": // the body lasts until the connection closes
			url = rawServer(t, func(int, *http.Request) (string, bool) {
				return "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n" + page, true
			})
		}
		for _, std := range []bool{false, true} {
			if framing == "eof" && std {
				continue // net/http reads such bodies itself
			}
			o := Options{URL: url + "/page/{key}", Mode: ModeGet, Requests: 4, Concurrency: 1, Seed: 1}
			if std {
				o.Client = &http.Client{}
			}
			rep, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if e := rep.ErrorKinds["status 404"]; rep.Errors != 4 || e == nil || e.Count != 4 {
				var kinds []string
				for k, e := range rep.ErrorKinds {
					kinds = append(kinds, k+": "+e.Example)
				}
				t.Errorf("%s body, net/http client %v: 4 GETs answered 404 with a 2 MB page: %d errors, kinds %q; want 4 of kind \"status 404\"",
					framing, std, rep.Errors, kinds)
			}
		}
	}
}

// In API mode a 404 for a missing entry is a miss, also with a large body,
// and the service's "no such route" is still told apart by the body's
// first bytes.
func TestLargeNotFoundPageIsAMissInAPIMode(t *testing.T) {
	checkLeaks(t)
	page := strings.Repeat("not found ", 200_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(page))
	}))
	defer srv.Close()
	for _, std := range []bool{false, true} {
		o := Options{URL: srv.URL, Mode: ModeAPI, Requests: 20, Concurrency: 1, Seed: 1}
		if std {
			o.Client = &http.Client{}
		}
		rep, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Errors != 0 || rep.Hits != 0 || rep.Misses != 20 {
			t.Errorf("net/http client %v: 20 reads answered 404 with a 2 MB page: %d errors (%v), %d hits, %d misses; want 20 misses",
				std, rep.Errors, rep.ErrorKinds, rep.Hits, rep.Misses)
		}
	}
}
