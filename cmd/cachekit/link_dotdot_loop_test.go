//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cachekit/cachekit/internal/atomicfile"
)

// atomicfile.WriteFile through a link that loops (a -> b -> a) replaced the link
// with a regular file instead of failing, although resolveLinks documented
// a link "round a loop" as an error.
func TestLinkLoopIsError(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.svg"), filepath.Join(dir, "b.svg")
	if err := os.Symlink("b.svg", a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.svg", b); err != nil {
		t.Fatal(err)
	}
	werr := atomicfile.WriteFile(a, []byte("data"))
	lst, err := os.Lstat(a)
	if err != nil {
		t.Fatal(err)
	}
	if werr == nil || lst.Mode()&os.ModeSymlink == 0 {
		t.Errorf("atomicfile.WriteFile(%s) round a loop = %v, link kept: %v; want an error (ELOOP, as os.WriteFile gives) and the link kept",
			a, werr, lst.Mode()&os.ModeSymlink != 0)
	}
}

// resolveLinks cleaned ".." in a dangling link's target as text
// (filepath.Join): a target like "view/../chart.svg" through a symlinked
// directory created a stray file instead of the one the kernel creates, and
// the link stayed dangling.
func TestDotDotInTargetThroughLinkedDir(t *testing.T) {
	dir := t.TempDir()
	// dir/real/sub is a directory; dir/view links to it; dir/out links to
	// view/../chart.svg, which the kernel resolves to dir/real/chart.svg.
	if err := os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("real", "sub"), filepath.Join(dir, "view")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("view/../chart.svg", filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "out")
	writeThroughToReal(t, dir, name)
}

// resolveLinks took the directory of a name with ".." after a symlinked
// directory as text (filepath.Dir): "view/../out", a dangling link in real/,
// was not written through, and a new file appeared in the wrong directory.
func TestDotDotInNameThroughLinkedDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("real", "sub"), filepath.Join(dir, "view")); err != nil {
		t.Fatal(err)
	}
	// dir/real/out links to chart.svg (dir/real/chart.svg), not there yet.
	if err := os.Symlink("chart.svg", filepath.Join(dir, "real", "out")); err != nil {
		t.Fatal(err)
	}
	name := dir + "/view/../out" // the kernel reaches dir/real/out
	if err := atomicfile.WriteFile(name, []byte("data")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "real", "chart.svg"))
	if err != nil || string(got) != "data" {
		_, stray := os.Stat(filepath.Join(dir, "out"))
		t.Errorf("after atomicfile.WriteFile(%s): real/chart.svg holds %q, %v; want \"data\" (stray dir/out created: %v)",
			name, got, err, stray == nil)
	}
}
