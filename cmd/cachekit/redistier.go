package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ckredis "github.com/cachekit/cachekit/redis"
	"github.com/cachekit/cachekit/service"
	goredis "github.com/redis/go-redis/v9"
)

// redisFlags are serve's flags for the optional Redis second tier.
type redisFlags struct {
	addrs       string
	cluster     bool
	prefix      string
	timeout     time.Duration
	degradedTTL time.Duration
}

func registerRedisFlags(fs *flag.FlagSet) *redisFlags {
	rf := &redisFlags{}
	fs.Var(redisAddrFlag{&rf.addrs}, "redis", "Redis second tier shared by instances: host:port[,host:port...] or a redis:// URL (empty: none; a password in it is never logged)")
	fs.BoolVar(&rf.cluster, "redis-cluster", false, "the --redis addresses are a Redis Cluster (several addresses imply it)")
	fs.StringVar(&rf.prefix, "redis-prefix", ckredis.DefaultBytePrefix, "prefix of the keys and the invalidation channel in Redis (the same in every instance)")
	fs.DurationVar(&rf.timeout, "redis-timeout", 100*time.Millisecond, "deadline of every Redis call; --tier-timeout must be longer (by default 1.5 × this)")
	fs.DurationVar(&rf.degradedTTL, "redis-degraded-ttl", ckredis.DefaultDegradedTTL,
		"while Redis's invalidations cannot be received, the in-memory store is cleared this often (so no copy is staler than that plus the time to notice the loss: half of it, or twice --redis-timeout if more; writes answered meanwhile may be lost from memory)")
	return rf
}

// zerosInEffect replaces the zeros of the flags that select a ByteTier
// default (an empty --redis-prefix, a zero --redis-timeout or
// --redis-degraded-ttl: redis.ByteTierOptions) by that default, so that
// the configuration log shows the values in effect, as zerosInEffect does
// for the server's flags. Negative durations stay, for fitTierTimeout to
// refuse.
func (rf *redisFlags) zerosInEffect() {
	rf.prefix = cmp.Or(rf.prefix, ckredis.DefaultBytePrefix)
	rf.timeout = cmp.Or(rf.timeout, ckredis.DefaultTimeout)
	rf.degradedTTL = cmp.Or(rf.degradedTTL, ckredis.DefaultDegradedTTL)
	// Several addresses imply a Redis Cluster (see open).
	rf.cluster = rf.cluster || len(rf.hosts()) > 1
}

// hosts returns the addresses of a --redis that is a list of them (not a
// URL), blanks dropped.
func (rf *redisFlags) hosts() []string {
	if strings.Contains(rf.addrs, "://") {
		return nil
	}
	var hs []string
	for _, a := range strings.Split(rf.addrs, ",") {
		if a = strings.TrimSpace(a); a != "" {
			hs = append(hs, a)
		}
	}
	return hs
}

// redisAddrFlag is the --redis flag: its String, which the configuration
// log prints, hides a URL's password.
type redisAddrFlag struct{ p *string }

func (f redisAddrFlag) String() string {
	if f.p == nil {
		return ""
	}
	return redactURL(*f.p)
}

func (f redisAddrFlag) Set(s string) error {
	*f.p = s
	return nil
}

// redactURL returns s with the password of a URL replaced by "xxxxx".
func redactURL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || strayAt(u) {
		return "(an unparsable URL)"
	}
	return u.Redacted()
}

// strayAt reports whether u has an '@' outside its user information, which
// Redacted would show as it is: the password of another URL run into this
// one ("h1:6379,redis://:password@h2", "redis://h1/0,redis://:password@h2"
// for a list of URLs), which url.Parse takes for an opaque part or a path.
func strayAt(u *url.URL) bool {
	return strings.Contains(u.Opaque+u.Path+u.RawPath+u.RawQuery+u.Fragment, "@")
}

// redisTier is the Redis second tier of a server and its client.
type redisTier struct {
	client goredis.UniversalClient
	tier   *ckredis.ByteTier
}

