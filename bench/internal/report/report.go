// Package report holds what the generated benchmark documents share: the
// header that names the command, the date, the machine and the versions,
// a warning when the machine was busy, Markdown table helpers, and writing
// a file only once it is complete.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/machine"
	"github.com/cachekit/cachekit/internal/atomicfile"
)

// Module is a dependency linked into the binary, with its version.
type Module struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// Header describes a run: what the top of every document shows.
type Header struct {
	Command    string   `json:"command"`
	Date       string   `json:"date"`
	GoVersion  string   `json:"go_version"`
	OSArch     string   `json:"os_arch"`
	CPU        string   `json:"cpu"`
	Cores      int      `json:"cores"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	Revision   string   `json:"revision,omitempty"`
	Modules    []Module `json:"modules,omitempty"`
	LoadBefore string   `json:"load_before,omitempty"`
	LoadAfter  string   `json:"load_after,omitempty"`
	Elapsed    string   `json:"elapsed,omitempty"`
	Note       string   `json:"note,omitempty"`
	// Method is one line on how the figures were taken, shown in the
	// header's table.
	Method string `json:"method,omitempty"`
}

// SetNote sets the note of the header (cli.Output.Load, for a document
// drawn again from JSON with a new -note). The note is not in the JSON
// file, so it also replaces the -note of the command the header shows:
// that command, with -from-json, draws the same document again.
func (h *Header) SetNote(note string) {
	h.Note = note
	h.Command = CommandWithNote(h.Command, note)
}

// CommandWithNote returns cmd, a command line as machine.CommandLine
// quotes it, with its -note flag replaced by one of note, so that the
// command shown with a document drawn again with a new note gives that
// note. A line that is not a "go run" command is returned as it is.
func CommandWithNote(cmd, note string) string {
	words, ok := splitCommand(cmd)
	if !ok || len(words) < 3 || words[0] != "go" || words[1] != "run" {
		return cmd // not a command of machine.CommandLine
	}
	var args []string
	for i := 3; i < len(words); i++ {
		switch w := words[i]; {
		case w == "-note" || w == "--note":
			i++ // and its value
		case strings.HasPrefix(w, "-note=") || strings.HasPrefix(w, "--note="):
		default:
			args = append(args, w)
		}
	}
	return machine.CommandLine(words[2], append(args, "-note", note))
}

// splitCommand splits a command line quoted as machine.CommandLine quotes
// it (a word in single quotes; a quote inside closes them, is escaped by
// a backslash and reopens them) into its words.
func splitCommand(s string) ([]string, bool) {
	var words []string
	var w strings.Builder
	in, quoted := false, false // inside quotes; the word had quotes
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case in && c == '\'':
			in = false
		case in:
			w.WriteByte(c)
		case c == '\'':
			in, quoted = true, true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		case c == ' ':
			if w.Len() > 0 || quoted {
				words = append(words, w.String())
			}
			w.Reset()
			quoted = false
		default:
			w.WriteByte(c)
		}
	}
	if w.Len() > 0 || quoted {
		words = append(words, w.String())
	}
	return words, !in
}

// Peers are the modules whose versions the headers name.
var Peers = []string{
	"github.com/maypok86/otter/v2",
	"github.com/Yiling-J/theine-go",
	"github.com/dgraph-io/ristretto/v2",
	"github.com/hashicorp/golang-lru/v2",
	"github.com/patrickmn/go-cache",
	"github.com/puzpuzpuz/xsync/v4",
	"github.com/allegro/bigcache/v3",
	"github.com/coocood/freecache",
	"github.com/VictoriaMetrics/fastcache",
}

// NewHeader describes this process and machine now. pkg is the command's
// package ("./bench/cmd/articles") and args its arguments, for the command
// line that regenerates the document.
func NewHeader(pkg string, args []string) Header {
	return Header{
		Command:    machine.CommandLine(pkg, args),
		Date:       time.Now().UTC().Format("2006-01-02 15:04 MST"),
		GoVersion:  runtime.Version(),
		OSArch:     runtime.GOOS + "/" + runtime.GOARCH,
		CPU:        machine.CPUModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Revision:   machine.Revision(),
		Modules:    LinkedPeers(),
		LoadBefore: machine.LoadAverage(),
	}
}

// Finish records the load average after the run and how long it took.
func (h *Header) Finish(start time.Time) {
	h.LoadAfter = machine.LoadAverage()
	h.Elapsed = time.Since(start).Round(time.Second).String()
}

// LinkedPeers returns the versions of the peers linked into the binary.
func LinkedPeers() []Module {
	return LinkedModules(Peers)
}

// LinkedModules returns the versions of the modules of paths linked into
// the binary, in the order of paths.
func LinkedModules(paths []string) []Module {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var out []Module
	for _, p := range paths {
		for _, d := range bi.Deps {
			if d.Path == p {
				out = append(out, Module{Path: d.Path, Version: d.Version})
			}
		}
	}
	return out
}

// Markdown returns the document's title, a generated-file comment naming
// the command, and the header table, followed by a warning if the
// machine was busy when the run started and the note, if any.
func (h Header) Markdown(title, generator string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "<!-- Generated by %s; do not edit by hand. -->\n\n", generator)
	fmt.Fprintf(&b, "Generated by `%s` on %s.\n\n", h.Command, h.Date)
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| Go | %s %s |\n", h.GoVersion, h.OSArch)
	fmt.Fprintf(&b, "| CPU | %s, %d cores (GOMAXPROCS %d) |\n", Cell(h.CPU), h.Cores, h.GOMAXPROCS)
	if h.Revision != "" {
		fmt.Fprintf(&b, "| cachekit | %s |\n", Cell(h.Revision))
	}
	if len(h.Modules) > 0 {
		var ms []string
		for _, m := range h.Modules {
			ms = append(ms, m.Path+" "+m.Version)
		}
		fmt.Fprintf(&b, "| peers | %s |\n", Cell(strings.Join(ms, ", ")))
	}
	if h.Method != "" {
		fmt.Fprintf(&b, "| method | %s |\n", Cell(h.Method))
	}
	if h.Elapsed != "" {
		fmt.Fprintf(&b, "| run time | %s |\n", h.Elapsed)
	}
	if h.LoadBefore != "" || h.LoadAfter != "" {
		fmt.Fprintf(&b, "| load average (1, 5, 15 min) | %s before, %s after |\n", Cell(h.LoadBefore), Cell(h.LoadAfter))
	}
	b.WriteString("\n")
	b.WriteString(BusyWarning(h.LoadBefore, h.Cores, "timings are", "Regenerate on a quiet machine"))
	if h.Note != "" {
		fmt.Fprintf(&b, "> **Note.** %s\n\n", h.Note)
	}
	return b.String()
}

// BusyWarning returns the warning paragraph that a report prints under its
// header when the load average loadBefore, read as the run started, says
// that the machine was busy (Busy), or "" if it was not. what names what
// the load made noisy, with its verb ("timings are"); regenerate says how
// to do better ("Regenerate on a quiet machine").
func BusyWarning(loadBefore string, cores int, what, regenerate string) string {
	if !Busy(loadBefore, cores) {
		return ""
	}
	first, _, _ := strings.Cut(loadBefore, ",")
	return fmt.Sprintf("> **Warning.** The 1-minute load average was %s when the run started, on %d cores: "+
		"other work shared the machine, so %s noisy. %s "+
		"before drawing conclusions from small differences.\n\n", strings.TrimSpace(first), cores, what, regenerate)
}

// Busy reports whether a load average ("1.5, 1.2, 1.0") says that other
// work kept at least half of the cores busy in the last minute.
func Busy(load string, cores int) bool {
	first, _, _ := strings.Cut(load, ",")
	l, err := strconv.ParseFloat(strings.TrimSpace(first), 64)
	return err == nil && cores > 0 && l >= 0.5*float64(cores)
}

// Cell makes s safe inside a Markdown table cell.
func Cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// Table is a Markdown table under construction.
type Table struct {
	head  []string
	align []bool // right-aligned columns
	rows  [][]string
}

// NewTable starts a table. A column whose name starts with ">" is
// right-aligned (the ">" is not shown).
func NewTable(cols ...string) *Table {
	t := &Table{}
	for _, c := range cols {
		right := strings.HasPrefix(c, ">")
		t.head = append(t.head, strings.TrimPrefix(c, ">"))
		t.align = append(t.align, right)
	}
	return t
}

// Row adds a row; missing cells are left empty, extra ones are an error
// of the caller and panic.
func (t *Table) Row(cells ...string) {
	if len(cells) > len(t.head) {
		panic(fmt.Sprintf("report: row of %d cells in a table of %d columns", len(cells), len(t.head)))
	}
	r := make([]string, len(t.head))
	for i, c := range cells {
		r[i] = Cell(c)
	}
	t.rows = append(t.rows, r)
}

// Len returns the number of rows.
func (t *Table) Len() int { return len(t.rows) }

// String renders the table, followed by a blank line.
func (t *Table) String() string {
	var b strings.Builder
	b.WriteString("|")
	for _, h := range t.head {
		b.WriteString(" " + Cell(h) + " |")
	}
	b.WriteString("\n|")
	for _, right := range t.align {
		if right {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}

// WriteFile writes data to name, creating its directory if need be,
// through a temporary file in the same directory (atomicfile.WriteFile:
// through a symbolic link it replaces the file the link points to, and it
// keeps the permissions of a file it replaces), so that a failed run never
// leaves half a document.
func WriteFile(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(name, data)
}

// WriteJSON writes v as indented JSON to name (see WriteFile).
func WriteJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(name, append(b, '\n'))
}

// ReadJSON reads a file written by WriteJSON into v.
func ReadJSON(name string, v any) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Ratio formats a/b as "1.23×", or "–" when b is not positive. A ratio
// that is not 1 but rounds to 1.00 gets more decimals, up to 6 ("0.996×"),
// so that it does not read as a tie; one within a millionth of 1 is a tie
// for any figure these documents measure, and prints as "1.00×" (fifteen
// decimals of rounding error, "1.000000000000000×", still read as 1).
func Ratio(a, b float64) string {
	if b <= 0 {
		return "–"
	}
	r := a / b
	s := fmt.Sprintf("%.2f", r)
	for d := 3; d <= 6 && strings.TrimRight(s, "0") == "1."; d++ {
		s = strconv.FormatFloat(r, 'f', d, 64)
	}
	if strings.TrimRight(s, "0") == "1." {
		s = "1.00"
	}
	return s + "×"
}

// Thousands formats n with comma separators: 1,000,000.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// ShortDuration formats d without zero minutes and seconds: "1h",
// "1h30m", "10s".
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Count returns n and noun, the noun plural (with an s) unless n is 1:
// "1 round", "3 rounds".
func Count(n int, noun string) string {
	return fmt.Sprintf("%d %s%s", n, noun, Plural(n))
}

// Plural returns the plural ending of a noun counted n times: "s", or ""
// for 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Signed formats a difference with its sign and two decimals, "0.00" for
// one that rounds to zero (not "-0.00" or "+0.00").
func Signed(v float64) string {
	s := fmt.Sprintf("%+.2f", v)
	if s == "+0.00" || s == "-0.00" {
		return "0.00"
	}
	return s
}

// JoinAnd joins words as "a", "a and b", "a, b and c".
func JoinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
