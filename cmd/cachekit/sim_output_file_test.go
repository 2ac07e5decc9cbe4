//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// smallTrace writes a small trace and returns its path.
func smallTrace(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("1\n2\n3\n1\n", 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A new -chart file was always created with mode 0644, whatever the umask
// (atomicfile.WriteFile chmodded its temporary file to 0644): under umask 077 the
// chart was readable by everyone, where os.WriteFile gives 0600.
func TestChartHonoursUmask(t *testing.T) {
	dir := t.TempDir()
	trace := smallTrace(t, dir)
	chart := filepath.Join(dir, "new.svg")

	old := syscall.Umask(0o077)
	code, _, errOut := runSim(t, "-trace", trace, "-capacity", "2,3", "-policy", "lru", "-format", "csv", "-chart", chart)
	// What os.WriteFile does under the same umask, for comparison.
	ref := filepath.Join(dir, "ref.txt")
	werr := os.WriteFile(ref, []byte("x"), 0o644)
	syscall.Umask(old)

	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if werr != nil {
		t.Fatal(werr)
	}
	rst, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(chart)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != rst.Mode().Perm() {
		t.Errorf("under umask 077 the new chart has mode %v, want %v (what os.WriteFile(name, data, 0644) gives)",
			st.Mode().Perm(), rst.Mode().Perm())
	}
}

// -chart through a symbolic link whose target did not exist yet replaced the
// link with a regular file (resolveLinks gave up on a dangling link and
// atomicfile.WriteFile renamed over the link itself), where os.WriteFile or a
// shell redirection creates the target and keeps the link.
func TestChartThroughDanglingLink(t *testing.T) {
	dir := t.TempDir()
	trace := smallTrace(t, dir)
	if err := os.Mkdir(filepath.Join(dir, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.svg")
	target := filepath.Join(dir, "charts", "run1.svg")
	if err := os.Symlink(filepath.Join("charts", "run1.svg"), link); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runSim(t, "-trace", trace, "-capacity", "2,3", "-policy", "lru", "-format", "csv", "-chart", link)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lst, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	data, terr := os.ReadFile(target)
	if lst.Mode()&os.ModeSymlink == 0 || terr != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("after -chart %s (a link to the missing %s): the link's mode is %v, the target: %v (%d bytes); want the link kept and the chart in its target",
			link, target, lst.Mode(), terr, len(data))
	}
}

// A -chart file name that is valid but long (250 bytes, under the 255 of
// NAME_MAX) was refused with "file name too long": atomicfile.CheckWritable and
// atomicfile.WriteFile created a temporary file named "." + name + ".<digits>.tmp"
// next to it.
func TestChartLongFileName(t *testing.T) {
	dir := t.TempDir()
	trace := smallTrace(t, dir)
	chart := filepath.Join(dir, strings.Repeat("c", 246)+".svg")
	// The name itself is fine on this file system.
	if err := os.WriteFile(chart, nil, 0o644); err != nil {
		t.Skipf("this file system refuses a 250-byte name: %v", err)
	}
	if err := os.Remove(chart); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runSim(t, "-trace", trace, "-capacity", "2,3", "-policy", "lru", "-format", "csv", "-chart", chart)
	if code != 0 {
		t.Fatalf("-chart with a 250-byte file name: exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(chart)
	if err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("chart: %v, %d bytes", err, len(data))
	}
}

// -policy dropped duplicates only when they were spelt alike: "lrfu:0.5" and
// "lrfu : 0.5" (the same spec, spaces around name and parameter being
// ignored) were replayed twice and printed as two rows, one named with its
// spaces, whereas "a + b" and "a+b" are one trace and "2, 02" one capacity.
func TestPolicySpacesOneRow(t *testing.T) {
	dir := t.TempDir()
	trace := smallTrace(t, dir)
	code, out, errOut := runSim(t, "-trace", trace, "-capacity", "2", "-policy", "lrfu:0.5,lrfu : 0.5", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []row
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(rows) != 1 || rows[0].Policy != "lrfu:0.5" {
		var names []string
		for _, r := range rows {
			names = append(names, r.Policy)
		}
		t.Errorf("policies of the rows %q, want one row, lrfu:0.5", names)
	}
}
