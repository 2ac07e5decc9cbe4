package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit"
	goredis "github.com/redis/go-redis/v9"
)

// core is what a Cache and a ByteTier share: Redis access behind the
// circuit breaker, the counters, the invalidation channel (publishing on
// it and the subscription that keeps listening to it, invalidate.go), and
// the lifetime of the goroutines.
//
// The hooks tell what the owner does with the local copies of entries
// (L1 for a Cache, the caller's memory for a ByteTier); they are set
// before the subscription starts and called on its goroutine, or by the
// timer that flushes while it is down, never two at once (see flushMu).
type core struct {
	client  goredis.UniversalClient
	prefix  string
	channel string
	sharded bool
	id      string // this instance's id, carried by its invalidations
	maxBulk int    // Options.MaxBulkLen

	timeout, degradedTTL          time.Duration
	healthCheck, resubscribeDelay time.Duration

	// The circuit breakers (see nodeAddr and breakerAt): brk for a client
	// of one server, and on a cluster or ring for the calls whose node is
	// not known; breakers, one per node address of a cluster or ring, made
	// as their nodes are first called (newBreakerAt).
	brk          *breaker
	breakersMu   sync.Mutex
	breakers     map[string]*breaker
	newBreakerAt func(addr string) *breaker

	deadlines *deadlines // of calls from contexts that are never cancelled (callContext)
	scripted  sync.Map   // scriptAt → struct{}: the write scripts that have run on a node, which later writes there send by their hash

	// The estimates of the servers' clocks, for the writes' latest times
	// (see serverClock): one per server address, nodeOf's for a key ("" for
	// a client of one server).
	nodeOf   func(ctx context.Context, rkey string) string
	mapped   atomic.Bool // nodeOf answers without a round trip (see nodeAddr)
	clocksMu sync.Mutex
	clocks   map[string]*serverClock

	// attemptLimit is the shortest of the client's positive read and
	// write timeouts (0 if none), which bounds a write's deadline (see
	// writeAndPublish).
	attemptLimit time.Duration
	log          *slog.Logger
	logs         logLimiter
	logWrites    bool // see coreSettings.logWrites
	st           counters

	// invalidate drops a key (without the prefix) that another instance
	// changed; flushLocal drops every local copy (see flush); lost, if
	// set, is told that the subscription was lost.
	invalidate func(key string)
	flushLocal func()
	lost       func()

	returned   atomic.Bool   // the constructor has returned: local copies may exist
	firstTry   chan struct{} // closed when the first subscription attempt has ended
	subscribed atomic.Bool
	confirms   atomic.Uint64 // subscriptions confirmed: see steadySince

	// While the subscription is down, flushTimer flushes the local
	// copies every DegradedTTL (see armFlush); flushMu serialises it
	// with its arming, disarming and the subscriber's own flushes, so
	// the hooks never run concurrently.
	flushMu    sync.Mutex
	flushTimer *time.Timer // nil: not armed
	flushGen   uint64      // counts armings, so a stale timer's call does nothing
	flushOff   bool        // Close: never arm again

	life    context.Context
	endLife context.CancelFunc
	psMu    sync.Mutex // guards ps and closed
	ps      *goredis.PubSub
	closed  bool
	wg      sync.WaitGroup

	// calls counts the Sets and Deletes in flight, and a ByteTier's Gets
	// (beginCall), so that Close waits for them: none reaches Redis after
	// Close has returned. callsMu orders their admission with the end of
	// life in stop. (A Cache's reads have their own count: reads.wait.)
	callsMu sync.RWMutex
	calls   sync.WaitGroup
}

// coreSettings are the resolved options that core.init needs.
type coreSettings struct {
	client                        goredis.UniversalClient
	prefix                        string
	timeout, degradedTTL          time.Duration
	healthCheck, resubscribeDelay time.Duration
	breakerFailures               int
	breakerOpenFor                time.Duration
	sharded                       Sharding
	clock                         cachekit.Clock
	log                           *slog.Logger
	maxBulkLen                    int
	// logWrites: a Set's or Delete's failed write or publish is logged
	// (a Cache's Options.Logger; a ByteTier's caller logs the errors it
	// gets back itself).
	logWrites bool
}

