package load

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Clock tells the time and waits; tests inject a fake one.
type Clock interface {
	Now() time.Time
	// SleepUntil returns once t is reached (true) or ctx is done (false).
	SleepUntil(ctx context.Context, t time.Time) bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// job is one scheduled request.
type job struct {
	seq      int64     // 0, 1, 2, ... in scheduling order
	key      uint64    // the key's number
	write    bool      // a write (else a read)
	intended time.Time // when it is due (paced runs), else zero
}

// scheduler hands out jobs in order: it numbers them, draws their keys
// (one key per Group consecutive jobs) and operations, computes when each is
// due in a paced run, and says when the run is over. In a paced run it also
// keeps the cut-off: the moment from which no request is sent, start +
// Duration or, earlier, the moment the run was cancelled. Its methods are
// safe for concurrent use.
type scheduler struct {
	mu       sync.Mutex
	seq      int64
	left     int    // jobs left in the current group
	key      uint64 // the current group's key
	rng      *rand.Rand
	zipf     *rand.Zipf
	sequence uint64 // the next key when Sequential

	start    time.Time
	interval float64   // ns between jobs, paced runs only
	end      time.Time // start + Duration; zero without Duration
	cutoff   time.Time // paced runs: no request is sent from it on; zero = none
	limit    int64     // 0 = none
	o        *Options
}

func newScheduler(o *Options, start time.Time) *scheduler {
	s := &scheduler{
		rng:   rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
		start: start,
		limit: o.Requests,
		o:     o,
	}
	if o.Zipf > 1 && o.Cardinality > 1 {
		s.zipf = rand.NewZipf(s.rng, o.Zipf, 1, uint64(o.Cardinality-1))
	}
	if o.Rate > 0 {
		s.interval = 1e9 / o.Rate
	}
	if o.Duration > 0 {
		s.end = start.Add(o.Duration)
		if s.interval > 0 {
			s.cutoff = s.end
		}
	}
	return s
}

// cancel moves the cut-off of a paced run to at, if that is earlier: no
// job due from then on is handed out any more, and no request is to be
// sent from then on.
func (s *scheduler) cancel(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interval > 0 && (s.cutoff.IsZero() || at.Before(s.cutoff)) {
		s.cutoff = at
	}
}

// cutoffTime returns the cut-off of a paced run: a job that is due before
// it but not sent by then is not sent at all. ok is false while there is
// none (an unpaced run, or a paced run bounded by Requests only and not
// cancelled).
func (s *scheduler) cutoffTime() (cutoff time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cutoff, !s.cutoff.IsZero()
}

// scheduleEnd returns the end of a paced run's schedule: its cut-off, or
// when the request after the last one (Requests) would be due, whichever
// is earlier. ok is false in an unpaced run.
func (s *scheduler) scheduleEnd() (end time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interval == 0 {
		return time.Time{}, false
	}
	if s.limit > 0 {
		end = s.start.Add(s.offset(s.limit))
	}
	if !s.cutoff.IsZero() && (end.IsZero() || s.cutoff.Before(end)) {
		end = s.cutoff
	}
	return end, !end.IsZero()
}

// offset returns seq intervals of a paced run, how long after the start
// job seq is due if it begins a group. At the lowest rates the offset can exceed a
// time.Duration (292 years), whose conversion would wrap round to a moment
// before the start: such a job is due at the latest moment there is. The
// offset is rounded to the nanosecond: truncated, seq intervals of an
// inexact interval (1e9/29 ns) fell 1 ns short of a whole second, and a
// job due exactly at the end of --duration was scheduled before it.
func (s *scheduler) offset(seq int64) time.Duration {
	if f := math.Round(float64(seq) * s.interval); f < math.MaxInt64 {
		return time.Duration(f)
	}
	return time.Duration(math.MaxInt64)
}

// backlog is the jobs of a paced run numbered first to end-1, due before
// cutoff but never to be sent (drain).
type backlog struct {
	s          *scheduler
	first, end int64
	cutoff     time.Time
}

// groupDue returns when the jobs of group g (jobs g*Group to
// (g+1)*Group-1) are due in a paced run; it needs no lock (start,
// interval and Group do not change).
func (s *scheduler) groupDue(g int64) time.Time {
	return s.start.Add(s.offset(g * int64(s.o.Group)))
}

// drain hands out at once, as a backlog, every job of a paced run that is
// due before the cut-off and was not handed out yet (none without a
// cut-off): once the cut-off is reached, none of them is to be sent, and
// their number and when each was due follow from the schedule, so they
// are counted without being handed out one by one (at a high rate, a
// backlog of millions of jobs took seconds to count, past the end that
// Options promises).
func (s *scheduler) drain() backlog {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := backlog{s: s, first: s.seq, end: s.seq, cutoff: s.cutoff}
	if s.interval == 0 || s.cutoff.IsZero() {
		return b
	}
	g := int64(s.o.Group)
	// The first group due at or after the cut-off; past the last group
	// whose first job has a number, the backlog runs to the last number.
	last := int64(math.MaxInt64) / g
	end := int64(math.MaxInt64)
	if first := searchInt64(s.seq/g, last, func(x int64) bool { return !s.groupDue(x).Before(s.cutoff) }); first < last {
		end = first * g
	}
	if s.limit > 0 {
		end = min(end, s.limit)
	}
	b.end = max(end, s.seq)
	s.seq = b.end
	return b
}

// searchInt64 returns the smallest x in [lo, hi) for which f is true, or
// hi if there is none; f is false and then true over [lo, hi).
func searchInt64(lo, hi int64, f func(int64) bool) int64 {
	for lo < hi {
		m := lo + (hi-lo)/2
		if f(m) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// next returns the next job, or false when the run is over. now is the
// current time; it decides the end of an unpaced run. A paced run is over
// when the next job would be due at or after the cut-off. In a paced run,
// job seq is due at start + (seq - seq%Group)/Rate: the jobs of a group
// (one key) are all due at once, so that with enough workers they are in
// flight together, and the average rate stays Rate.
func (s *scheduler) next(now time.Time) (job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit > 0 && s.seq >= s.limit || s.seq == math.MaxInt64 {
		// No job after the last number (a drained backlog may reach it).
		return job{}, false
	}
	j := job{seq: s.seq}
	if s.interval > 0 {
		j.intended = s.groupDue(s.seq / int64(s.o.Group))
		if !s.cutoff.IsZero() && !j.intended.Before(s.cutoff) {
			return job{}, false
		}
	} else if !s.end.IsZero() && !now.Before(s.end) {
		return job{}, false
	}
	s.seq++
	if s.left == 0 {
		s.left = s.o.Group
		switch {
		case s.o.Sequential:
			s.key = s.sequence
			s.sequence = (s.sequence + uint64(s.o.Batch)) % uint64(s.o.Cardinality)
		case s.zipf != nil:
			s.key = s.zipf.Uint64()
		default:
			s.key = s.rng.Uint64N(uint64(s.o.Cardinality))
		}
	}
	s.left--
	j.key = s.key
	j.write = s.o.WriteRatio > 0 && (s.o.WriteRatio >= 1 || s.rng.Float64() < s.o.WriteRatio)
	return j, true
}
