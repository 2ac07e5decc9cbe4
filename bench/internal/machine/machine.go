// Package machine describes the machine and the checkout a benchmark ran
// on, for the headers of the generated reports.
package machine

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// CommandLine returns "go run PKG ARGS…" as one would type it at the
// repository root, arguments quoted for a POSIX shell where needed.
func CommandLine(pkg string, args []string) string {
	parts := []string{"go", "run", pkg}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// CPUModel returns the first "model name" of /proc/cpuinfo, or the
// architecture where there is none.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// LoadAverage returns the 1-, 5- and 15-minute load averages of
// /proc/loadavg, or "".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], ", ")
}

// Revision returns the git commit of the working tree, marked when the tree
// has uncommitted changes (untracked files included: a new source file in
// the root module is compiled into what is measured), or "" outside a git
// checkout.
func Revision() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := "commit " + strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		rev += " with uncommitted changes"
	}
	return rev
}
