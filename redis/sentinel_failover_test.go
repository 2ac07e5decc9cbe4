package redis

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// sentinelSetup is a master, one replica of it and one Sentinel that
// monitors them as "mymaster", all on loopback.
type sentinelSetup struct {
	master, replica *redistest.Server
	sentinelAddr    string
	sentinel        *goredis.SentinelClient
}

// startSentinelSetup starts the master, its replica and a Sentinel with
// short timeouts, and waits until the Sentinel knows the replica (so that
// SENTINEL FAILOVER can promote it).
func startSentinelSetup(t *testing.T) *sentinelSetup {
	t.Helper()
	bin := redisBin(t)
	m := private(t, "--repl-diskless-sync-delay", "0")
	r := private(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	dir := t.TempDir()
	var addr string
	var cmd *exec.Cmd
	var exited chan struct{}
	for attempt := 0; attempt < 8 && addr == ""; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", port))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\nprotected-mode no\ndir %s\nlogfile %s\n"+
			"sentinel monitor mymaster 127.0.0.1 %d 1\n"+
			"sentinel down-after-milliseconds mymaster 1000\n"+
			"sentinel failover-timeout mymaster 2000\n"+
			"sentinel parallel-syncs mymaster 1\n",
			port, dir, filepath.Join(dir, fmt.Sprintf("sentinel-%d.log", port)), m.Port)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(bin, conf, "--sentinel")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			noRedis(t, err)
		}
		exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}) { _ = cmd.Wait(); close(exited) }(cmd, exited)
		a := "127.0.0.1:" + strconv.Itoa(port)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-exited:
				deadline = time.Time{}
				continue
			default:
			}
			cn, err := net.DialTimeout("tcp", a, 200*time.Millisecond)
			if err == nil {
				_ = cn.Close()
				addr = a
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if addr == "" {
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	if addr == "" {
		noRedis(t, fmt.Errorf("redis-server --sentinel did not start (see %s)", dir))
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	sc := goredis.NewSentinelClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = sc.Close() })
	ctx := context.Background()
	rc := r.Client()
	defer rc.Close()
	eventually(t, 10*time.Second, "the replica in sync and known to the Sentinel", func() bool {
		info, err := rc.Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, "master_link_status:up") {
			return false
		}
		reps, err := sc.Replicas(ctx, "mymaster").Result()
		if err != nil || len(reps) != 1 {
			return false
		}
		return reps[0]["flags"] == "slave" && reps[0]["master-link-status"] == "ok"
	})
	return &sentinelSetup{master: m, replica: r, sentinelAddr: addr, sentinel: sc}
}

// failoverClient returns a Sentinel client of "mymaster" with the
// package's ClientDefaults, closed when the test ends.
func (s *sentinelSetup) failoverClient(t *testing.T) goredis.UniversalClient {
	t.Helper()
	o := ClientDefaults(&goredis.UniversalOptions{MasterName: "mymaster", Addrs: []string{s.sentinelAddr}})
	cl := goredis.NewUniversalClient(o)
	if _, ok := cl.(*goredis.Client); !ok {
		t.Fatalf("NewUniversalClient with MasterName gave a %T", cl)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// failover promotes the replica (SENTINEL FAILOVER) and waits until the
// Sentinel names it the master.
func (s *sentinelSetup) failover(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	eventually(t, 10*time.Second, "SENTINEL FAILOVER accepted", func() bool {
		return s.sentinel.Failover(ctx, "mymaster").Err() == nil
	})
	eventually(t, 10*time.Second, "the Sentinel names the replica the master", func() bool {
		a, err := s.sentinel.GetMasterAddrByName(ctx, "mymaster").Result()
		return err == nil && len(a) == 2 && a[1] == strconv.Itoa(s.replica.Port)
	})
}

// serverPort returns the port of the server that cl's next command reaches.
func serverPort(ctx context.Context, cl goredis.UniversalClient) string {
	v, err := cl.ConfigGet(ctx, "port").Result()
	if err != nil {
		return ""
	}
	return v["port"]
}

// After a Sentinel failover the invalidation subscription stayed on the
// demoted master, and invalidations published on the new master were lost
// without the Cache noticing: on +switch-master the go-redis failover
// client drops the connections of its command pools that do not go to the
// new master, but not the Pub/Sub connection, and Sentinel leaves the old
// master a master (deaf to the new one's PUBLISHes) for about 8-10s before
// it reconfigures it as a replica and kills its Pub/Sub clients. B's L1
// kept the old value, its Stats said Subscribed, no loss: the staleness
// lasted Sentinel's reconfiguration delay (or Local.TTL if it never
// reconfigures the old master), beyond DegradedTTL (doc.go). The
// subscriber now asks the client's master's run_id every DegradedTTL/2
// and subscribes again when it changed.
func TestSentinelFailoverMovesTheSubscription(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	s := startSentinelSetup(t)
	clA, clB := s.failoverClient(t), s.failoverClient(t)
	src := newSource()
	src.set("k", "v1")
	const degraded = 300 * time.Millisecond
	tweak := func(o *Options[string]) {
		o.DegradedTTL = degraded
		o.ResubscribeDelay = 10 * time.Millisecond
		o.HealthCheck = 200 * time.Millisecond
		o.Local.TTL = time.Minute
	}
	a := newTier(t, clA, src, tweak)
	b := newTier(t, clB, src, tweak)
	waitSubscribed(t, a, b)
	mustGet(t, a, "k", "v1")
	mustGet(t, b, "k", "v1")

	s.failover(t)
	newPort := strconv.Itoa(s.replica.Port)
	eventually(t, 10*time.Second, "both clients on the new master", func() bool {
		return serverPort(ctx, clA) == newPort && serverPort(ctx, clB) == newPort
	})

	if err := a.Set(ctx, "k", "v2"); err != nil {
		t.Fatal(err)
	}
	nm := s.replica.Client()
	defer nm.Close()
	if n := nm.Exists(ctx, testPrefix(t)+"k").Val(); n != 1 {
		t.Fatalf("A's Set did not reach the new master")
	}
	t.Cleanup(func() {
		if t.Failed() {
			st := b.Stats()
			t.Logf("B: Subscribed=%v SubscriptionLosses=%d InvalidationsReceived=%d Flushes=%d",
				st.Subscribed, st.SubscriptionLosses, st.InvalidationsReceived, st.Flushes)
		}
	})
	var got string
	eventually(t, 4*degraded, "B serves A's new value after the failover", func() bool {
		var err error
		got, err = b.Get(ctx, "k")
		return err == nil && got == "v2"
	})
}