// init sets c up (c is a field of its owner, so it is not returned).
func (c *core) init(s coreSettings) {
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	c.client = s.client
	c.prefix = s.prefix
	c.channel = s.prefix + "invalidate"
	c.id = hex.EncodeToString(idb[:])
	c.timeout = s.timeout
	c.maxBulk = s.maxBulkLen
	c.deadlines = newDeadlines(s.timeout)
	c.clocks = map[string]*serverClock{}
	c.attemptLimit = attemptLimit(s.client)
	switch cl := s.client.(type) {
	case *goredis.ClusterClient:
		c.nodeOf = func(ctx context.Context, rkey string) string {
			if n, err := cl.MasterForKey(ctx, rkey); err == nil {
				return n.Options().Addr
			}
			return ""
		}
	case *goredis.Ring:
		c.nodeOf = func(_ context.Context, rkey string) string {
			if n, err := cl.GetShardClientForKey(rkey); err == nil {
				return n.Options().Addr
			}
			return ""
		}
		c.mapped.Store(true) // a ring's shards are known without asking them
	}
	c.degradedTTL = s.degradedTTL
	c.healthCheck = s.healthCheck
	c.resubscribeDelay = s.resubscribeDelay
	c.log = s.log
	c.logWrites = s.logWrites
	switch s.sharded {
	case ShardedAuto:
		_, c.sharded = s.client.(*goredis.ClusterClient)
	case ShardedOn:
		c.sharded = true
	}
	c.newBreakerAt = func(addr string) *breaker {
		return newBreaker(s.breakerFailures, s.breakerOpenFor, s.clock, func(from, to BreakerState) { c.breakerChanged(addr, from, to) })
	}
	c.brk = c.newBreakerAt("")
	c.breakers = map[string]*breaker{}
	c.life, c.endLife = context.WithCancel(context.Background())
	c.firstTry = make(chan struct{})
}

// breakerChanged logs a change of the state of the breaker of node addr
// ("": brk), at most one a second for each breaker and state it changes
// to: under one limit for all, the quick half-open → closed that follows a
// probe's success was dropped after the open → half-open logged just
// before, and the log's last word said half-open while the breaker was
// closed.
func (c *core) breakerChanged(addr string, from, to BreakerState) {
	if addr == "" {
		c.logs.log(c.log, "breaker "+to.String(), "redis: circuit breaker", "from", from.String(), "to", to.String())
		return
	}
	c.logs.log(c.log, "breaker "+to.String()+" "+addr, "redis: circuit breaker", "node", addr, "from", from.String(), "to", to.String())
}

// nodeAddr returns the address of the node that serves rkey on a cluster
// or ring, "" on a client of one server or if the node is not known. ctx
// is the caller's context, cctx the call's (callContext), which bounds a
// wait. brk covers the calls whose node is not known: while it is not
// closed (the nodes could not be found for the last calls), only its
// probe asks, and the probe is the lookup itself: a node found closes brk
// (the call then goes through that node's breaker), none found opens it
// again; the other calls get "" without asking, and brk fails them at once.
func (c *core) nodeAddr(ctx, cctx context.Context, rkey string) string {
	if c.nodeOf == nil {
		return ""
	}
	if c.brk.State() == BreakerClosed {
		return c.lookup(ctx, cctx, rkey)
	}
	tk, ok := c.brk.allow()
	if !ok {
		return ""
	}
	returned := false
	defer func() {
		if !returned {
			c.brk.neutral(tk) // a panic of the lookup: the next call probes
		}
	}()
	addr := c.lookup(ctx, cctx, rkey)
	returned = true
	switch {
	case addr != "":
		c.brk.success(tk)
	case ctx.Err() != nil || c.life.Err() != nil:
		c.brk.neutral(tk)
	default:
		c.brk.failure(tk)
	}
	return addr
}

// lookup returns nodeOf's answer for rkey (see nodeAddr). A cluster client
// that has not yet loaded its map of the slots loads it first, and
// go-redis ends that load at the context's deadline but not at its
// cancellation: so until the map is known (mapped: a call has succeeded,
// or a node was found), a caller whose ctx can be cancelled asks on a
// goroutine of its own (detach), counted as a call so that Close waits
// for it, and gets "" if ctx ends first.
func (c *core) lookup(ctx, cctx context.Context, rkey string) string {
	var addr string
	if ctx.Done() == nil || c.mapped.Load() {
		addr = c.nodeOf(cctx, rkey)
	} else {
		found := make(chan string, 1)
		if detach(ctx, func() error {
			if !c.beginCall() {
				return ErrClosed
			}
			defer c.endCall()
			found <- c.nodeOf(cctx, rkey)
			return nil
		}) != nil {
			return ""
		}
		addr = <-found
	}
	if addr != "" && !c.mapped.Load() {
		c.mapped.Store(true)
	}
	return addr
}

// breakerAt returns the breaker of the calls to the node at addr (see
// nodeAddr): on a cluster or ring each node has its own, so that a master
// or shard that is down or hangs stops the calls for its keys only.
func (c *core) breakerAt(addr string) *breaker {
	if addr == "" {
		return c.brk
	}
	c.breakersMu.Lock()
	defer c.breakersMu.Unlock()
	b := c.breakers[addr]
	if b == nil {
		b = c.newBreakerAt(addr)
		c.breakers[addr] = b
	}
	return b
}

