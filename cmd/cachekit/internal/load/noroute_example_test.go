package load

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cachekit/cachekit/service"
)

// The example of the service's "no such route" 404 kept the trailing
// newline of its JSON body, and the text report broke the error line in
// two, with a lone ")" on the next line.
func TestNoRouteExampleOnOneLine(t *testing.T) {
	checkLeaks(t)
	svc, err := service.New(service.Options{MaxBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	srv := httptest.NewServer(svc)
	defer srv.Close()
	// A base URL with a path the API does not have: every read is the
	// service's 404 "no such route".
	rep, err := Run(context.Background(), Options{URL: srv.URL + "/v1", Requests: 3, Concurrency: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := rep.ErrorKinds["status 404 (no such route)"]
	if e == nil || e.Count != 3 {
		t.Fatalf("error kinds %v, want 3 of status 404 (no such route)", rep.ErrorKinds)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.TrimSpace(line) == ")" {
			t.Errorf("the example %q ends in a newline: the text report reads\n%s", e.Example, b.String())
			break
		}
	}
}
