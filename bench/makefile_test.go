package bench

import (
	"bytes"
	"context"
	"errors"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests below run targets of the repository's Makefile (../Makefile,
// read when the test runs) with make, in a scratch project under
// t.TempDir(), with an environment that holds none of the caller's Go or git
// settings.

// makeTools fails the test if one of the commands the README's make targets
// need is missing.
func makeTools(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			t.Fatalf("%s is not in PATH, and the README's commands (make targets) need it: %v", name, err)
		}
	}
}

// makeScratch returns a new directory holding a copy of the repository's
// Makefile and a module github.com/cachekit/cachekit whose root package is
// rootGo.
func makeScratch(t *testing.T, rootGo string) string {
	t.Helper()
	makefile, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatalf("reading the repository's Makefile: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "project")
	makeWrite(t, filepath.Join(dir, "Makefile"), string(makefile), 0o644)
	makeWrite(t, filepath.Join(dir, "go.mod"), "module github.com/cachekit/cachekit\n\ngo 1.25\n", 0o644)
	makeWrite(t, filepath.Join(dir, "cachekit.go"), rootGo, 0o644)
	return dir
}

// makeWrite writes a file, creating its directory.
func makeWrite(t *testing.T, name, content string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

// makeEnv is os.Environ() without the caller's Go, git and make settings,
// with a GOPATH, GOCACHE, GOMODCACHE, GOENV file and HOME of its own, no
// module proxy and the local toolchain only; set (KEY=value) is added last,
// so it overrides these.
func makeEnv(t *testing.T, set ...string) []string {
	t.Helper()
	drop := map[string]bool{
		"GOBIN": true, "GOPATH": true, "GOENV": true, "GOFLAGS": true, "GOWORK": true,
		"GOCACHE": true, "GOMODCACHE": true, "GOTOOLCHAIN": true, "GOPROXY": true,
		"MAKEFLAGS": true, "MAKELEVEL": true, "MFLAGS": true, "MAKEFILES": true,
		"HOME": true, "XDG_CONFIG_HOME": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if drop[k] || strings.HasPrefix(k, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	tmp := t.TempDir()
	// Go telemetry off, or a go command's telemetry child process could
	// still be writing under HOME when t.TempDir's cleanup removes it.
	makeWrite(t, filepath.Join(tmp, "home", ".config", "go", "telemetry", "mode"), "off\n", 0o644)
	env = append(env,
		"GOTOOLCHAIN=local",
		"GOPROXY=off",
		"HOME="+filepath.Join(tmp, "home"),
		"GOPATH="+filepath.Join(tmp, "gopath"),
		"GOCACHE="+filepath.Join(tmp, "gocache"),
		"GOMODCACHE="+filepath.Join(tmp, "gomodcache"),
		"GOENV="+filepath.Join(tmp, "goenv"), // no such file: no go env -w settings
		"GIT_CONFIG_NOSYSTEM=1",
	)
	return append(env, set...)
}

// makeRun runs name with args in dir and env, and returns its output and
// whether it exited 0.
func makeRun(t *testing.T, dir string, env []string, name string, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %s timed out:\n%s", name, strings.Join(args, " "), out)
	}
	return string(out), err == nil
}

// TestMakeDepsCheckFailsWhenGoListFails: make deps-check said "== root
// package imports only the standard library" and exited 0 when go list
// failed (go missing, or the root package importing a module that cannot be
// found), since the pipe into grep and its "|| true" hid go list's status.
func TestMakeDepsCheckFailsWhenGoListFails(t *testing.T) {
	makeTools(t, "make", "go")
	const ok = "== root package imports only the standard library"

	t.Run("standard library only", func(t *testing.T) {
		dir := makeScratch(t, "package cachekit\n\nimport _ \"fmt\"\n")
		out, passed := makeRun(t, dir, makeEnv(t), "make", "deps-check")
		if !passed || !strings.Contains(out, ok) {
			t.Fatalf("make deps-check failed on a root package importing only fmt:\n%s", out)
		}
	})

	failures := []struct {
		name   string
		rootGo string
		env    []string
	}{
		{"go missing", "package cachekit\n", []string{"GO=/nonexistent/go"}},
		{
			"unresolvable import",
			"package cachekit\n\nimport _ \"example.invalid/missing\"\n",
			[]string{"GOFLAGS=-mod=mod"}, // makeEnv sets GOPROXY=off
		},
		{
			// go list prints the missing package, which the grep lets
			// through as one of the module's own.
			"missing internal package",
			"package cachekit\n\nimport _ \"github.com/cachekit/cachekit/internal/missing\"\n",
			nil,
		},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			dir := makeScratch(t, tc.rootGo)
			out, passed := makeRun(t, dir, makeEnv(t, tc.env...), "make", "deps-check")
			if passed {
				t.Errorf("make deps-check exited 0 although go list failed:\n%s", out)
			}
			if strings.Contains(out, ok) {
				t.Errorf("make deps-check reported %q although go list failed:\n%s", ok, out)
			}
			if !strings.Contains(out, "deps-check: go list failed") {
				t.Errorf("make deps-check did not say that go list failed:\n%s", out)
			}
		})
	}
}

// makeFakeStaticcheck writes an executable staticcheck into binDir that
// appends its directory and arguments to the file named by
// $FAKE_STATICCHECK_LOG and exits with status exit.
func makeFakeStaticcheck(t *testing.T, binDir, exit string) {
	t.Helper()
	makeWrite(t, filepath.Join(binDir, "staticcheck"),
		"#!/bin/sh\necho \"$PWD $*\" >> \"$FAKE_STATICCHECK_LOG\"\nexit "+exit+"\n", 0o755)
}

// TestMakeLintFindsStaticcheck: make lint looked for staticcheck in
// $(go env GOPATH)/bin only, so it said "staticcheck is missing" when
// go install had put it in GOBIN (set in the environment or by go env -w),
// and when GOPATH listed several directories ("a:b/bin/staticcheck").
func TestMakeLintFindsStaticcheck(t *testing.T) {
	makeTools(t, "make", "go")

	// lint runs staticcheck and checks that the one in wantBin ran, once,
	// on ./... of the scratch module.
	lint := func(t *testing.T, dir string, env []string, log, wantBin string) {
		t.Helper()
		out, passed := makeRun(t, dir, append(env, "FAKE_STATICCHECK_LOG="+log), "make", "lint")
		if !passed {
			t.Fatalf("make lint failed:\n%s", out)
		}
		ran, err := os.ReadFile(log)
		if err != nil {
			t.Fatalf("make lint did not run %s/staticcheck (%v):\n%s", wantBin, err, out)
		}
		if got, want := string(ran), dir+" ./...\n"; got != want {
			t.Fatalf("staticcheck ran as %q, want %q; make lint said:\n%s", got, want, out)
		}
	}

	t.Run("GOBIN set by go env -w", func(t *testing.T) {
		dir := makeScratch(t, "package cachekit\n")
		tmp := t.TempDir()
		gobin := filepath.Join(tmp, "gobin")
		makeFakeStaticcheck(t, gobin, "0")
		env := makeEnv(t, "GOENV="+filepath.Join(tmp, "goenv"))
		if out, ok := makeRun(t, dir, env, "go", "env", "-w", "GOBIN="+gobin); !ok {
			t.Fatalf("go env -w GOBIN=%s failed:\n%s", gobin, out)
		}
		lint(t, dir, env, filepath.Join(tmp, "staticcheck.log"), gobin)
	})

	t.Run("GOPATH with two directories", func(t *testing.T) {
		dir := makeScratch(t, "package cachekit\n")
		tmp := t.TempDir()
		first, second := filepath.Join(tmp, "first"), filepath.Join(tmp, "second")
		makeFakeStaticcheck(t, filepath.Join(first, "bin"), "0")
		// go install uses the first directory: a staticcheck in the second
		// one is not the one make setup installed.
		makeFakeStaticcheck(t, filepath.Join(second, "bin"), "1")
		env := makeEnv(t, "GOPATH="+first+string(filepath.ListSeparator)+second)
		lint(t, dir, env, filepath.Join(tmp, "staticcheck.log"), filepath.Join(first, "bin"))
	})
}

// TestMakeFmtFormatsEveryGoFile: make fmt ran gofmt -w $(git ls-files
// '*.go'), so it left Go files that git did not track yet unformatted, and
// failed when a tracked Go file had been deleted from the working tree.
func TestMakeFmtFormatsEveryGoFile(t *testing.T) {
	makeTools(t, "make", "go", "git", "gofmt")
	const unformatted = "package cachekit\nfunc  F( ) int {\nreturn   1 }\n"
	formatted, err := format.Source([]byte(unformatted))
	if err != nil {
		t.Fatal(err)
	}

	// repo makes a scratch git repository whose root package is formatted
	// and tracked, and writes the files of add (name: unformatted content)
	// and git adds them.
	repo := func(t *testing.T, env []string, add ...string) string {
		t.Helper()
		dir := makeScratch(t, string(formatted))
		makeWrite(t, filepath.Join(dir, ".gitignore"), "ignored.go\n", 0o644)
		for _, name := range add {
			makeWrite(t, filepath.Join(dir, name), unformatted, 0o644)
		}
		for _, args := range [][]string{
			{"init", "-q"},
			append([]string{"add", "--", "Makefile", "go.mod", ".gitignore", "cachekit.go"}, add...),
		} {
			if out, ok := makeRun(t, dir, env, "git", args...); !ok {
				t.Fatalf("git %s failed:\n%s", strings.Join(args, " "), out)
			}
		}
		return dir
	}

	// check fails the test unless each file of want is formatted and each
	// of keep still has its unformatted content.
	check := func(t *testing.T, dir, out string, want, keep []string) {
		t.Helper()
		for _, name := range append(want, keep...) {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			isKept := false
			for _, k := range keep {
				isKept = isKept || k == name
			}
			switch {
			case isKept && string(got) != unformatted:
				t.Errorf("make fmt changed %s, which git ignores, to:\n%s\nmake fmt said:\n%s", name, got, out)
			case !isKept && !bytes.Equal(got, formatted):
				t.Errorf("make fmt left %s unformatted:\n%s\nmake fmt said:\n%s", name, got, out)
			}
		}
	}

	t.Run("untracked file", func(t *testing.T) {
		env := makeEnv(t)
		dir := repo(t, env, "tracked.go")
		for _, name := range []string{"untracked.go", "sub dir/untracked two.go", "ignored.go"} {
			makeWrite(t, filepath.Join(dir, name), unformatted, 0o644)
		}
		out, ok := makeRun(t, dir, env, "make", "fmt")
		if !ok {
			t.Fatalf("make fmt failed:\n%s", out)
		}
		check(t, dir, out,
			[]string{"cachekit.go", "tracked.go", "untracked.go", "sub dir/untracked two.go"},
			[]string{"ignored.go"})
	})

	t.Run("tracked file deleted", func(t *testing.T) {
		env := makeEnv(t)
		dir := repo(t, env, "tracked.go", "deleted.go")
		if err := os.Remove(filepath.Join(dir, "deleted.go")); err != nil {
			t.Fatal(err)
		}
		out, ok := makeRun(t, dir, env, "make", "fmt")
		if !ok {
			t.Fatalf("make fmt failed when a tracked Go file had been deleted:\n%s", out)
		}
		check(t, dir, out, []string{"cachekit.go", "tracked.go"}, nil)
		if _, err := os.Stat(filepath.Join(dir, "deleted.go")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("make fmt brought back deleted.go (%v)", err)
		}
	})
}
