// Package redistest starts and stops redis-server processes for tests and
// benchmarks: standalone servers and small Redis Clusters on free loopback
// ports, with no persistence, in temporary directories, plus a TCP "black
// hole" that accepts connections and never answers.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Environment variables.
const (
	// EnvServer names the redis-server binary (default: redis-server in
	// PATH).
	EnvServer = "CACHEKIT_REDIS_SERVER"
	// EnvRequire, set to 1, makes a missing or unstartable redis-server a
	// test failure instead of a skip (make test sets it).
	EnvRequire = "CACHEKIT_REQUIRE_REDIS"
)

// Binary returns the path of redis-server: $CACHEKIT_REDIS_SERVER, or
// redis-server in PATH.
func Binary() (string, error) {
	if p := os.Getenv(EnvServer); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvServer, p, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server is not in PATH and %s is not set", EnvServer)
	}
	return p, nil
}

// Required reports whether CACHEKIT_REQUIRE_REDIS=1.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// SkipMessage explains how to run the tests that need Redis.
func SkipMessage(err error) string {
	return fmt.Sprintf("no Redis for these tests (%v): install redis-server (make setup) or point %s at it; "+
		"with %s=1 (as make test sets) this is a failure", err, EnvServer, EnvRequire)
}

// Server is one redis-server process.
type Server struct {
	Bin  string
	Port int
	Dir  string
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Addr returns the server's address.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Start starts a redis-server on a free loopback port whose cluster bus port
// (port+10000) is free too, with extra arguments (such as
// "--cluster-enabled", "yes"), and waits until it answers PING.
func Start(bin string, extra ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "cachekit-redis-")
	if err != nil {
		return nil, err
	}
	var last error
	for range 8 {
		port, err := freePort()
		if err != nil {
			last = err
			continue
		}
		s := &Server{Bin: bin, Port: port, Dir: dir, args: extra}
		if err := s.start(); err != nil {
			last = err
			continue
		}
		return s, nil
	}
	_ = os.RemoveAll(dir)
	return nil, fmt.Errorf("redistest: could not start redis-server: %w", last)
}

// freePort returns a port p such that p and p+10000 can be listened on now.
func freePort() (int, error) {
	for range 50 {
		p := 20000 + rand.IntN(35000)
		a, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		_ = a.Close()
		if err != nil {
			continue
		}
		_ = b.Close()
		return p, nil
	}
	return 0, errors.New("redistest: no free port pair")
}

func (s *Server) start() error {
	args := []string{
		"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.Dir,
		"--daemonize", "no", "--protected-mode", "no",
		"--logfile", filepath.Join(s.Dir, fmt.Sprintf("redis-%d.log", s.Port)),
	}
	args = append(args, s.args...)
	cmd := exec.Command(s.Bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on port %d exited at start (see %s)", s.Port, s.Dir)
		default:
		}
		if ping(s.Addr()) == nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Kill()
	return fmt.Errorf("redis-server on port %d did not answer PING within 10s", s.Port)
}

// ping sends PING on a raw connection and expects +PONG.
func ping(addr string) error {
	cn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer cn.Close()
	_ = cn.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := cn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(cn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Kill kills the server at once (SIGKILL) and waits for it to exit.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Signal sends sig to the server's process (SIGSTOP and SIGCONT make it
// hang and resume); a server not running is an error.
func (s *Server) Signal(sig os.Signal) error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return errors.New("redistest: the server is not running")
	}
	return cmd.Process.Signal(sig)
}

// Restart starts the server again on the same port (after Kill), with an
// empty dataset.
func (s *Server) Restart() error {
	s.Kill()
	var err error
	for range 20 { // the port may linger for a moment
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// Stop kills the server and removes its directory.
func (s *Server) Stop() {
	s.Kill()
	_ = os.RemoveAll(s.Dir)
}

// Client returns a plain go-redis client for the server (for test set-up
// and inspection).
func (s *Server) Client() *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
}

// Cluster is a Redis Cluster of masters without replicas.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts n masters, gives each an equal share of the 16384
// slots (CLUSTER ADDSLOTSRANGE), introduces them (CLUSTER MEET) and waits
// until every node reports cluster_state:ok and knows every other.
func StartCluster(bin string, n int) (*Cluster, error) {
	c := &Cluster{}
	fail := func(err error) (*Cluster, error) {
		c.Stop()
		return nil, fmt.Errorf("redistest: cluster: %w", err)
	}
	for range n {
		s, err := Start(bin, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000", "--cluster-require-full-coverage", "yes")
		if err != nil {
			return fail(err)
		}
		c.Nodes = append(c.Nodes, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clients := make([]*goredis.Client, n)
	for i, s := range c.Nodes {
		clients[i] = s.Client()
		defer clients[i].Close()
	}
	const slots = 16384
	for i, cl := range clients {
		lo, hi := i*slots/n, (i+1)*slots/n-1
		if err := cl.ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
			return fail(err)
		}
		if err := cl.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fail(err)
		}
	}
	for _, s := range c.Nodes[1:] {
		if err := clients[0].ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(s.Port)).Err(); err != nil {
			return fail(err)
		}
	}
	for {
		ready := true
		for _, cl := range clients {
			info, err := cl.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") ||
				!strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)) {
				ready = false
				break
			}
		}
		if ready {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return fail(errors.New("cluster_state did not become ok within 30s"))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Addrs returns the nodes' addresses.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		a[i] = s.Addr()
	}
	return a
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.Stop()
	}
}

// BlackHole is a TCP listener that accepts connections and never answers:
// a Redis that hangs.
type BlackHole struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

// NewBlackHole listens on a free loopback port.
func NewBlackHole() (*BlackHole, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &BlackHole{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns = append(b.conns, cn)
			b.mu.Unlock()
		}
	}()
	return b, nil
}

// Addr returns the listener's address.
func (b *BlackHole) Addr() string { return b.ln.Addr().String() }

// Accepted returns the number of connections accepted so far.
func (b *BlackHole) Accepted() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}

// Close closes the listener and every connection.
func (b *BlackHole) Close() {
	_ = b.ln.Close()
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, cn := range b.conns {
		_ = cn.Close()
	}
}
