//go:build unix

package redis

import (
	"syscall"
	"testing"
	"time"
)

// processCPU returns the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerOp starts counting the process's CPU time; the function it returns
// reports it per operation (cpu-ns/op), which, unlike ns/op, does not grow
// when other processes share the machine. It counts every goroutine of the
// process (the garbage collector's too), not redis-server.
func cpuPerOp(b *testing.B) func() {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
