package redis

import (
	"bytes"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// writerPanicClock is the system clock, except that, armed, it panics when
// read by the writer of loaded values (writeLoaded).
type writerPanicClock struct{ armed atomic.Bool }

func (p *writerPanicClock) Now() time.Time {
	if p.armed.Load() {
		buf := make([]byte, 64<<10)
		if bytes.Contains(buf[:runtime.Stack(buf, false)], []byte("writeLoaded")) {
			panic("clock failed")
		}
	}
	return time.Now()
}

// An Options.Clock that panicked when the writer goroutine read it (the age
// of a loaded value's write) ended the process: the panic was on the
// Cache's own goroutine, where no caller could recover it. The write is now
// dropped and counted in L2WriteErrors, and the writers go on.
func TestWriterClockPanicDropsTheWrite(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	src := newSource()
	src.set("a", "1")
	src.set("b", "2")
	clock := &writerPanicClock{}
	c := newTier(t, cl, src, func(o *Options[string]) {
		o.Clock = clock
		o.Writers = 1
	})
	clock.armed.Store(true)
	mustGet(t, c, "a", "1")
	eventually(t, 10*time.Second, "the panicking write counted", func() bool { return c.Stats().L2WriteErrors == 1 })
	clock.armed.Store(false)
	mustGet(t, c, "b", "2")
	eventually(t, 10*time.Second, "the next write stored", func() bool { return c.Stats().L2Writes == 1 })
	if _, ok := rawGet(t, cl, testPrefix(t)+"a"); ok {
		t.Error("the write whose clock panicked reached Redis")
	}
	if _, ok := rawGet(t, cl, testPrefix(t)+"b"); !ok {
		t.Error("the next write did not reach Redis")
	}
}
