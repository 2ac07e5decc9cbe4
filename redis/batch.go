package redis

import (
	"context"
	"slices"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Coalescing of L1-miss reads.
//
// A read of Redis costs the client two system calls (write the command,
// read the reply) and a turn on a pooled connection, about 7µs of CPU on
// the 2-core machine of docs/benchmarks/tiered.md, where the cache itself
// adds 1–2µs. With many callers missing L1 at once, the client's CPU is
// what limits throughput and therefore latency. So the reads of a Cache
// share round trips: at most maxInFlight of them are in flight at once
// (each a GET, or a GET and a PTTL with ExactTTL); a read that finds them
// all busy joins a queue, and when one comes back its goroutine sends the
// whole queue in one pipeline (one per node, at the same time, on a
// cluster or a ring, so that a node that fails or hangs fails only the
// reads of its keys). A read that finds a round trip free goes at
// once, alone, as before: coalescing adds no wait when there is no queue.

// readResult is what one read of a key found.
type readResult struct {
	val  string
	pttl time.Duration // with ExactTTL
	err  error
}

// queuedRead is a read waiting for a round trip.
type queuedRead struct {
	key   string
	start time.Time // its Timeout counts from here
	res   readResult
	done  chan struct{} // closed when res is set
}

// reads coalesces a Cache's Redis reads (see above). Safe for concurrent
// use.
type reads struct {
	client      goredis.UniversalClient
	exact       bool
	timeout     time.Duration
	deadlines   *deadlines
	maxInFlight int // <= 0: no coalescing, every read is its own round trip

	mu       sync.Mutex
	idle     *sync.Cond // signalled when inFlight and alone both drop to zero
	inFlight int
	alone    int // round trips of reads that go alone (see get), outside maxInFlight
	queue    []*queuedRead
	closed   bool // wait was called (Close): no round trip starts any more
}

func newReads(c *core, exact bool, maxInFlight int) *reads {
	r := &reads{client: c.client, exact: exact, timeout: c.timeout, deadlines: c.deadlines, maxInFlight: maxInFlight}
	r.idle = sync.NewCond(&r.mu)
	return r
}

// get reads key (with its PTTL if exact). cctx is the context of the call
// (callContext), ctx the caller's. A read goes at once if a round trip is
// free, if coalescing is off, or if ctx ends before the read's Timeout
// would (a queued read's round trip keeps the Timeout of the oldest read
// in it, not the deadlines of the callers); otherwise it waits for the
// next pipeline, or for ctx to end. After wait (Close), every read fails
// with ErrClosed: no round trip, and no goroutine to drain a queue, starts
// after Close has returned; wait waits for those started before.
func (r *reads) get(ctx, cctx context.Context, key string, start time.Time) readResult {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return readResult{err: ErrClosed}
	}
	if d, ok := ctx.Deadline(); r.maxInFlight <= 0 || ok && !d.After(start.Add(r.timeout)) {
		// Alone, outside maxInFlight, but counted, so that wait waits
		// for it.
		r.alone++
		r.mu.Unlock()
		return r.direct(ctx, cctx, key, true)
	}
	if r.inFlight < r.maxInFlight {
		r.inFlight++
		r.mu.Unlock()
		return r.direct(ctx, cctx, key, false)
	}
	q := &queuedRead{key: key, start: start, done: make(chan struct{})}
	r.queue = append(r.queue, q)
	r.mu.Unlock()
	select {
	case <-q.done:
		return q.res
	case <-ctx.Done():
		// The pipeline still reads the key; nobody looks at it.
		return readResult{err: ctx.Err()}
	}
}

// direct is a round trip for key that get sends at once, on its own
// goroutine if ctx can be cancelled (see detach); alone says how get
// counted it (see end). Two paths, so that the usual one (a context
// that is never cancelled) allocates nothing more for it.
func (r *reads) direct(ctx, cctx context.Context, key string, alone bool) readResult {
	if ctx.Done() == nil {
		defer r.end(alone)
		return r.one(cctx, key)
	}
	var res readResult
	err := detach(ctx, func() error {
		defer r.end(alone)
		res = r.one(cctx, key)
		return nil
	})
	if err != nil { // ctx ended first: res belongs to f's goroutine
		return readResult{err: err}
	}
	return res
}

// end gives back the round trip of a read that get sent at once, alone
// (doneAlone) or in maxInFlight (release). Deferred by direct: a read that
// panics, in a hook of the client, must give it back too, or Close would
// wait for it.
func (r *reads) end(alone bool) {
	if alone {
		r.doneAlone()
	} else {
		r.release()
	}
}

// one is a round trip for one key.
func (r *reads) one(ctx context.Context, key string) readResult {
	if !r.exact {
		get := r.client.Get(ctx, key)
		return readResult{val: get.Val(), err: get.Err()}
	}
	pipe := r.client.Pipeline()
	get := pipe.Get(ctx, key)
	pttl := pipe.PTTL(ctx, key)
	_, _ = pipe.Exec(ctx)
	return exactResult(get, pttl)
}

func exactResult(get *goredis.StringCmd, pttl *goredis.DurationCmd) readResult {
	err := get.Err()
	if err == nil {
		err = pttl.Err()
	}
	return readResult{val: get.Val(), pttl: pttl.Val(), err: err}
}

// release ends a round trip: if reads are queued, they take it over (on a
// new goroutine, so that the caller whose read is done returns now);
// otherwise it is free.
func (r *reads) release() {
	r.mu.Lock()
	if len(r.queue) == 0 {
		r.free()
		r.mu.Unlock()
		return
	}
	batch := r.queue
	r.queue = nil
	r.mu.Unlock()
	go r.drain(batch)
}

