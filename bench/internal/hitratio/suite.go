package hitratio

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// TraceSpec is a trace of the suite and the capacities it is replayed at.
type TraceSpec struct {
	Name       string // the file is Name + ".txt.gz" in the traces directory
	Family     Family // the kind of traffic, for grouping the report
	About      string // what the trace is, one line
	Capacities []int  // in entries, ascending
}

// File returns the trace's file name in the traces directory.
func (t TraceSpec) File() string { return t.Name + ".txt.gz" }

// Family groups traces whose traffic has the same character, so that the
// report can discuss them together.
type Family int

// The families, in report order.
const (
	FamilyBlock   Family = iota // databases and block storage
	FamilyLoop                  // loops, scans and mixes of programs
	FamilyRecency               // web, recommendations, file systems
	FamilySkew                  // skewed popularity, one-hit wonders
)

// Families returns every family in report order.
func Families() []Family { return []Family{FamilyBlock, FamilyLoop, FamilyRecency, FamilySkew} }

// Key returns the family's name in JSON.
func (f Family) Key() string {
	switch f {
	case FamilyBlock:
		return "block"
	case FamilyLoop:
		return "loop"
	case FamilyRecency:
		return "web"
	case FamilySkew:
		return "skew"
	}
	return fmt.Sprint(int(f))
}

// Title returns the family's heading.
func (f Family) Title() string {
	switch f {
	case FamilyBlock:
		return "Databases and block storage"
	case FamilyLoop:
		return "Loops and scans"
	case FamilyRecency:
		return "Web, recommendations and file systems"
	case FamilySkew:
		return "Skewed popularity and one-hit wonders"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// ============================================================================
// THE SUITE: every trace of ../shared/traces/README.md's suite table, at
// exactly the capacities that table lists. This is the one place to change
// when the table changes; CheckReadme reports any difference between this
// list and the README it is given, and the command warns about it.
// ============================================================================
var suite = []TraceSpec{
	{"arc-oltp", FamilyBlock, "A CODASYL database, one hour (ARC paper)", []int{250, 500, 1000, 2000, 5000, 10000}},
	{"arc-p3", FamilyBlock, "A Windows NT workstation's disk (ARC paper)", []int{25000, 100000, 400000}},
	{"lirs-loop", FamilyLoop, "A loop over 1,011 keys, about 500 times", []int{250, 500, 1000, 1250}},
	{"lirs-gli", FamilyLoop, "Glimpse text retrieval, loop-like", []int{250, 500, 1000, 2000}},
	{"scarab-recs", FamilyRecency, "A recommendation service, one hour", []int{1000, 10000, 50000, 100000}},
	{"cache2k-web12", FamilyRecency, "HTTP requests for product pages (e-commerce, December)", []int{200, 800, 3000}},
	{"lirs-sprite", FamilyRecency, "The Sprite network file system", []int{100, 400, 1000}},
	{"lirs-multi2", FamilyLoop, "A concurrent mix of several programs", []int{600, 1800, 3000}},
	{"lirs-2_pools", FamilySkew, "Synthetic: two pools of different popularity", []int{100, 500, 2000}},
	{"lirs-cs", FamilyLoop, "Cscope, loop-like", []int{100, 500, 1000}},
	{"lirs-ps", FamilyLoop, "Postgres, join-like", []int{100, 500, 1000}},
	{"adaptsize-request", FamilySkew, "CDN-like object requests (sizes dropped), mostly for objects requested once", []int{1000, 5000, 10000}},
	{"libcachesim-cloudphysicsio", FamilyBlock, "A CloudPhysics block I/O sample", []int{1000, 5000, 10000}},
	{"mixed", FamilyLoop, "The traces corda-vaultservice, lirs-loop and corda-vaultservice again, one after the other", []int{250, 500, 1000, 2000}},
	{"zipf-1.0001", FamilySkew, "Synthetic: Go's rand.Zipf with s = 1.0001, seed 42", []int{1000, 10000}},
}

// Suite returns the traces and capacities of the suite, in the traces
// README's order.
func Suite() []TraceSpec { return cloneSpecs(suite) }

// cloneSpecs returns a deep copy of specs, which callers may change.
func cloneSpecs(specs []TraceSpec) []TraceSpec {
	out := make([]TraceSpec, len(specs))
	for i, t := range specs {
		t.Capacities = slices.Clone(t.Capacities)
		out[i] = t
	}
	return out
}

// SelectTraces returns the traces of s named in a comma-separated list, in
// s's order; an empty list selects all of s.
func SelectTraces(s []TraceSpec, list string) ([]TraceSpec, error) {
	if strings.TrimSpace(list) == "" {
		return s, nil
	}
	want := map[string]bool{}
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if !slices.ContainsFunc(s, func(t TraceSpec) bool { return t.Name == name }) {
			names := make([]string, len(s))
			for i, t := range s {
				names[i] = t.Name
			}
			return nil, fmt.Errorf("unknown trace %q (known: %s)", name, strings.Join(names, ", "))
		}
		want[name] = true
	}
	var out []TraceSpec
	for _, t := range s {
		if want[t.Name] {
			out = append(out, t)
		}
	}
	return out, nil
}

// ReadmeSuite parses the suite table of a traces README: the rows of the
// first Markdown table whose header has a "trace" and a "capacities"
// column, capacities separated by slashes.
func ReadmeSuite(r io.Reader) (map[string][]int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	out := map[string][]int{}
	nameCol, capCol := -1, -1
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if nameCol >= 0 && len(out) > 0 {
				break // the end of the table
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if nameCol < 0 {
			nameCol, capCol = slices.Index(cells, "trace"), slices.Index(cells, "capacities")
			if nameCol < 0 || capCol < 0 {
				nameCol, capCol = -1, -1
			}
			continue
		}
		if max(nameCol, capCol) >= len(cells) || slices.IndexFunc(cells, notDelimiter) < 0 {
			continue
		}
		var caps []int
		for c := range strings.SplitSeq(cells[capCol], "/") {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil {
				return nil, fmt.Errorf("trace %s: capacity %q: %v", cells[nameCol], c, err)
			}
			caps = append(caps, n)
		}
		if _, dup := out[cells[nameCol]]; dup {
			return nil, fmt.Errorf("trace %s is listed twice", cells[nameCol])
		}
		out[cells[nameCol]] = caps
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no suite table (a table with trace and capacities columns) found")
	}
	return out, nil
}

// notDelimiter reports whether a cell is not one of a table's delimiter
// row: dashes, with a colon at either end to align the column ("---",
// ":-:", "--:").
func notDelimiter(cell string) bool {
	c := strings.TrimSuffix(strings.TrimPrefix(cell, ":"), ":")
	return c == "" || strings.Trim(c, "-") != ""
}

// CheckReadme compares s with the suite table of a traces README and
// returns one line per difference.
func CheckReadme(s []TraceSpec, readme io.Reader) ([]string, error) {
	table, err := ReadmeSuite(readme)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for _, t := range s {
		caps, ok := table[t.Name]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s is not in the README's suite table", t.Name))
		case !slices.Equal(caps, t.Capacities):
			diffs = append(diffs, fmt.Sprintf("%s: capacities %v here, %v in the README", t.Name, t.Capacities, caps))
		}
		delete(table, t.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(table)) {
		diffs = append(diffs, fmt.Sprintf("%s is in the README's suite table but not here", name))
	}
	return diffs, nil
}
