package redis

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// On a Redis Cluster, one breaker gated the calls to every master: a
// master that hung failed the calls for its keys, BreakerFailures of them
// opened the breaker, and then the reads and writes of the healthy
// masters' keys failed at once too (ErrUnavailable; a Cache sent them all
// to its Loader) until a probe succeeded, which could only come from the
// hung master's keys' calls being held back. Each node now has its own
// breaker: the hung master's opens, the others' calls go on, and Stats
// shows the most severe state. Once the master answers again, its
// breaker's probe closes it.
func TestClusterHungMasterOpensOnlyItsBreaker(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	// A prefix whose invalidation channel lives on master 0 (writes
	// publish there); master 2 will hang.
	prefix := channelOn(t, c, 0)
	healthy, hung := keyOn(t, c, prefix, 1), keyOn(t, c, prefix, 2)
	cl := clusterClient(t, c)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	logs := &lineCounter{}
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.Prefix = prefix
		o.Timeout = 100 * time.Millisecond
		o.BreakerFailures = 2
		o.Clock = clock
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	for _, k := range []string{healthy, hung} {
		if err := bt.Set(ctx, []byte(k), []byte("v"+k), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	resume := stopProcess(t, c.Nodes[2])
	for i := range 2 {
		if _, _, _, err := bt.Get(ctx, nil, []byte(hung)); err == nil || errors.Is(err, ErrUnavailable) {
			t.Fatalf("read %d of the hung master's key: %v; want its timeout", i+1, err)
		}
	}
	if _, _, _, err := bt.Get(ctx, nil, []byte(hung)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("read of the hung master's key after 2 failures: %v; want ErrUnavailable (its breaker open)", err)
	}
	if st := bt.Stats(); st.Breaker != BreakerOpen || st.BreakerOpens != 1 {
		t.Errorf("Stats: Breaker %v, BreakerOpens %d; want open, 1", st.Breaker, st.BreakerOpens)
	}
	v, _, found, err := bt.Get(ctx, nil, []byte(healthy))
	if err != nil || !found || string(v) != "v"+healthy {
		t.Fatalf("read of a healthy master's key while another master's breaker is open = %q, %v, %v; want %q from Redis",
			v, found, err, "v"+healthy)
	}
	if err := bt.Set(ctx, []byte(healthy), []byte("w"), time.Hour); err != nil {
		t.Fatalf("write of a healthy master's key while another master's breaker is open: %v", err)
	}
	if logs.count("node="+c.Nodes[2].Addr()) == 0 {
		t.Errorf("no log line names node %s, whose breaker opened", c.Nodes[2].Addr())
	}

	resume()
	clock.add(time.Second) // BreakerOpenFor: the next call probes
	v, _, found, err = bt.Get(ctx, nil, []byte(hung))
	if err != nil || !found || string(v) != "v"+hung {
		t.Fatalf("probe of the resumed master = %q, %v, %v; want %q", v, found, err, "v"+hung)
	}
	if st := bt.Stats(); st.Breaker != BreakerClosed || st.BreakerOpens != 1 {
		t.Errorf("Stats after the probe: Breaker %v, BreakerOpens %d; want closed, 1", st.Breaker, st.BreakerOpens)
	}
}

// The breakers of two nodes that open within a second each log it: the
// log's rate limit is per breaker and state.
func TestNodeBreakersLogEachNode(t *testing.T) {
	var buf bytes.Buffer
	c := &core{log: slog.New(slog.NewTextHandler(&buf, nil))}
	c.breakerChanged("10.0.0.1:6379", BreakerClosed, BreakerOpen)
	c.breakerChanged("10.0.0.2:6379", BreakerClosed, BreakerOpen)
	out := buf.String()
	for _, node := range []string{"10.0.0.1:6379", "10.0.0.2:6379"} {
		if !strings.Contains(out, "node="+node) {
			t.Errorf("log:\n%s\nwant a line for node %s", out, node)
		}
	}
}
