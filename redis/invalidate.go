package redis

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"net"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// An invalidation message names one key:
//
//	[0]       format version, 1
//	[1:9)     the sender's wall-clock time, Unix nanoseconds (for the lag)
//	[9]       n, the length of the sender's instance id
//	[10:10+n) the sender's instance id
//	[10+n:)   the key (without the prefix)
const msgVersion = 1

func (c *core) message(key string) string {
	b := make([]byte, 10, 10+len(c.id)+len(key))
	b[0] = msgVersion
	binary.BigEndian.PutUint64(b[1:9], uint64(time.Now().UnixNano()))
	b[9] = byte(len(c.id))
	b = append(b, c.id...)
	b = append(b, key...)
	return string(b)
}

// parseMessage returns the sender, the key and the send time of an
// invalidation message.
func parseMessage(m string) (sender, key string, sent time.Time, ok bool) {
	if len(m) < 10 || m[0] != msgVersion || len(m) < 10+int(m[9]) {
		return "", "", time.Time{}, false
	}
	n := int(m[9])
	sent = time.Unix(0, int64(binary.BigEndian.Uint64([]byte(m[1:9]))))
	return m[10 : 10+n], m[10+n:], sent, true
}

// onMessage applies an invalidation received from Redis.
func (c *core) onMessage(payload string) {
	sender, key, sent, ok := parseMessage(payload)
	switch {
	case !ok:
		c.st.badMessages.Add(1)
		c.logs.log(c.log, "message", "redis: malformed invalidation message ignored", "len", len(payload))
	case sender == c.id:
		c.st.ignored.Add(1)
	default:
		c.invalidate(key)
		c.st.received.Add(1)
		c.st.observeLag(time.Since(sent))
	}
}

// subscribeLoop keeps this instance subscribed to its invalidation channel
// until Close: it subscribes, applies messages, pings a silent
// subscription, and on a loss subscribes again after a growing pause. A
// loss cuts the local copies' lifetimes to DegradedTTL: they are flushed
// DegradedTTL after it, and every DegradedTTL after that while the
// subscription stays down (whatever was cached meanwhile: a value this
// instance set, a not-found answer), or at once when it comes back; values
// loaded meanwhile live no longer (the owner caps them). So a Redis that
// goes down does not empty L1 at once: hits go on for DegradedTTL.
func (c *core) subscribeLoop() {
	defer c.wg.Done()
	delay := c.resubscribeDelay
	first := true
	for c.life.Err() == nil {
		var confirmed bool
		var failed error // why an attempt never confirmed ended
		if err := recovered(func() error { confirmed, failed = c.subscription(); return nil }); err != nil {
			// A client hook (or a handler) panicked: the subscription is
			// closed (subscription's defer ran); it is tried again below.
			c.logs.log(c.log, "subscription panic", "redis: the invalidation subscription panicked",
				"err", err, "stack", string(err.(*clientPanic).stack))
		}
		if c.life.Err() != nil {
			return // Close
		}
		if !confirmed && failed != nil {
			// Never up: Redis down, or refusing the subscription (SSUBSCRIBE
			// unknown before Redis 7, a channel the ACL forbids). Nothing
			// else would tell: every Get works, L1 is flushed every
			// DegradedTTL.
			c.logs.log(c.log, "subscribe", "redis: invalidation subscription failed; retrying",
				"err", failed, "l1_flush_in", c.degradedTTL)
		}
		if cc, ok := c.client.(*goredis.ClusterClient); ok {
			// The channel's slot may have moved (the subscription was
			// dropped, or refused with MOVED), or its master died and a
			// replica took over: the next attempt must go to its owner
			// (go-redis sends SUBSCRIBE, like SSUBSCRIBE, to the master
			// of the channel's slot), which the client learns by
			// reloading its map of the slots (in the background, soon
			// enough for the next attempts; go-redis itself does not
			// when a node stops answering).
			cc.ReloadState(c.life)
		}
		// A subscription that was up is lost, whatever ended it: Redis,
		// or a handler's panic (which leaves confirmed unset, as
		// subscription did not return).
		lost := c.subscribed.Swap(false)
		if lost {
			c.st.losses.Add(1)
			c.logs.log(c.log, "subscription", "redis: invalidation subscription lost; resubscribing",
				"err", failed, "l1_flush_in", c.degradedTTL)
			if c.lost != nil {
				c.lost()
			}
		}
		// Down, whether lost or never up (Redis down at the start, Pub/Sub
		// refused): what is cached meanwhile may miss invalidations.
		c.armFlush()
		if confirmed || lost {
			delay = c.resubscribeDelay
		}
		if first {
			first = false
			close(c.firstTry) // startSubscription waits no longer
		}
		c.pause(delay)
		delay = nextDelay(delay, c.resubscribeDelay)
	}
}

// nextDelay is the pause after one of delay: twice as long, up to 32 times
// first, without overflowing for the longest durations.
func nextDelay(delay, first time.Duration) time.Duration {
	limit := time.Duration(math.MaxInt64)
	if first <= limit/32 {
		limit = 32 * first
	}
	if delay >= limit/2 {
		return limit
	}
	return 2 * delay
}

