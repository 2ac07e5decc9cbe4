// Package subproc runs a measurement in a fresh process: the running
// binary starts itself again with a job in its environment, the child
// does the job and sends back its result as JSON on a pipe of its own
// (file descriptor 3), so that nothing a cache prints on standard output
// can corrupt it.
//
// Memory and garbage-collection figures need a fresh process per cache: a
// heap that an earlier cache grew, fragmented or left to the scavenger
// would be charged to the next one.
package subproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// envVar carries the job, as JSON, from the parent to the child.
const envVar = "CACHEKIT_BENCH_JOB"

// resultFD is the child's end of the result pipe.
const resultFD = 3

// Job returns the job this process was started for, and false if it was
// not started by Run.
func Job(job any) (bool, error) {
	s, ok := os.LookupEnv(envVar)
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal([]byte(s), job); err != nil {
		return true, fmt.Errorf("subproc: bad job %q: %w", s, err)
	}
	return true, nil
}

// Reply sends the child's result to the parent. A child calls it once,
// then exits.
func Reply(result any) error {
	if _, ok := os.LookupEnv(envVar); !ok {
		return errors.New("subproc: not a child (not started by Run)")
	}
	f := os.NewFile(resultFD, "result")
	if f == nil {
		return errors.New("subproc: no result pipe")
	}
	defer f.Close()
	return json.NewEncoder(f).Encode(result)
}

// Run starts this binary again with job in its environment and args as
// its arguments, waits for it, and decodes its reply into result. The
// child's standard error goes to stderr; its standard output is
// discarded. A child that exits with an error or without replying is an
// error that quotes the end of what it wrote on standard error.
func Run(job, result any, args []string, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("subproc: %w", err)
	}
	spec, err := json.Marshal(job)
	if err != nil {
		return fmt.Errorf("subproc: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("subproc: %w", err)
	}
	defer r.Close()
	var tail tailBuffer
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envVar+"="+string(spec))
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stdout = io.Discard
	cmd.Stderr = &tail
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(stderr, &tail)
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("subproc: %w", err)
	}
	w.Close() // the child holds its own copy
	reply, readErr := io.ReadAll(r)
	waitErr := cmd.Wait()
	if waitErr != nil {
		return fmt.Errorf("subproc: child %s failed: %w; its last words: %s", spec, waitErr, tail.String())
	}
	if readErr != nil {
		return fmt.Errorf("subproc: reading the reply: %w", readErr)
	}
	if len(bytes.TrimSpace(reply)) == 0 {
		return fmt.Errorf("subproc: child %s exited without a reply; its last words: %s", spec, tail.String())
	}
	if err := json.Unmarshal(reply, result); err != nil {
		return fmt.Errorf("subproc: bad reply %q: %w", reply, err)
	}
	return nil
}

// tailBuffer keeps the last 2 KiB written to it.
type tailBuffer struct{ b []byte }

const tailMax = 2 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = append(t.b[:0], t.b[len(t.b)-tailMax:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	s := string(bytes.TrimSpace(t.b))
	if s == "" {
		return "(nothing)"
	}
	return s
}