// breakerState returns the most severe state of the breakers (open, then
// half-open, then closed) and how often they opened, all together. The
// state of a node's breaker that no call has asked for breakerIdle while
// not closed (its node gone from the cluster, after a failover, say) does
// not count; its opens do.
func (c *core) breakerState() (BreakerState, uint64) {
	rank := func(s BreakerState) int { return [...]int{BreakerClosed: 0, BreakerHalfOpen: 1, BreakerOpen: 2}[s] }
	state, opens := c.brk.State(), c.brk.opens.Load()
	c.breakersMu.Lock()
	defer c.breakersMu.Unlock()
	for _, b := range c.breakers {
		opens += b.opens.Load()
		if b.forgotten(max(breakerIdle, 2*b.openFor)) {
			continue
		}
		if s := b.State(); rank(s) > rank(state) {
			state = s
		}
	}
	return state, opens
}

// breakerIdle is how long a node's breaker that is not closed may go
// without a call before Stats leaves its state out (at least twice
// BreakerOpenFor).
const breakerIdle = time.Minute

// startSubscription starts the subscription's goroutine and waits up to
// Timeout for the subscription to be confirmed, so that a healthy start
// does not flush the local copies made right after it; it waits no longer
// once the first attempt has failed (Redis refused the connection or the
// subscription: the start is not healthy, and the next attempt comes only
// after ResubscribeDelay). The hooks must be set.
func (c *core) startSubscription() {
	c.wg.Add(1)
	go c.subscribeLoop()
	deadline := time.Now().Add(c.timeout)
	for !c.subscribed.Load() && time.Now().Before(deadline) {
		select {
		case <-c.firstTry:
			return
		default:
		}
		time.Sleep(time.Millisecond)
	}
}

// stop ends the subscription and the owner's goroutines, refuses new Sets
// and Deletes, and a ByteTier's Gets (beginCall), and waits for the
// goroutines and for those calls in flight.
//
// A subscription attempt that a hanging Redis holds (while connecting, or
// waiting for its handshake's answer) ends after Options.Timeout (at least
// 100ms; the client must have ContextTimeoutEnabled), and a reconnect
// inside the subscriber's receive (after a broken connection) within twice
// that: stop waits for it, as for a Set or Delete in flight (each ends
// within Timeout).
func (c *core) stop() {
	c.callsMu.Lock()
	c.endLife()
	c.callsMu.Unlock()
	c.flushMu.Lock()
	c.flushOff = true
	if c.flushTimer != nil {
		c.flushTimer.Stop()
		c.flushTimer = nil
	}
	c.flushMu.Unlock()
	c.psMu.Lock()
	c.closed = true
	if c.ps != nil {
		_ = c.ps.Close()
	}
	c.psMu.Unlock()
	c.wg.Wait()
	c.subscribed.Store(false) // the subscription ended with its goroutine
	c.calls.Wait()
}

// beginCall admits a Set or Delete, or a ByteTier's Get, unless Close has
// begun: then it returns false, and the call returns ErrClosed. A true
// answer must be followed by endCall when the call is over.
func (c *core) beginCall() bool {
	c.callsMu.RLock()
	defer c.callsMu.RUnlock()
	if c.life.Err() != nil {
		return false
	}
	c.calls.Add(1)
	return true
}

func (c *core) endCall() { c.calls.Done() }

// subscriptionMark returns a mark for steadySince: whether the subscription is
// up now, and which confirmation it is.
func (c *core) subscriptionMark() (up bool, confirms uint64) {
	confirms = c.confirms.Load()
	return c.subscribed.Load(), confirms
}

// steadySince reports whether the subscription has stayed up since the
// mark was taken (up then, up now, not lost and confirmed again between):
// then a value read from Redis meanwhile cannot have missed an
// invalidation. A value read while it was down, and returned after it came
// back (and after the flush that came with it), could have.
func (c *core) steadySince(up bool, confirms uint64) bool {
	return up && c.subscribed.Load() && c.confirms.Load() == confirms
}

// ID returns the instance id that the invalidations carry.
func (c *core) ID() string { return c.id }

// scriptAt names a script on a node (its address, "" for a client of one
// server or a node not known), for core.scripted: a cluster's masters each
// learn a script when it is first sent to them whole.
type scriptAt struct {
	script *goredis.Script
	addr   string
}

