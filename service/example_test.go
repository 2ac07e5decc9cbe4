package service_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"

	"github.com/cachekit/cachekit/service"
)

// The Server is an http.Handler: here it is called directly; Serve or
// ListenAndServe run it on a listener.
func Example() {
	s, err := service.New(service.Options{
		MaxBytes: 64 << 20,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	do := func(method, target, contentType, body string) {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s %s: %d %s", method, target, rec.Code, rec.Body.String())))
	}
	do("POST", "/v1/entries", "application/json", `{"id": "user-42", "entry": {"name": "Ada"}}`)
	do("GET", "/v1/entries/user-42", "", "")
	do("PUT", "/v1/entries/greeting?ttl=10m", "text/plain; charset=utf-8", "hello")
	do("GET", "/v1/entries/greeting", "", "")
	do("DELETE", "/v1/entries/greeting", "", "")
	do("GET", "/v1/entries/greeting", "", "")
	// Output:
	// POST /v1/entries: 200 {"stored":1}
	// GET /v1/entries/user-42: 200 {"name": "Ada"}
	// PUT /v1/entries/greeting?ttl=10m: 204
	// GET /v1/entries/greeting: 200 hello
	// DELETE /v1/entries/greeting: 204
	// GET /v1/entries/greeting: 404 {"error":"no entry for this key","status":404}
}