// free gives a round trip back. The caller holds r.mu.
func (r *reads) free() {
	if r.inFlight--; r.inFlight == 0 && r.alone == 0 {
		r.idle.Broadcast()
	}
}

// doneAlone ends the round trip of a read that went alone.
func (r *reads) doneAlone() {
	r.mu.Lock()
	if r.alone--; r.alone == 0 && r.inFlight == 0 {
		r.idle.Broadcast()
	}
	r.mu.Unlock()
}

// drain sends batch in one pipeline, then the reads queued meanwhile,
// until the queue is empty; it holds one round trip all along.
func (r *reads) drain(batch []*queuedRead) {
	for {
		r.pipelineRecovered(batch)
		r.mu.Lock()
		if len(r.queue) == 0 {
			r.free()
			r.mu.Unlock()
			return
		}
		batch = r.queue
		r.queue = nil
		r.mu.Unlock()
	}
}

// pipelineRecovered is pipeline on a goroutine of drain's: if the Redis
// call panics (in a client hook), the reads of batch not answered yet fail
// with the panic as their error, instead of the panic ending the process.
func (r *reads) pipelineRecovered(batch []*queuedRead) {
	err := recovered(func() error { r.pipeline(batch); return nil })
	if err == nil {
		return
	}
	for _, q := range batch {
		select {
		case <-q.done:
		default: // only this goroutine closes q.done
			q.res = readResult{err: err}
			close(q.done)
		}
	}
}

// pipeline reads the keys of batch in one round trip, which ends Timeout
// after the oldest of them started; reads already past their Timeout fail
// without being sent.
func (r *reads) pipeline(batch []*queuedRead) {
	now := time.Now()
	live := batch[:0:0]
	oldest := now
	for _, q := range batch {
		if now.Sub(q.start) >= r.timeout {
			q.res.err = context.DeadlineExceeded
			close(q.done)
			continue
		}
		live = append(live, q)
		if q.start.Before(oldest) {
			oldest = q.start
		}
	}
	if len(live) == 0 {
		return
	}
	ctx := r.deadlines.get(now, oldest.Add(r.timeout))
	groups := r.byNode(ctx, live)
	if len(groups) == 1 {
		r.send(ctx, live)
		return
	}
	// One pipeline per node, at the same time: a node that hangs or
	// fails must not fail, or delay, the reads of the others (go-redis
	// gives a cluster pipeline's error to every command of it that has
	// none, those of healthy nodes included).
	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.sendRecovered(ctx, g)
		}()
	}
	wg.Wait()
}

// byNode splits live by the node that serves each key, for clients that
// shard keys over nodes (a ClusterClient: the slot's master; a Ring: the
// key's shard), in the order of their first reads; a key whose node is
// not known (the cluster's state cannot be had) goes with the first. For
// other clients it is one group.
func (r *reads) byNode(ctx context.Context, live []*queuedRead) [][]*queuedRead {
	var nodeOf func(key string) (*goredis.Client, error)
	switch c := r.client.(type) {
	case *goredis.ClusterClient:
		nodeOf = func(key string) (*goredis.Client, error) { return c.MasterForKey(ctx, key) }
	case *goredis.Ring:
		nodeOf = c.GetShardClientForKey
	default:
		return [][]*queuedRead{live}
	}
	var nodes []*goredis.Client
	var groups [][]*queuedRead
	for _, q := range live {
		n, err := nodeOf(q.key)
		i := 0
		if err == nil {
			if i = slices.Index(nodes, n); i < 0 {
				i = len(nodes)
				nodes = append(nodes, n)
				groups = append(groups, nil)
			}
		} else if len(groups) == 0 {
			nodes = append(nodes, nil)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], q)
	}
	return groups
}

// sendRecovered is send on a goroutine of pipeline's: if the Redis call
// panics (in a client hook), the reads of batch not answered yet fail
// with the panic as their error.
func (r *reads) sendRecovered(ctx context.Context, batch []*queuedRead) {
	err := recovered(func() error { r.send(ctx, batch); return nil })
	if err == nil {
		return
	}
	for _, q := range batch {
		select {
		case <-q.done:
		default: // only this goroutine closes q.done
			q.res = readResult{err: err}
			close(q.done)
		}
	}
}

// send reads the keys of batch in one round trip, within ctx, and answers
// them.
func (r *reads) send(ctx context.Context, live []*queuedRead) {
	if len(live) == 1 {
		live[0].res = r.one(ctx, live[0].key)
		close(live[0].done)
		return
	}
	pipe := r.client.Pipeline()
	gets := make([]*goredis.StringCmd, len(live))
	var pttls []*goredis.DurationCmd
	if r.exact {
		pttls = make([]*goredis.DurationCmd, len(live))
	}
	for i, q := range live {
		gets[i] = pipe.Get(ctx, q.key)
		if r.exact {
			pttls[i] = pipe.PTTL(ctx, q.key)
		}
	}
	_, _ = pipe.Exec(ctx)
	for i, q := range live {
		if r.exact {
			q.res = exactResult(gets[i], pttls[i])
		} else {
			q.res = readResult{val: gets[i].Val(), err: gets[i].Err()}
		}
		close(q.done)
	}
}

// wait returns when no round trip is in flight (Close: the goroutines that
// drain the queue have ended; they end within Timeout, as the reads that
// went alone do), and refuses the reads that come later (see get).
func (r *reads) wait() {
	r.mu.Lock()
	r.closed = true
	for r.inFlight > 0 || r.alone > 0 {
		r.idle.Wait()
	}
	r.mu.Unlock()
}
