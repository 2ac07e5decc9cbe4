package load

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// With an https URL the requests go through net/http clients, which
// followed redirects: a write answered with 302 was sent again as a GET
// of the new location, and its 200 counted the write as a success,
// though nothing was stored. The built-in client (http URLs) follows none,
// and send counts a redirected write as failed; so must the https clients.
//
// The https clients trust the system's roots only: the run is done by a
// child process (this test again) whose SSL_CERT_FILE is the test
// server's certificate.
func TestHTTPSWriteRedirectIsError(t *testing.T) {
	if url := os.Getenv("CACHEKIT_LOAD_REDIRECT_URL"); url != "" {
		rep, err := Run(context.Background(), Options{URL: url, WriteRatio: 1, Requests: 5, Concurrency: 1})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		var redirected int64
		if e := rep.ErrorKinds["status 302"]; e != nil {
			redirected = e.Count
		}
		fmt.Printf("result: %d errors, %d redirected\n", rep.Errors, redirected)
		os.Exit(0)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.Write([]byte("a page"))
	}))
	defer srv.Close()
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHTTPSWriteRedirectIsError$")
	cmd.Env = append(os.Environ(), "CACHEKIT_LOAD_REDIRECT_URL="+srv.URL, "SSL_CERT_FILE="+certFile, "SSL_CERT_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "result: 5 errors, 5 redirected") {
		t.Errorf("5 writes answered with 302; want 5 errors of kind %q, got:\n%s", "status 302", out)
	}
}