// writeAndPublish runs write (which adds script, a script that changes
// key's Redis entry, to the pipeline it is given; the script does nothing
// once the server's clock is past latest, and returns {code, the server's
// time}: see writeScript) and then publishes key's invalidation, within
// Timeout and behind the breaker. It returns the script's code. write is
// given the latest time (0: no bound) and whether to send the script whole
// (EVAL) rather than by its hash (EVALSHA). A script is sent whole until it
// has run once through this client; after that by its hash (a server that
// no longer knows it, restarted, refuses it without running it, and it is
// sent whole again). Each script counts apart, on each node: a Delete's
// script sent by hash because a Set's had run would be refused by a server
// that never ran it, after its invalidation had gone out ahead of it.
//
// The invalidation must not overtake the write: an instance that drops
// its copy on the message and reads Redis at once must find the new value.
// A plain client sends both in one pipeline on one connection, which Redis
// runs in order. A cluster client splits a pipeline by node and sends the
// parts at the same time (the key and the channel usually live on
// different nodes), so there the publish waits for the write's reply: a
// second round trip, and nothing is published for a failed write. With a
// plain client the invalidation goes out even if the write fails (Redis
// refuses a SET when out of memory, say, but not the PUBLISH): harmless,
// the other instances drop a copy and read the unchanged entry again.
//
// A write that fails is counted in Stats.L2WriteErrors, unless it failed
// because ctx ended first (the caller gave up: no failure of Redis). An
// invalidation is counted in Stats.InvalidationsSent when Redis accepted
// its publication, whether or not the write succeeded.
func (c *core) writeAndPublish(ctx context.Context, key string, script *goredis.Script, write func(ctx context.Context, p goredis.Pipeliner, latest int64, whole bool) *goredis.Cmd) (int64, error) {
	now := time.Now()
	cctx, cancel := c.callContext(ctx, now)
	defer cancel()
	addr := c.nodeAddr(ctx, cctx, c.prefix+key)
	brk := c.breakerAt(addr)
	tk, ok := brk.allow()
	if !ok {
		c.st.l2Skipped.Add(1)
		return 0, ErrUnavailable
	}
	if lim := c.limitOf(c.prefix + key); lim > 0 {
		// go-redis gives up on a call at the client's read or write
		// timeout, and sends it again (MaxRetries): the first attempt,
		// its bytes held on the way, could then land after the second,
		// and after the next write too. So the call ends first, at its
		// own deadline, which its script's latest time follows.
		if d, ok := cctx.Deadline(); !ok || d.After(now.Add(lim)) {
			var cancelLim context.CancelFunc
			cctx, cancelLim = context.WithDeadline(cctx, now.Add(lim))
			defer cancelLim()
		}
	}
	deadline, bounded := cctx.Deadline()
	msg := c.message(key)
	publish := func(ctx context.Context, p goredis.Cmdable) *goredis.IntCmd {
		if c.sharded {
			return p.SPublish(ctx, c.channel, msg)
		}
		return p.Publish(ctx, c.channel, msg)
	}
	var w *goredis.Cmd
	var pub *goredis.IntCmd
	var code int64
	clock := c.clockAt(addr)
	_, oneConn := c.client.(*goredis.Client)
	c.call(ctx, brk, tk, true, func() error {
		at := scriptAt{script, addr}
		_, known := c.scripted.Load(at)
		whole := !known
		var again *sample // the bound of a write sent again after a refusal in time
		// The context of each attempt: the call's, and once a first
		// attempt has been sent (and refused without running: NOSCRIPT, or
		// too late but answered in time), one that keeps its deadline but
		// not its caller's cancellation, as a write on the wire waits for
		// its answer when the caller gives up (go-redis would not send a
		// call on a cancelled context, and the write would be lost, its
		// invalidation already out).
		sendCtx, resent := cctx, false
		for {
			if resent && sendCtx == cctx && ctx.Done() != nil && bounded {
				var rcancel context.CancelFunc
				sendCtx, rcancel = context.WithDeadline(context.WithoutCancel(cctx), deadline)
				defer rcancel()
			}
			sent := time.Now()
			latest, settle := c.bound(clock, deadline, bounded)
			if again != nil {
				latest, settle = again.bound(deadline)
			}
			pipe := c.client.Pipeline()
			w = write(sendCtx, pipe, latest, whole)
			pub = nil
			if oneConn {
				pub = publish(sendCtx, pipe)
			}
			_, _ = pipe.Exec(sendCtx)
			if pub != nil && pub.Err() == nil {
				c.st.sent.Add(1) // each time: the call may be sent again
			}
			if err := w.Err(); err != nil && !whole && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				// Nothing ran (a server restarted or failed over, or a
				// cluster node that had never run it): again, whole.
				// Its invalidation, if sent (one connection), went out
				// ahead of the write, so an instance that read the entry
				// at once found the old value; it is sent again after
				// the write, which drops that copy.
				whole, resent = true, true
				continue
			}
			if err := w.Err(); err != nil {
				if !isServerReply(err) && latest != 0 && !time.Now().Before(deadline) {
					// Its deadline passed with its fate unknown (Redis
					// hung, or the bytes were held on the way): it may
					// still apply until latest. Wait until it no longer
					// can, so that the key's next write, sent after this
					// one returns, cannot be overtaken by it. (A call
					// that ended before its deadline, cancelled or with
					// its connection lost, is not on its way any more.)
					time.Sleep(time.Until(settle))
				}
				break
			}
			if !known {
				c.scripted.Store(at, struct{}{})
				known = true
			}
			var server int64
			var err error
			if code, server, err = scriptAnswer(w); err != nil {
				w.SetErr(err)
				break
			}
			x := sampleOf(sent, server)
			if code == writeTooLate && again == nil && time.Now().Before(deadline) {
				// Refused as late, but answered in time: the server's
				// clock has moved forward since the estimate (or the
				// write went to another server, redirected). Again,
				// bounded by this answer.
				again, resent = &x, true
				continue
			}
			clock.observe(x)
			if code == writeTooLate {
				w.SetErr(errTooLate)
			}
			break
		}
		if err := w.Err(); err != nil || pub == nil {
			return err
		}
		if err := pub.Err(); err != nil && !channelRefused(err) {
			return err
		}
		// A publication the server refused for its channel (an ACL
		// without it: NOPERM) says nothing of Redis's health, which
		// stored the write: the error is the caller's, not the breaker's.
		return nil
	})
	if !oneConn && w.Err() == nil {
		// The write has landed: publish even if the caller has gone
		// since (go-redis would not start the call, and the other
		// instances' L1 would keep the old value, with nothing to flush
		// it), within the call's deadline. The channel lives on a node
		// of its own: its breaker, not the key's, hears how it went.
		pctx := cctx
		if bounded && ctx.Done() != nil {
			var pcancel context.CancelFunc
			pctx, pcancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
			defer pcancel()
		}
		to := goredis.Cmdable(c.client)
		paddr := c.nodeAddr(context.Background(), pctx, c.channel)
		if cc, ok := c.client.(*goredis.ClusterClient); ok && !c.sharded && paddr != "" {
			// A PUBLISH names no key: the cluster client would send
			// it to any master (Redis Cluster passes it on to all),
			// not to the one whose breaker hears of it.
			if n, err := cc.MasterForKey(pctx, c.channel); err == nil && n.Options().Addr == paddr {
				to = n
			} else {
				paddr = ""
			}
		}
		pbrk := c.breakerAt(paddr)
		if ptk, ok := pbrk.allow(); !ok {
			c.st.l2Skipped.Add(1)
			pub = goredis.NewIntCmd(pctx)
			pub.SetErr(ErrUnavailable)
		} else {
			c.call(ctx, pbrk, ptk, true, func() error {
				pub = publish(pctx, to)
				err := pub.Err()
				if err == nil {
					c.st.sent.Add(1)
				}
				if err != nil && !channelRefused(err) {
					return err
				}
				return nil
			})
		}
	}
	if err := w.Err(); err != nil {
		if pastDeadline(ctx) {
			// Not a mere cancellation: a write on the wire waits for
			// its answer (or Timeout), which ended it then.
			err = callerErr(ctx, err)
		}
		if !callerEnded(ctx, w.Err()) {
			c.st.l2WriteErrors.Add(1)
			if c.logWrites {
				c.logs.log(c.log, "write", "redis: write failed", "key", c.prefix+key, "err", err)
			}
		}
		if scriptRefused(err) {
			return 0, fmt.Errorf("redis: writing %q (the user must be allowed EVAL and EVALSHA, and in them TIME, SET, GET and TYPE): %w", key, err)
		}
		return 0, fmt.Errorf("redis: writing %q: %w", key, err)
	}
	c.st.l2Writes.Add(1)
	if err := pub.Err(); err != nil {
		if pastDeadline(ctx) {
			err = callerErr(ctx, err) // as for the write
		}
		if c.logWrites && !callerEnded(ctx, pub.Err()) {
			c.logs.log(c.log, "publish", "redis: invalidation not published: other instances keep their copies until they expire", "key", c.prefix+key, "err", err)
		}
		return code, fmt.Errorf("redis: publishing the invalidation of %q: %w", key, err)
	}
	return code, nil
}