// open connects the tier (the client connects lazily: a Redis that is down
// now is an error of the first calls, not of the start).
func (rf *redisFlags) open(log *slog.Logger) (*redisTier, error) {
	var uo goredis.UniversalOptions
	if strings.Contains(rf.addrs, "://") {
		pu, err := url.Parse(rf.addrs)
		if err != nil || strayAt(pu) {
			// url.Parse's errors quote the part they stop at, which
			// may be the password's beginning (a '/', '?' or '#' in it
			// ends the host; a bad escape): give none of it.
			return nil, fmt.Errorf("%s: not a valid URL (characters such as / ? # @ %% in the user name or password must be percent-encoded)", redactURL(rf.addrs))
		}
		// Refuse what the options below would drop: go-redis's other
		// schemes (unix://) and the URL's query options.
		if pu.Scheme != "redis" && pu.Scheme != "rediss" || pu.RawQuery != "" {
			return nil, fmt.Errorf("%s: only redis:// and rediss:// URLs without query options are supported (use the --redis-* flags)", redactURL(rf.addrs))
		}
		u, err := goredis.ParseURL(rf.addrs)
		if err != nil {
			// url.Error quotes the URL, password included.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("%s: %w", redactURL(rf.addrs), err)
		}
		uo = goredis.UniversalOptions{Addrs: []string{u.Addr}, Username: u.Username, Password: u.Password, DB: u.DB, TLSConfig: u.TLSConfig}
	} else {
		uo.Addrs = rf.hosts()
		if len(uo.Addrs) == 0 {
			return nil, errors.New("no address")
		}
	}
	// go-redis makes a cluster client of several addresses whatever this
	// says; zerosInEffect set it for the configuration log.
	uo.IsClusterMode = rf.cluster || len(uo.Addrs) > 1
	if uo.DB != 0 && uo.IsClusterMode {
		return nil, fmt.Errorf("%s: a Redis Cluster has no database %d", redactURL(rf.addrs), uo.DB)
	}
	// go-redis also cuts a call's socket reads and writes at these
	// timeouts (ClientDefaults' are 1s): they must not cut a longer
	// --redis-timeout short.
	sock := max(rf.timeout, time.Second)
	uo.DialTimeout, uo.ReadTimeout, uo.WriteTimeout, uo.PoolTimeout = sock, sock, sock, sock
	redisLogs.to.Store(log)
	client := goredis.NewUniversalClient(ckredis.ClientDefaults(&uo))
	tier, err := ckredis.NewByteTier(ckredis.ByteTierOptions{
		Client:      client,
		Prefix:      rf.prefix,
		Timeout:     rf.timeout,
		DegradedTTL: rf.degradedTTL,
		HealthCheck: rf.healthCheck(),
		Logger:      log,
	})
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("%s: %w", redactURL(rf.addrs), err)
	}
	return &redisTier{client: client, tier: tier}, nil
}

// healthCheck is the ByteTier's HealthCheck: a quarter of
// --redis-degraded-ttl, so that the loss of a subscription whose connection
// went silent (a partition, a NAT dropping the idle connection) is noticed
// within half of it (silence, then an unanswered ping), and no copy is
// staler than about 1.5 × --redis-degraded-ttl; but no less than
// --redis-timeout, which a ping's answer may take. (The ByteTier's own 5s
// default let a partitioned instance serve overwritten values for 15s with
// the default 5s --redis-degraded-ttl.)
func (rf *redisFlags) healthCheck() time.Duration {
	return max(rf.degradedTTL/4, rf.timeout, ckredis.MinPeriod)
}

// attach routes other instances' invalidations to s, before s serves.
func (t *redisTier) attach(s *service.Server) {
	t.tier.SetHandlers(ckredis.Handlers{
		Invalidate: func(key []byte) { s.Invalidate(key) },
		Flush:      s.InvalidateAll,
	})
}

func (t *redisTier) close() { t.closeWithin(-1) }

