package redis

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
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
// loss cuts the local copies' lifetimes to DegradedTTL: entries cached
// before it are flushed DegradedTTL after it (unless the subscription is
// back by then, which flushes them at once), and values loaded meanwhile
// live no longer (the owner caps them). So a Redis that goes down does not
// empty L1 at once: hits go on for DegradedTTL.
func (c *core) subscribeLoop() {
	defer c.wg.Done()
	delay := c.resubscribeDelay
	for c.life.Err() == nil {
		confirmed := c.subscription()
		if c.life.Err() != nil {
			return // Close
		}
		if c.subscribed.Swap(false) {
			c.st.losses.Add(1)
			c.flushDue = time.Now().Add(c.degradedTTL)
			c.logs.log(c.log, "subscription", "redis: invalidation subscription lost; resubscribing",
				"l1_flush_in", c.degradedTTL)
			if c.lost != nil {
				c.lost()
			}
		}
		if confirmed {
			delay = c.resubscribeDelay
		}
		c.pause(delay)
		delay = min(2*delay, 32*c.resubscribeDelay)
	}
}

// pause waits for d, or until Close, flushing the local copies meanwhile if a flush
// falls due.
func (c *core) pause(d time.Duration) {
	end := time.Now().Add(d)
	for {
		now := time.Now()
		if !c.flushDue.IsZero() && !now.Before(c.flushDue) {
			c.flushDue = time.Time{}
			c.flush()
		}
		if !now.Before(end) {
			return
		}
		wake := end
		if !c.flushDue.IsZero() && c.flushDue.Before(wake) {
			wake = c.flushDue
		}
		t := time.NewTimer(wake.Sub(now))
		select {
		case <-c.life.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// subscription runs one subscription until it fails or Close, and reports
// whether it was ever confirmed.
func (c *core) subscription() (confirmed bool) {
	c.psMu.Lock()
	if c.closed {
		c.psMu.Unlock()
		return false
	}
	var ps *goredis.PubSub
	if c.sharded {
		ps = c.client.SSubscribe(c.life, c.channel)
	} else {
		ps = c.client.Subscribe(c.life, c.channel)
	}
	c.ps = ps
	c.psMu.Unlock()
	defer func() {
		c.psMu.Lock()
		_ = ps.Close()
		c.ps = nil
		c.psMu.Unlock()
	}()

	pinged := false
	for {
		// Until the subscription is confirmed, wait no longer than a
		// Redis call may take; afterwards, HealthCheck.
		wait := c.healthCheck
		if !confirmed {
			wait = max(c.timeout, 100*time.Millisecond)
		}
		msg, err := ps.ReceiveTimeout(c.life, wait)
		if err != nil {
			var ne net.Error
			if c.life.Err() != nil || !(errors.As(err, &ne) && ne.Timeout()) || pinged || !confirmed {
				return confirmed
			}
			// Silent for a while: ask, and give it as long again.
			ctx, cancel := context.WithTimeout(c.life, c.timeout)
			err = ps.Ping(ctx)
			cancel()
			if err != nil {
				return confirmed
			}
			pinged = true
			continue
		}
		pinged = false
		switch m := msg.(type) {
		case *goredis.Message:
			c.onMessage(m.Payload)
		case *goredis.Subscription:
			if m.Channel == c.channel && (m.Kind == "subscribe" || m.Kind == "ssubscribe") && !confirmed {
				confirmed = true
				c.st.subscriptions.Add(1)
				c.flushDue = time.Time{}
				// Values loaded while unsubscribed may have missed
				// invalidations: start afresh (unless New has not
				// returned yet: then nothing was loaded).
				if c.returned.Load() {
					c.flush()
				}
				c.subscribed.Store(true)
			}
		}
	}
}

// flush empties L1 (loads in flight store nothing), or drops a ByteTier's
// caller's copies.
func (c *core) flush() {
	c.flushLocal()
	c.st.flushes.Add(1)
}
