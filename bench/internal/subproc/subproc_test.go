package subproc

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

type job struct {
	N    int
	Mode string
}

type reply struct {
	Square int
	PID    int
}

// TestMain makes the test binary a child when Run starts it.
func TestMain(m *testing.M) {
	var j job
	child, err := Job(&j)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if !child {
		os.Exit(m.Run())
	}
	switch j.Mode {
	case "fail":
		fmt.Fprintln(os.Stderr, "child: failing on purpose")
		os.Exit(3)
	case "silent":
		os.Exit(0)
	}
	fmt.Println("noise on standard output that must not reach the reply")
	if err := Reply(reply{Square: j.N * j.N, PID: os.Getpid()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

func TestRun(t *testing.T) {
	var r reply
	if err := Run(job{N: 7}, &r, []string{"-test.run=^$"}, nil); err != nil {
		t.Fatal(err)
	}
	if r.Square != 49 {
		t.Errorf("reply %+v, want Square 49", r)
	}
	if r.PID == os.Getpid() || r.PID == 0 {
		t.Errorf("the job ran in process %d, the parent is %d", r.PID, os.Getpid())
	}
}

func TestRunFailures(t *testing.T) {
	var r reply
	err := Run(job{Mode: "fail"}, &r, []string{"-test.run=^$"}, nil)
	if err == nil || !strings.Contains(err.Error(), "failing on purpose") {
		t.Errorf("a failing child: error %v, want one quoting its standard error", err)
	}
	err = Run(job{Mode: "silent"}, &r, []string{"-test.run=^$"}, nil)
	if err == nil || !strings.Contains(err.Error(), "without a reply") {
		t.Errorf("a silent child: error %v", err)
	}
}

func TestNotAChild(t *testing.T) {
	if child, err := Job(&job{}); child || err != nil {
		t.Errorf("Job in the parent = %v, %v", child, err)
	}
	if err := Reply(reply{}); err == nil {
		t.Error("Reply in the parent succeeded")
	}
}