// attemptLimit returns the shortest of client's positive read and write
// timeouts, or 0 (go-redis: 0 becomes its default once a Client or a
// ClusterClient is made, -1 none).
func attemptLimit(client goredis.UniversalClient) time.Duration {
	var r, w time.Duration
	switch cl := client.(type) {
	case *goredis.Client:
		r, w = cl.Options().ReadTimeout, cl.Options().WriteTimeout
	case *goredis.ClusterClient:
		r, w = cl.Options().ReadTimeout, cl.Options().WriteTimeout
	case *goredis.Ring:
		r, w = cl.Options().ReadTimeout, cl.Options().WriteTimeout
	}
	lim := time.Duration(0)
	for _, d := range []time.Duration{r, w} {
		if d > 0 && (lim == 0 || d < lim) {
			lim = d
		}
	}
	return lim
}

// limitOf returns the attempt limit of a write of rkey: attemptLimit, or
// for a ring the shortest positive read or write timeout of the shard
// client that sends it (a ring's own options are not what its shards use:
// their zero values become go-redis's defaults there).
func (c *core) limitOf(rkey string) time.Duration {
	if r, ok := c.client.(*goredis.Ring); ok {
		if n, err := r.GetShardClientForKey(rkey); err == nil {
			return attemptLimit(n)
		}
	}
	return c.attemptLimit
}

