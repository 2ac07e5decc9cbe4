package redis

import (
	"context"
	"math"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// A write that Redis runs after its caller has given up on it (its
// Timeout passed) must not land at all: its bytes may be held on the way
// (a lost segment that TCP sends again, at least 200 ms later on Linux)
// or in the socket of a Redis that hangs, and run after a later write of
// the same key, which it would then overwrite (this instance's next Set,
// sent as soon as the first had failed, or another instance's). So every
// write is a script (writeScript, deleteScript) that does nothing once
// the server's clock is past the call's deadline, translated to the
// server's clock with serverClock's estimate of how far it is ahead of
// this machine's.
//
// The estimate comes from the writes' answers: each script returns the
// server's time when it ran, which was after this machine sent it, so the
// server's time minus the time of sending is at least the offset between
// the clocks (by the time the bytes took to get there). Each server of a
// cluster or ring has its own clock, and its own estimate. The smallest
// sample of the current window and of the last one that had samples is
// the estimate: a deadline moved by
// it is never earlier than the true one (a write that arrives in time is
// never refused), and later by no more than the round trip of the sample
// (a write that fails by its deadline, its fate unknown, is followed by a
// pause of that long, so that the next write of its key, sent after it,
// comes too late to be overtaken by it: see core.writeAndPublish). New
// windows replace old ones, so that a clock stepped back is followed
// (meanwhile the bound is later than it could be, never earlier). A clock
// stepped forward shows as a write refused although its answer came back
// in time: the write is sent again, bounded by that answer's sample, and
// the estimate follows once the windows have turned (an answer may come
// from another server than the one estimated, after a cluster's
// redirection, so it never raises an estimate at once).

// clockWindow is the span of the samples an estimate is taken from: the
// estimate is the smallest sample of the current window and the last.
const clockWindow = 10 * time.Second

// noSample marks a window without samples.
const noSample = math.MaxInt64

// serverClock estimates how far a Redis server's clock is ahead of this
// machine's, in milliseconds (a core keeps one per server: see
// core.clockOf). Safe for concurrent use.
type serverClock struct {
	mu        sync.Mutex
	cur, prev sample    // the smallest sample of this window and of the last
	until     time.Time // end of the current window
}

// sample is the server's time of a write's run less this machine's time
// of its sending (ms; noSample if none), and the write's round trip.
type sample struct {
	off int64
	rtt time.Duration
}

var none = sample{off: noSample}

// less reports whether s is a tighter bound than t.
func (s sample) less(t sample) bool { return s.off < t.off }

func newServerClock() *serverClock {
	return &serverClock{cur: none, prev: none}
}

// turn starts a new window if the current one has ended by now. The last
// window is the latest that had a sample, however old: the estimate is
// never lost once made (an old sample errs on the safe side unless the
// server's clock moved forward since, which a refusal in time shows).
// The caller holds s.mu.
func (s *serverClock) turn(now time.Time) {
	if !now.After(s.until) {
		return
	}
	if s.cur.off != noSample {
		s.prev = s.cur
	}
	s.cur, s.until = none, now.Add(clockWindow)
}

// sampleOf is the sample of a write sent at sent, which the server ran at
// server (its Unix milliseconds), answered now.
func sampleOf(sent time.Time, server int64) sample {
	return sample{off: server - sent.UnixMilli(), rtt: time.Since(sent)}
}

// bound returns the latest time (the server's Unix milliseconds) at which
// a write whose caller gives up at deadline may still apply, by the offset
// x gives, and settle, the time by this machine's clock after which it can
// no longer apply. x is not none.
func (x sample) bound(deadline time.Time) (latest int64, settle time.Time) {
	// Both clocks are read to the millisecond, rounded down, each a
	// millisecond short at most: 2 more keep a write that arrives in time
	// from being refused. By this machine's clock, the latest time is then
	// at most the sample's round trip and 3 ms past the deadline.
	return max(deadline.UnixMilli()+x.off+2, 1), deadline.Add(x.rtt + 3*time.Millisecond)
}

// observe takes the sample x into the estimate.
func (s *serverClock) observe(x sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turn(time.Now())
	if x.less(s.cur) {
		s.cur = x
	}
}

// latest returns the bound of a write whose caller gives up at deadline
// (see sample.bound), or 0 (no bound) if there is no estimate yet or no
// deadline.
func (s *serverClock) latest(deadline time.Time, ok bool) (latest int64, settle time.Time) {
	if !ok {
		return 0, time.Time{}
	}
	s.mu.Lock()
	s.turn(time.Now())
	x := s.cur
	if s.prev.less(x) {
		x = s.prev
	}
	s.mu.Unlock()
	if x.off == noSample {
		return 0, time.Time{}
	}
	return x.bound(deadline)
}

// writeScript writes ARGV[1] to KEYS[1], to expire at ARGV[3] (Unix ms) if
// ARGV[2] is "pxat", ARGV[3] ms later if it is "px", never otherwise,
// unless the server's clock is past ARGV[4] (Unix ms; 0: no bound). It
// returns {1, the server's time in Unix ms} if it wrote, {-1, time} if it
// was too late.
const writeScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local latest = tonumber(ARGV[4])
if latest > 0 and now > latest then return {-1, now} end
if ARGV[2] == 'pxat' then
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
elseif ARGV[2] == 'px' then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return {1, now}
`

var writeLua = goredis.NewScript(writeScript)

// runWrite adds writeScript to p, for key, value, expiry mode ("pxat",
// "px" or "": none) and exp, and the latest time; whole sends the script
// itself rather than its hash.
func runWrite(ctx context.Context, p goredis.Pipeliner, whole bool, key string, value []byte, mode string, exp, latest int64) *goredis.Cmd {
	return runScript(ctx, p, writeLua, whole, key, value, mode, exp, latest)
}

// runScript adds script to p, for one key and args: by its hash, or whole.
func runScript(ctx context.Context, p goredis.Pipeliner, script *goredis.Script, whole bool, key string, args ...any) *goredis.Cmd {
	if whole {
		return script.Eval(ctx, p, []string{key}, args...)
	}
	return script.EvalSha(ctx, p, []string{key}, args...)
}

// writeTooLate is the code of a script that found the server's clock past
// the write's latest time and did nothing.
const writeTooLate = -1
