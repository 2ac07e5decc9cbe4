package redis

import (
	"context"
	"sync"
	"sync/atomic"
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
// whole queue in one pipeline. On a cluster or a ring, the round trips and
// the queue are counted per node (the slot's master, the key's shard), so
// that a node that hangs or fails holds up and fails only the reads of its
// keys: a pipeline never mixes nodes (go-redis gives a cluster pipeline's
// error to every command of it, those of healthy nodes included). A read
// that finds a round trip free goes at once, alone, as before: coalescing
// adds no wait when there is no queue.

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
	maxInFlight int // per node; <= 0: no coalescing, every read is its own round trip
	// nodeOf returns the node that serves a key, for clients that shard
	// keys over nodes; nil for the others (one node). A key whose node is
	// not known (no cluster state) is nil's.
	nodeOf func(ctx context.Context, key string) *goredis.Client
	// mapped is the core's: nodeOf answers without a round trip (see
	// core.nodeAddr); until then a read whose caller may cancel does not
	// ask it, and goes with the reads of unknown nodes.
	mapped *atomic.Bool

	mu       sync.Mutex
	idle     *sync.Cond // signalled when inFlight and alone both drop to zero
	inFlight int        // round trips in flight, all nodes together
	alone    int        // round trips of reads that go alone (see get), outside maxInFlight
	one      nodeReads  // the node of a client that does not shard keys
	nodes    map[*goredis.Client]*nodeReads
	closed   bool // wait was called (Close): no round trip starts any more
}

// nodeReads are the round trips and the queue of one node.
type nodeReads struct {
	inFlight int
	queue    []*queuedRead
}

func newReads(c *core, exact bool, maxInFlight int) *reads {
	r := &reads{client: c.client, exact: exact, timeout: c.timeout, deadlines: c.deadlines, maxInFlight: maxInFlight, mapped: &c.mapped}
	switch cl := c.client.(type) {
	case *goredis.ClusterClient:
		r.nodeOf = func(ctx context.Context, key string) *goredis.Client {
			n, err := cl.MasterForKey(ctx, key)
			if err != nil {
				return nil
			}
			return n
		}
	case *goredis.Ring:
		r.nodeOf = func(_ context.Context, key string) *goredis.Client {
			n, err := cl.GetShardClientForKey(key)
			if err != nil {
				return nil
			}
			return n
		}
	}
	r.idle = sync.NewCond(&r.mu)
	return r
}

// node returns the round trips and queue of node. The caller holds r.mu.
func (r *reads) node(node *goredis.Client) *nodeReads {
	if r.nodeOf == nil {
		return &r.one
	}
	n := r.nodes[node]
	if n == nil {
		if r.nodes == nil {
			r.nodes = make(map[*goredis.Client]*nodeReads)
		}
		n = &nodeReads{}
		r.nodes[node] = n
	}
	return n
}

// forget drops node's entry once it is idle, so that the nodes of a
// cluster's or ring's past topologies are not kept. The caller holds r.mu.
func (r *reads) forget(node *goredis.Client, n *nodeReads) {
	if r.nodeOf != nil && n.inFlight == 0 && len(n.queue) == 0 {
		delete(r.nodes, node)
	}
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
	var node *goredis.Client
	if r.nodeOf != nil && r.maxInFlight > 0 && (ctx.Done() == nil || r.mapped.Load()) {
		node = r.nodeOf(cctx, key) // before the lock: it may load the cluster's state
	}
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
		return r.direct(ctx, cctx, key, nil, true)
	}
	if n := r.node(node); n.inFlight < r.maxInFlight {
		n.inFlight++
		r.inFlight++
		r.mu.Unlock()
		return r.direct(ctx, cctx, key, node, false)
	}
	q := &queuedRead{key: key, start: start, done: make(chan struct{})}
	n := r.node(node)
	n.queue = append(n.queue, q)
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
func (r *reads) direct(ctx, cctx context.Context, key string, node *goredis.Client, alone bool) readResult {
	if ctx.Done() == nil {
		defer r.end(node, alone)
		return r.read(cctx, key)
	}
	var res readResult
	err := detach(ctx, func() error {
		defer r.end(node, alone)
		res = r.read(cctx, key)
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
func (r *reads) end(node *goredis.Client, alone bool) {
	if alone {
		r.doneAlone()
	} else {
		r.release(node)
	}
}

// read is a round trip for one key.
func (r *reads) read(ctx context.Context, key string) readResult {
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

// release ends a round trip of node: if reads of node are queued, they
// take it over (on a new goroutine, so that the caller whose read is done
// returns now); otherwise it is free.
func (r *reads) release(node *goredis.Client) {
	r.mu.Lock()
	n := r.node(node)
	if len(n.queue) == 0 {
		r.free(node, n)
		r.mu.Unlock()
		return
	}
	batch := n.queue
	n.queue = nil
	r.mu.Unlock()
	go r.drain(node, batch)
}

// free gives a round trip of node (whose entry is n) back. The caller
// holds r.mu.
func (r *reads) free(node *goredis.Client, n *nodeReads) {
	n.inFlight--
	r.forget(node, n)
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

// drain sends batch (reads of node) in one pipeline, then the reads of
// node queued meanwhile, until its queue is empty; it holds one round trip
// of node all along.
func (r *reads) drain(node *goredis.Client, batch []*queuedRead) {
	for {
		r.pipelineRecovered(batch)
		r.mu.Lock()
		n := r.node(node)
		if len(n.queue) == 0 {
			r.free(node, n)
			r.mu.Unlock()
			return
		}
		batch = n.queue
		n.queue = nil
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
	if len(live) == 1 {
		live[0].res = r.read(ctx, live[0].key)
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