// bound returns the latest time and settle time (see sample.bound) of a
// write estimated by clock. On a cluster the write may be redirected to
// another master (its slot moved) whose clock is behind: the bound is the
// earliest, and settle the last, of every master's that has an estimate,
// so that the write cannot land late on any (a write to a master whose
// clock is ahead may then be refused in time, and is sent again bounded by
// its answer). A write to a master with no estimate yet (this process has
// had no answer of it), or to a ring's shard with none (one added, or
// holding keys rehashed from a shard that went down), is bounded by the
// other servers' estimates, as well as their clocks agree with its.
func (c *core) bound(clock *serverClock, deadline time.Time, bounded bool) (latest int64, settle time.Time) {
	latest, settle = clock.latest(deadline, bounded)
	_, cluster := c.client.(*goredis.ClusterClient)
	_, ring := c.client.(*goredis.Ring)
	if !bounded || !cluster && !(ring && latest == 0) {
		return latest, settle
	}
	c.clocksMu.Lock()
	defer c.clocksMu.Unlock()
	for _, o := range c.clocks {
		if l, st := o.latest(deadline, true); l != 0 {
			if latest == 0 || l < latest {
				latest = l
			}
			if st.After(settle) {
				settle = st
			}
		}
	}
	return latest, settle
}

// clockAt returns the estimate of the clock of the server at addr (see
// nodeAddr).
func (c *core) clockAt(addr string) *serverClock {
	c.clocksMu.Lock()
	defer c.clocksMu.Unlock()
	s := c.clocks[addr]
	if s == nil {
		s = newServerClock()
		c.clocks[addr] = s
	}
	return s
}

// errTooLate is the error of a write that Redis ran after the server's
// clock had passed the write's latest time: it did nothing.
var errTooLate = errors.New("run after its deadline by the server's clock: not applied")

// scriptRefused reports whether err is Redis refusing a write's script,
// or a command in it, to the client's user (an ACL).
func scriptRefused(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "NOPERM") || strings.Contains(msg, "can't run this command")
}