// closeWithin closes the tier, then the client. The tier's Close waits for
// its calls in flight (a write the server acknowledged may still be on its
// way to Redis); given a d ≥ 0 it waits for at most d: then it closes the
// client under them, which fails them at once, so that a Redis that hangs
// does not hold the shutdown for --redis-timeout after --shutdown-timeout
// has cut the requests off. A negative d waits for as long as they take.
func (t *redisTier) closeWithin(d time.Duration) {
	defer t.client.Close()
	if d < 0 {
		t.tier.Close()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.tier.Close()
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.client.Close() // the calls in flight fail; the tier's Close ends
		<-done
	}
}

// redisLogs receives go-redis's own log lines (a dial that failed, a pool
// or Pub/Sub connection in trouble), which go-redis would otherwise print
// to stderr in a format of its own, outside --log-format and --log-level:
// it sends them to the logger of the server that opened the last tier, at
// Warn, at most one a second (while Redis is down they come at the
// request rate), saying how many it left out. It is installed once, at
// start, before any client exists (go-redis's SetLogger is not safe for
// use while clients log).
var redisLogs = &redisLogger{}

func init() { goredis.SetLogger(redisLogs) }

type redisLogger struct {
	to atomic.Pointer[slog.Logger] // nil: slog.Default()

	mu      sync.Mutex
	last    time.Time // of the last line logged
	dropped int       // lines left out since
}

// Printf logs one go-redis line; it is safe for concurrent use.
func (l *redisLogger) Printf(_ context.Context, format string, v ...any) {
	now := time.Now()
	l.mu.Lock()
	if !l.last.IsZero() && now.Sub(l.last) < time.Second && now.Sub(l.last) >= 0 {
		l.dropped++
		l.mu.Unlock()
		return
	}
	dropped := l.dropped
	l.last, l.dropped = now, 0
	l.mu.Unlock()
	log := l.to.Load()
	if log == nil {
		log = slog.Default()
	}
	args := []any{"detail", strings.TrimSpace(fmt.Sprintf(format, v...))}
	if dropped > 0 {
		args = append(args, "left_out", dropped)
	}
	log.Warn("redis client", args...)
}

// fitTierTimeout makes the server's deadline of a Tier call (--tier-timeout)
// longer than the ByteTier's own (--redis-timeout): a
// call that the server's deadline cuts short tells the ByteTier's circuit
// breaker nothing (its caller gave up), so with the server's deadline
// first a hanging Redis would never open the breaker, and every call would
// wait its full deadline. Unless --tier-timeout was given (explicit), it
// becomes 1.5 × --redis-timeout; with --redis, an explicit one that is not
// longer is an error. An explicit zero selects the default, as every zero of the
// server's options does: it is taken as not given.
//
// It refuses negative --redis-* durations even without --redis, as the
// server's own are refused: a mistake shows before the day --redis is
// added. Without --redis it derives the default all the same (no tier
// uses it), so that the configuration printed at start shows the
// deadline the help states rather than the server's own default, which
// was shorter than --redis-timeout beside it.
func (rf *redisFlags) fitTierTimeout(o *service.Options, explicit bool) error {
	if rf.timeout < 0 {
		return fmt.Errorf("--redis-timeout (%v) must not be negative", rf.timeout)
	}
	if rf.degradedTTL < 0 {
		return fmt.Errorf("--redis-degraded-ttl (%v) must not be negative", rf.degradedTTL)
	}
	explicit = explicit && o.TierTimeout != 0
	redisTimeout := rf.timeout
	if redisTimeout == 0 { // the ByteTier's default
		redisTimeout = ckredis.DefaultTimeout
	}
	switch {
	case !explicit && redisTimeout > math.MaxInt64/3*2:
		// 1.5 × it would overflow into a negative deadline.
		return fmt.Errorf("--redis-timeout (%v) is too long: the --tier-timeout it implies (1.5 × it) does not fit a duration", rf.timeout)
	case !explicit:
		o.TierTimeout = redisTimeout + max(redisTimeout/2, 1) // longer, even for 1ns
	case rf.addrs != "" && o.TierTimeout <= redisTimeout:
		return fmt.Errorf("--tier-timeout (%v) must be longer than --redis-timeout (%v), or the circuit breaker never opens", o.TierTimeout, redisTimeout)
	}
	return nil
}
