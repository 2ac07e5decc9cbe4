//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cachekit/cachekit/internal/atomicfile"
)

// resolveLinks followed a dangling link's relative target from the link's
// path as written (filepath.Join cleans ".." lexically), not from the
// directory the kernel reaches through a symlinked directory: atomicfile.WriteFile
// created an unrelated file and left the named link dangling.
func TestDanglingLinkThroughLinkedDir(t *testing.T) {
	dir := t.TempDir()
	// dir/real/sub is a directory; dir/view links to it. view/out (that
	// is real/sub/out) links to ../chart.svg, which does not exist yet:
	// the kernel (a shell's redirection, os.WriteFile) creates
	// real/chart.svg through it.
	if err := os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("real", "sub"), filepath.Join(dir, "view")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "chart.svg"), filepath.Join(dir, "real", "sub", "out")); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "view", "out")
	writeThroughToReal(t, dir, name)
}

// atomicfile.WriteFile through a dangling link whose target's directory did not
// exist (an unmounted share, a directory not made yet) replaced the link
// itself with a regular file, contrary to its doc ("through a symbolic link
// it replaces the file the link points to, not the link"), where a shell's
// redirection or os.WriteFile fails and keeps the link.
func TestDanglingLinkIntoMissingDirKeepsLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "latest.svg")
	target := filepath.Join(dir, "charts", "run1.svg") // dir/charts does not exist
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	werr := atomicfile.WriteFile(link, []byte("data"))
	lst, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if lst.Mode()&os.ModeSymlink == 0 {
		t.Errorf("atomicfile.WriteFile(%s) = %v, and the link to %s is now a regular file (%v); want the link kept and an error, as os.WriteFile gives",
			link, werr, target, lst.Mode())
	}
}

// writeThroughToReal writes "data" through name, a dangling link that
// leads to dir/real/chart.svg, and checks that it reads back (no stray
// dir/chart.svg instead).
func writeThroughToReal(t *testing.T, dir, name string) {
	t.Helper()
	if err := atomicfile.WriteFile(name, []byte("data")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil || string(got) != "data" {
		_, stray := os.Stat(filepath.Join(dir, "chart.svg"))
		t.Errorf("after atomicfile.WriteFile(%s): reading it back gives %q, %v; want \"data\" (in real/chart.svg; stray dir/chart.svg created: %v)",
			name, got, err, stray == nil)
	}
}