// scriptAnswer reads the {code, server time} answer of a write's script.
func scriptAnswer(w *goredis.Cmd) (code, server int64, err error) {
	vals, err := w.Slice()
	if err == nil && len(vals) == 2 {
		c, ok1 := vals[0].(int64)
		s, ok2 := vals[1].(int64)
		if ok1 && ok2 {
			return c, s, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("unexpected answer %v from a write's script", vals)
	}
	return 0, 0, err
}

// call runs f, a Redis call that breaker b admitted with tk, a write if
// write is set, and reports how it went (report), returning f's error. If
// f panics (in a hook of the client, say), the panic goes on after call
// has reported the call as neutral: the breaker must hear of every call it
// admitted, or a probe that panicked would leave it half-open for good.
func (c *core) call(ctx context.Context, b *breaker, tk ticket, write bool, f func() error) error {
	returned := false
	defer func() {
		if !returned {
			b.neutral(tk)
		}
	}()
	err := f()
	returned = true
	c.report(ctx, b, tk, write, err)
	return err
}

// detach runs f, a Redis call, and returns its error, or ctx.Err() as soon
// as ctx ends, whichever comes first. The client honours a context's
// deadline (it sets it on the connection) but not a cancellation: a call
// already sent waits for its answer, or for its deadline (at most
// Timeout). So when ctx can be cancelled, f runs on a goroutine of its own,
// and a caller who gives up is not held by a hanging Redis; f then goes on
// to its end, and must keep whatever Close waits for until then. When
// detach returns ctx.Err() early, what f writes belongs to f's goroutine:
// the caller must not read it. A panic of f is raised again on the
// caller's goroutine if the caller still waits, as if f had run there;
// otherwise it is dropped (the caller is gone, and call took the call as
// neutral for the breaker).
func detach(ctx context.Context, f func() error) error {
	if ctx.Done() == nil {
		return f()
	}
	done := make(chan error, 1)
	go func() { done <- recovered(f) }()
	select {
	case err := <-done:
		if p, ok := err.(*clientPanic); ok {
			panic(p.value)
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// slotNotServed reports whether err is a cluster node's answer that no
// node serves the key's slot.
func slotNotServed(err error) bool {
	return isServerReply(err) && strings.HasPrefix(err.Error(), "CLUSTERDOWN Hash slot not served")
}

// errNilContext is returned by every method given a nil context.Context
// (a programming error: pass context.Background() or context.TODO()),
// before it touches L1, Redis, the circuit breaker or the counters. It must
// not get as far as the breaker: admitted, the call would panic
// (callContext reads its deadline) without reporting back, and as the
// half-open probe it would keep the breaker half-open for good.
var errNilContext = errors.New("redis: nil Context")

// channelRefused reports whether err, the error of a PUBLISH or SPUBLISH,
// is the server refusing the channel to this user (an ACL that does not
// list it): every other command may still work.
func channelRefused(err error) bool {
	return isServerReply(err) && strings.HasPrefix(err.Error(), "NOPERM")
}

// writeRefused reports whether err, a write's error, is a reply that
// refuses writes while the server may still serve reads: out of memory
// (maxmemory with noeviction: OOM), a replica (READONLY), fewer replicas
// than min-replicas-to-write (NOREPLICAS), a failed snapshot
// (stop-writes-on-bgsave-error: MISCONF), or an ACL without the write's
// command (NOPERM). The write fails and is counted; reads go on.
func writeRefused(err error) bool {
	if !isServerReply(err) {
		return false
	}
	for _, p := range []string{"OOM", "READONLY", "NOREPLICAS", "MISCONF", "NOPERM"} {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return scriptRefused(err) // a command of the script the ACL forbids
}

// callerDone reports whether the caller's context ctx has ended, or its
// deadline has passed: a Redis call that the caller's deadline bounds fails
// at it (the client sets it on the connection), often before ctx's own
// timer has fired and set ctx.Err(). Either way the caller gave up first:
// no failure of Redis.
func callerDone(ctx context.Context) bool {
	return ctx.Err() != nil || pastDeadline(ctx)
}

// callerEnded reports whether err, the error of a Redis call made for ctx,
// is the caller's doing rather than Redis's: ctx's deadline has passed
// (the call failed at it, or would have), or ctx has ended and err is its
// error (the call was refused, or given up on, for it). A call already sent
// when ctx was cancelled waits for Redis's answer, or for Timeout: how it
// ends is Redis's doing, though ctx has ended since (callerDone).
func callerEnded(ctx context.Context, err error) bool {
	if pastDeadline(ctx) {
		return true
	}
	cerr := ctx.Err()
	return cerr != nil && errors.Is(err, cerr)
}

// pastDeadline reports whether ctx's deadline has passed.
func pastDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// callerErr returns err, the error of a call ended by the caller
// (callerDone), made to wrap the caller's context error: the socket's
// timeout at the caller's deadline often comes before ctx's own timer has
// set ctx.Err(), and the caller must still be able to tell, with
// errors.Is, that its deadline ended the call.
func callerErr(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if cerr == nil {
		cerr = context.DeadlineExceeded // the deadline has passed
	}
	if errors.Is(err, cerr) {
		return err
	}
	return fmt.Errorf("%w (%v)", cerr, err)
}

// clientPanic is the error of a call that panicked (a Redis call, in a
// hook of the client, or a handler) on one of the package's own
// goroutines, where the panic would otherwise end the process.
type clientPanic struct {
	value any
	stack []byte
}

func (p *clientPanic) Error() string { return fmt.Sprintf("redis: recovered panic: %v", p.value) }

// isPanic reports whether err is a panic that recovered turned into an
// error.
func isPanic(err error) bool {
	var p *clientPanic
	return errors.As(err, &p)
}

// recovered runs f, on one of the package's own goroutines, and returns
// the panic f raised, if any, as a *clientPanic.
func recovered(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &clientPanic{value: v, stack: debug.Stack()}
		}
	}()
	return f()
}

// report tells breaker b how a Redis call, admitted with tk, went. A
// call that ended because ctx (the caller's) ended tells nothing, nor does
// one refused by Close (ErrClosed), nor one that panicked on one of the
// package's own goroutines (its error is the *clientPanic that recovered
// returned), as for a panic that call lets go on; a reply from the server
// counts as success unless it says the server cannot serve
// (unavailableReply: LOADING, BUSY, CLUSTERDOWN and the like), or, for a
// write, unless it says more than that the server takes no writes
// (writeRefused): one breaker gates reads and writes alike, and a Redis
// that is full or a replica answers reads.
func (c *core) report(ctx context.Context, b *breaker, tk ticket, write bool, err error) {
	reload := false
	switch {
	case err == nil || errors.Is(err, goredis.Nil):
		b.success(tk)
		if !c.mapped.Load() {
			c.mapped.Store(true) // a cluster client's calls need its map
		}
	case callerEnded(ctx, err) || isPanic(err) || errors.Is(err, ErrClosed):
		b.neutral(tk)
	case slotNotServed(err):
		// No master serves the key's slot (its master was lost without
		// a replica and forgotten, or the slot was deleted): the client
		// sent the call to any node, whose answer says nothing of that
		// node's health. Its map may be stale.
		b.neutral(tk)
		reload = true
	case isServerReply(err) && (!unavailableReply(err) || write && writeRefused(err)):
		b.success(tk)
	default:
		b.failure(tk)
		reload = true
	}
	if cc, ok := c.client.(*goredis.ClusterClient); ok && reload {
		// go-redis reloads its map of the slots on MOVED or every
		// ClusterStateReloadInterval (a minute by default), not when a
		// node stops answering: after a master died and its replica
		// took over, the calls for its slots failed for up to a minute.
		// The reload runs in the background, one at a time.
		cc.ReloadState(c.life)
	}
}

// ErrTooLarge is wrapped by the error of a Set whose entry or key is longer
// than Redis accepts (Options.MaxBulkLen, ByteTierOptions.MaxBulkLen), and
// of a ByteTier's Get or Delete of such a key: nothing was sent to Redis.
var ErrTooLarge = errors.New("redis: too large for Redis")

// fits returns an error wrapping ErrTooLarge, and counts it in
// Stats.L2TooLarge, if a key of keyLen bytes (with the prefix, or in its
// invalidation message) or an entry of n bytes is longer than MaxBulkLen;
// nil if both fit.
func (c *core) fits(keyLen, n int) error {
	// The invalidation message is 10 bytes, the instance's id and the key
	// (see message).
	k := max(len(c.prefix), 10+len(c.id)) + keyLen
	if k <= c.maxBulk && n <= c.maxBulk {
		return nil
	}
	c.st.l2TooLarge.Add(1)
	if n > c.maxBulk {
		return fmt.Errorf("%w: an entry of %d bytes, over MaxBulkLen (%d)", ErrTooLarge, n, c.maxBulk)
	}
	return fmt.Errorf("%w: a key of %d bytes (with the prefix, or in its invalidation), over MaxBulkLen (%d)", ErrTooLarge, k, c.maxBulk)
}

// checkChannel refuses a prefix whose invalidation channel (the prefix and
// "invalidate", sent with every SUBSCRIBE and PUBLISH) is longer than
// maxBulk, the resolved MaxBulkLen.
func checkChannel(bad func(format string, args ...any) error, prefix string, maxBulk int) error {
	if n := len(prefix) + len("invalidate"); n > maxBulk {
		return bad("Prefix of %d bytes: its invalidation channel (%d bytes) exceeds MaxBulkLen (%d)", len(prefix), n, maxBulk)
	}
	return nil
}

// resolveMaxBulkLen refuses a negative MaxBulkLen and fills in the default.
func resolveMaxBulkLen(bad func(format string, args ...any) error, p *int) error {
	if *p < 0 {
		return bad("MaxBulkLen must not be negative")
	}
	if *p == 0 {
		*p = DefaultMaxBulkLen
	}
	return nil
}

// durationOption is an option of type time.Duration: its name, where it
// is, and its default (which replaces zero).
type durationOption struct {
	name string
	p    *time.Duration
	def  time.Duration
	min  time.Duration // if set, the smallest value accepted
}

// MinPeriod is the smallest DegradedTTL, HealthCheck and ResubscribeDelay
// accepted: they set the pace of background timers, and a shorter one
// would keep a core busy.
const MinPeriod = time.Millisecond

// resolveDurations refuses negative durations and those under their
// minimum, then fills in the defaults.
func resolveDurations(bad func(format string, args ...any) error, ds ...durationOption) error {
	for _, d := range ds {
		if *d.p < 0 {
			return bad("%s is negative (%v)", d.name, *d.p)
		}
		if *d.p > 0 && *d.p < d.min {
			return bad("%s (%v) is under %v", d.name, *d.p, d.min)
		}
	}
	for _, d := range ds {
		if *d.p == 0 {
			*d.p = d.def
		}
	}
	return nil
}

// badOption returns the error of an option that New or NewByteTier cannot
// honour.
func badOption(format string, args ...any) error {
	return fmt.Errorf("redis: %w: "+format, append([]any{ErrInvalidOptions}, args...)...)
}