// pauseHook, if set (by tests, before any Cache or ByteTier starts), is
// told of every pause of a subscriber before it starts.
var pauseHook func(time.Duration)

// pause waits for d, or until Close.
func (c *core) pause(d time.Duration) {
	if pauseHook != nil {
		pauseHook(d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.life.Done():
	case <-t.C:
	}
}

// armFlush starts flushing the local copies every DegradedTTL, on a timer
// rather than on the subscriber's goroutine, which a hanging Redis may hold
// meanwhile (for up to Timeout per attempt, see stop).
func (c *core) armFlush() {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	if c.flushTimer == nil && !c.flushOff {
		c.flushGen++
		gen := c.flushGen
		c.flushTimer = time.AfterFunc(c.degradedTTL, func() { c.degradedFlush(gen) })
	}
}

// degradedFlush is the function of the timer that armFlush armed as
// generation gen: it flushes, and flushes again DegradedTTL later unless
// disarmed meanwhile.
func (c *core) degradedFlush(gen uint64) {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	if c.flushTimer == nil || c.flushGen != gen {
		return // disarmed (and maybe armed anew) while this call waited for the lock
	}
	if c.returned.Load() { // else nothing was cached yet
		c.flush()
	}
	c.flushTimer.Reset(c.degradedTTL)
}

// confirmFlush stops the timed flushes and flushes now (unless New has not
// returned: then nothing was cached yet), for a subscription that has just
// been confirmed: what was cached while it was down may have missed
// invalidations.
func (c *core) confirmFlush() {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	if c.flushTimer != nil {
		c.flushTimer.Stop()
		c.flushTimer = nil
	}
	if c.returned.Load() {
		c.flush()
	}
}

// subscription runs one subscription until it fails or Close, and reports
// whether it was ever confirmed, and if not, why it failed (nil after
// Close).
func (c *core) subscription() (confirmed bool, failed error) {
	ctx, cancel := context.WithTimeout(c.life, max(c.timeout, 100*time.Millisecond))
	// A Sentinel client's master, asked before the subscription is made:
	// a failover in between only makes the first check end it needlessly.
	var master string
	failover := isFailover(c.client)
	if failover {
		master = c.masterRunID()
	}
	ps, shard, ok, err := c.openPubSub(ctx)
	if !ok {
		cancel()
		return false, err
	}
	defer func() {
		c.psMu.Lock()
		_ = ps.Close()
		c.ps = nil
		c.psMu.Unlock()
	}()
	if c.sharded {
		err = ps.SSubscribe(ctx, c.channel)
	} else {
		err = ps.Subscribe(ctx, c.channel)
	}
	cancel()
	if err != nil {
		return false, err
	}

	// Each receive waits at most a Redis call's time (Timeout, 100ms at
	// least), and its context's deadline is that plus Timeout: go-redis
	// reconnects a broken connection inside the receive (dial and
	// handshake, holding the PubSub's lock, which Close waits for), and a
	// Redis that accepts but never answers would otherwise hold it, and
	// the loss go unnoticed, for as long as the receive may last. A
	// confirmed subscription adds up silent receives until HealthCheck,
	// then pings, and is lost if the ping stays unanswered as long again.
	// (Receiving for HealthCheck at once let a reconnect to a hanging
	// Redis hold Close, and L1 unflushed, for HealthCheck plus Timeout.)
	step := max(c.timeout, 100*time.Millisecond)
	pinged := false
	checkEvery := max(c.degradedTTL/2, step)
	nextCheck := time.Now().Add(checkEvery)
	var silent time.Duration // since the last message, while confirmed
	for {
		if c.ringMoved(shard) {
			// Checked once a step (Timeout at most): invalidations
			// published meanwhile went to the new shard, unheard, and
			// the flush when the new subscription is confirmed drops
			// what they would have.
			return confirmed, errShardMoved
		}
		if failover && !time.Now().Before(nextCheck) {
			// A Sentinel failover moves the client's commands to the new
			// master, not its Pub/Sub connection, and the old master
			// stays one, deaf to the new one's PUBLISHes, until Sentinel
			// reconfigures it (seconds later, or never): asked every
			// DegradedTTL/2, so that the invalidations missed meanwhile
			// are flushed within DegradedTTL.
			nextCheck = time.Now().Add(checkEvery)
			switch id := c.masterRunID(); {
			case id == "": // unknown now: Redis down, which the subscription sees too
			case master == "":
				master = id // unknown when subscribing
			case id != master:
				return confirmed, errMasterMoved
			}
		}
		wait := step
		if confirmed {
			wait = max(min(step, c.healthCheck-silent), time.Millisecond)
		}
		rctx, rcancel := context.WithTimeout(c.life, wait+min(c.timeout, math.MaxInt64-wait))
		msg, err := ps.ReceiveTimeout(rctx, wait)
		rcancel()
		if err != nil {
			var ne net.Error
			if c.life.Err() != nil || !(errors.As(err, &ne) && ne.Timeout()) || !confirmed {
				return confirmed, err
			}
			if silent += wait; silent < c.healthCheck {
				continue
			}
			if pinged {
				return confirmed, err // the ping went unanswered
			}
			// Silent for HealthCheck: ask, and give it as long again.
			ctx, cancel := context.WithTimeout(c.life, c.timeout)
			err = ps.Ping(ctx)
			cancel()
			if err != nil {
				return confirmed, err
			}
			pinged, silent = true, 0
			continue
		}
		pinged, silent = false, 0
		switch m := msg.(type) {
		case *goredis.Message:
			c.onMessage(m.Payload)
		case *goredis.Subscription:
			if m.Channel != c.channel {
				break
			}
			switch m.Kind {
			case "subscribe", "ssubscribe":
				if !confirmed {
					confirmed = true
					c.st.subscriptions.Add(1)
					// Values loaded while unsubscribed may have
					// missed invalidations: start afresh.
					c.confirmFlush()
					c.confirms.Add(1)
					c.subscribed.Store(true)
				}
			case "unsubscribe", "sunsubscribe":
				// Redis dropped the subscription while the connection
				// lives on: a cluster moved the sharded channel's
				// slot to another node (resharding, failover). A loss:
				// subscribe again, where the slot is now.
				return confirmed, errors.New("unsubscribed by the server")
			}
		}
	}
}

// openPubSub returns the PubSub of a subscription, kept in c.ps so that
// Close closes it, or false after Close. ctx bounds the subscription's
// handshake, and ends with Close. For a *goredis.Ring it also returns the
// shard it subscribes on, the one that owns the channel now: the ring
// publishes on whichever shard owns the channel when it publishes, which
// changes when a shard goes down or comes back, so the subscription must
// follow (see subscription). It fails if the ring has no live shard.
func (c *core) openPubSub(ctx context.Context) (ps *goredis.PubSub, shard *goredis.Client, ok bool, err error) {
	client := goredis.UniversalClient(c.client)
	var channels []string
	switch cl := c.client.(type) {
	case *goredis.Client, *goredis.ClusterClient:
		// A PubSub without channels does no I/O: the subscription itself
		// is sent by the caller, outside the lock, with a deadline (the
		// client has ContextTimeoutEnabled), so that a hanging Redis
		// holds neither the lock nor Close for longer than that.
	case *goredis.Ring:
		// Its shard is a *goredis.Client: as above.
		if shard, err = cl.GetShardClientForKey(c.channel); err != nil {
			return nil, nil, false, err
		}
		client = shard
	default:
		// Others need the channel to choose their server. They subscribe
		// at once, within ctx, which Close ends before it takes the
		// lock; the caller's subscription repeats it (a second
		// confirmation is ignored) and reports its error, which the
		// client drops.
		channels = []string{c.channel}
	}
	c.psMu.Lock()
	defer c.psMu.Unlock() // deferred: a client that panics must not leave it locked (Close would hang)
	if c.closed {
		return nil, nil, false, nil
	}
	if c.sharded {
		ps = client.SSubscribe(ctx, channels...)
	} else {
		ps = client.Subscribe(ctx, channels...)
	}
	c.ps = ps
	return ps, shard, true, nil
}

// errShardMoved ends a subscription on a ring's shard that no longer owns
// the channel.
var errShardMoved = errors.New("the ring routes the invalidation channel to another shard now")

// errMasterMoved ends a subscription on a server that is no longer the
// master of a Sentinel failover client.
var errMasterMoved = errors.New("the Sentinel failover client's master changed")

// isFailover reports whether client is a Sentinel failover client
// (goredis.NewFailoverClient, or NewUniversalClient with a MasterName).
func isFailover(client goredis.UniversalClient) bool {
	cl, ok := client.(*goredis.Client)
	return ok && cl != nil && cl.Options().Addr == "FailoverClient" // go-redis's mark of one
}

// masterRunID returns the run_id of the server c's client sends commands
// to (its master), or "" if it cannot tell within Timeout.
func (c *core) masterRunID() string {
	ctx, cancel := context.WithTimeout(c.life, c.timeout)
	defer cancel()
	info, err := c.client.Info(ctx, "server").Result()
	if err != nil {
		return ""
	}
	for line := range strings.Lines(info) {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return id
		}
	}
	return ""
}

// ringMoved reports whether c's ring routes the channel to a shard other
// than shard (nil for other clients: never).
func (c *core) ringMoved(shard *goredis.Client) bool {
	if shard == nil {
		return false
	}
	now, err := c.client.(*goredis.Ring).GetShardClientForKey(c.channel)
	// With every shard down the subscription's connection fails too.
	return err == nil && now != shard
}

// flush empties L1 (loads in flight store nothing), or drops a ByteTier's
// caller's copies.
func (c *core) flush() {
	c.flushLocal()
	c.st.flushes.Add(1)
}
