// Package cli holds what the commands under bench/cmd share: running
// main and exiting on an error, doing a child process's job, parsing
// flags, and the flags and the output of a command whose report is
// measured, or read again from its JSON, and then written as JSON and as
// a Markdown document with charts.
package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/subproc"
)

// Main runs run with the process's arguments, standard output and
// standard error. If run fails, Main prints the error after the command's
// name (not flag.ErrHelp: the flag set has printed the usage) and exits
// with status 2.
func Main(name string, run func(args []string, stdout, stderr io.Writer) error) {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, name+":", err)
		}
		os.Exit(2)
	}
}

// Child reports whether this process was started by subproc.Run. If it
// was, Child has done its job: read it, run do and replied with the
// result; on an error it prints it after "NAME child:" and exits with
// status 1.
func Child[J, R any](name string, do func(J) (R, error)) bool {
	var job J
	child, err := subproc.Job(&job)
	if !child {
		return false
	}
	if err == nil {
		err = reply(job, do)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+" child:", err)
		os.Exit(1)
	}
	return true
}

// DoJob reads the job of a child process, runs do and replies with the
// result, for a command whose children do jobs of several types.
func DoJob[J, R any](do func(J) (R, error)) error {
	var job J
	if _, err := subproc.Job(&job); err != nil {
		return err
	}
	return reply(job, do)
}

func reply[J, R any](job J, do func(J) (R, error)) error {
	r, err := do(job)
	if err != nil {
		return err
	}
	return subproc.Reply(r)
}

// NewFlagSet returns a flag set that returns its errors instead of
// exiting, and prints them and its usage on stderr.
func NewFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// Parse parses args, which must hold flags only.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return nil
}

// Ints parses a comma-separated list of distinct integers, each of which
// check, unless nil, accepts. Its error is an *IntError. (A repeated value
// would be measured twice under one name, its results mixed up.)
func Ints(s string, check func(int) error) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil && check != nil {
			err = check(n)
		}
		if err == nil && slices.Contains(out, n) {
			err = fmt.Errorf("%d is given twice", n)
		}
		if err != nil {
			return nil, &IntError{Field: f, Err: err}
		}
		out = append(out, n)
	}
	return out, nil
}

// IntError is the error of Ints: the list's item that is not an integer,
// or that the check refused, and why.
type IntError struct {
	Field string // as it is in the list, spaces included
	Err   error  // strconv.Atoi's, or the check's
}

func (e *IntError) Error() string { return e.Err.Error() }

func (e *IntError) Unwrap() error { return e.Err }

// Positive is a check for Ints: n must be at least 1.
func Positive(n int) error {
	if n < 1 {
		return fmt.Errorf("%d is not positive", n)
	}
	return nil
}

// WriteTo writes what write writes to the file name, once it has all
// been written (see report.WriteFile).
func WriteTo(name string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return report.WriteFile(name, b.Bytes())
}

// Output holds the flags of a command that writes a report.
type Output struct {
	MD       string // -md: the Markdown document
	JSON     string // -json: the report as JSON
	ChartDir string // -chart-dir: where the charts go; the document's directory if empty
	FromJSON string // -from-json: read the report from this JSON file instead of measuring
	Note     string // -note: a note for the document's header
}

// Flags defines the flags -md, -json, -chart-dir, -from-json and -note on
// fs; charts says whether the command draws several charts or one.
func (o *Output) Flags(fs *flag.FlagSet, charts bool) {
	where := "where the chart goes"
	if charts {
		where = "where the charts go"
	}
	fs.StringVar(&o.MD, "md", "", "write the Markdown report to this file")
	fs.StringVar(&o.JSON, "json", "", "write the results as JSON to this file")
	fs.StringVar(&o.ChartDir, "chart-dir", "", where+" (default: the Markdown file's directory)")
	fs.StringVar(&o.FromJSON, "from-json", "", "draw the report from this JSON file instead of measuring")
	fs.StringVar(&o.Note, "note", "", "a note for the report's header")
}

// Load reads rep from the -from-json file if there is one, and runs
// measure, which fills rep, if not.
func (o *Output) Load(rep any, measure func() error) error {
	if o.FromJSON != "" {
		if err := report.ReadJSON(o.FromJSON, rep); err != nil {
			return err
		}
		// A -note given now replaces the run's: the document is new.
		if n, ok := rep.(interface{ SetNote(string) }); ok && o.Note != "" {
			n.SetNote(o.Note)
		}
		return nil
	}
	return measure()
}

// Header returns the header of a run of the command pkg
// ("./bench/cmd/gc") with args, starting now, with the -note.
func (o *Output) Header(pkg string, args []string) report.Header {
	h := report.NewHeader(pkg, args)
	h.Note = o.Note
	return h
}

// Write writes rep as JSON to the -json file, unless it was read from
// one, and, given -md, has charts draw the charts into the chart
// directory and writes the Markdown document that markdown renders with
// the charts' paths relative to the document.
func (o *Output) Write(rep any, charts func(dir string) ([]string, error), markdown func(charts []string) string) error {
	if o.JSON != "" && o.FromJSON == "" {
		if err := report.WriteJSON(o.JSON, rep); err != nil {
			return err
		}
	}
	if o.MD == "" {
		return nil
	}
	dir := o.ChartDir
	if dir == "" {
		dir = filepath.Dir(o.MD)
	}
	names, err := charts(dir)
	if err != nil {
		return err
	}
	rel := make([]string, len(names))
	for i, c := range names {
		path := filepath.Join(dir, c)
		if r, err := filepath.Rel(filepath.Dir(o.MD), path); err == nil {
			path = r
		}
		rel[i] = path
	}
	return report.WriteFile(o.MD, []byte(markdown(rel)))
}

// OneChart adapts a command that draws one chart to Write.
func OneChart(chart func(dir string) (string, error)) func(dir string) ([]string, error) {
	return func(dir string) ([]string, error) {
		name, err := chart(dir)
		if err != nil {
			return nil, err
		}
		return []string{name}, nil
	}
}
