package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cachekit/cachekit/service"
)

const serveUsage = `usage: cachekit serve [flags]

Runs the cache service: an HTTP API over an in-memory byte cache.

  PUT    /v1/entries/{key}   store the body (TTL: header Cache-TTL or ?ttl=, e.g. 600 or 10m)
  GET    /v1/entries/{key}   200 with the value, or 404   (HEAD: the same without body)
  DELETE /v1/entries/{key}   204, or 404
  POST   /v1/entries         {"id": "...", "entry": <JSON>} or an array of them
  GET    /v1/stats           statistics (JSON)
  GET    /healthz            health
  GET    /metrics            Prometheus metrics

With --redis, instances share a Redis second tier and drop the keys others
change. While Redis's invalidations cannot be received, the in-memory store
is cleared every --redis-degraded-ttl: writes answered meanwhile may be
lost from memory (they are in Redis if its write succeeded). A connection
that goes silent is found lost within half of --redis-degraded-ttl (or
twice --redis-timeout if more), so no copy is staler than about 1.5 times
--redis-degraded-ttl.

Every flag can also be set by an environment variable: CACHEKIT_ and the
flag's name in upper case with underscores (--max-bytes: CACHEKIT_MAX_BYTES).
A flag given on the command line wins. SIGINT or SIGTERM shuts the server
down gracefully: requests in flight complete (for up to --shutdown-timeout;
then they are cut off, and so are their calls to Redis still in flight).

flags:
`

// serveListening, when set (tests), is called with the address the server
// listens on.
var serveListening func(addr string)

func serveCmd(args []string, stdout, stderr io.Writer) int {
	ctx, stop := firstSignal()
	defer stop()
	return serveContext(ctx, args, os.LookupEnv, stderr)
}

// firstSignal returns a context that SIGINT or SIGTERM cancels. After the
// first signal the server drains (up to --shutdown-timeout); the signals
// are unhandled again before the context is cancelled, so that a second
// one, even right after the server has said it is shutting down, gets the
// default behaviour: it ends the process. stop releases the signals and
// the goroutine that waits for them.
func firstSignal() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-sig:
		case <-ctx.Done():
		}
		signal.Stop(sig)
		cancel()
	}()
	return ctx, func() { cancel(); <-done }
}

// serveContext runs the server until ctx is done.
func serveContext(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stderr io.Writer) int {
	fs := newFlagSet("serve", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
	}
	o := service.DefaultOptions()
	// The only tier of cachekit serve is Redis's, whose calls' deadline
	// fitTierTimeout derives from --redis-timeout: the server's own
	// default (100ms) never applies, and the help must not show it.
	o.TierTimeout = 0
	o.RegisterFlags(fs)
	fs.Lookup("tier-timeout").Usage = "deadline of each call to the Redis tier (--redis); longer than --redis-timeout (0: 1.5 × --redis-timeout)"
	rf := registerRedisFlags(fs)
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	startProfile := cpuProfileFlag(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cachekit serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := service.ApplyEnv(fs, lookupEnv); err != nil {
		fmt.Fprintf(stderr, "cachekit serve: %v\n", err)
		return 2
	}
	set := map[string]bool{} // the flags given, on the command line or in the environment
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := rf.fitTierTimeout(&o, set["tier-timeout"]); err != nil {
		fmt.Fprintf(stderr, "cachekit serve: %v\n", err)
		return 2
	}
	zerosInEffect(&o)
	rf.zerosInEffect()
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "cachekit serve: --log-level: %v\n", err)
		return 2
	}
	hopts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler
	switch strings.ToLower(*logFormat) {
	case "text":
		handler = slog.NewTextHandler(stderr, hopts)
	case "json":
		handler = slog.NewJSONHandler(stderr, hopts)
	default:
		fmt.Fprintf(stderr, "cachekit serve: --log-format must be text or json, not %q\n", *logFormat)
		return 2
	}
	log := slog.New(handler)
	o.Logger = log
	log.Info("cachekit serve: configuration", service.FlagAttrs(fs)...)
	var err error

	var tier *redisTier
	if rf.addrs != "" {
		if tier, err = rf.open(log); err != nil {
			log.Error("cachekit serve: --redis", "err", err)
			return 1
		}
		o.Tier = tier.tier
	}
	// Zero, unless given: the server's default, which it lowers if
	// --max-bytes is too small for it (service.DefaultOptions).
	defaultValueLimit := o.MaxValueBytes == 0
	s, err := service.New(o)
	if err != nil {
		if tier != nil {
			tier.close()
		}
		log.Error("cachekit serve: cannot start", "err", err)
		return 1
	}
	defer s.Close()
	if mv := s.Options().MaxValueBytes; defaultValueLimit && mv != service.DefaultMaxValueBytes {
		log.Warn("cachekit serve: max-value-bytes lowered to fit max-bytes", "max-value-bytes", service.FormatSize(int64(mv)))
	}
	if tier != nil {
		tier.attach(s)
		// Closed before the store, so that no handler runs on a closed
		// store; at shutdown, its calls in flight have what is left of
		// --shutdown-timeout, then the client is closed under them.
		var stopping atomic.Pointer[time.Time]
		stopAfter := context.AfterFunc(ctx, func() { now := time.Now(); stopping.Store(&now) })
		defer func() {
			stopAfter()
			left := s.Options().ShutdownTimeout
			if at := stopping.Load(); at != nil {
				left = max(left-time.Since(*at), 0)
			}
			tier.closeWithin(left)
		}()
	}
	ln, err := net.Listen("tcp", s.Options().Addr)
	if err != nil {
		log.Error("cachekit serve: cannot listen", "err", err)
		return 1
	}
	stopProfile, ok := startProfile(stderr)
	if !ok {
		ln.Close()
		return 1
	}
	defer stopProfile()
	if serveListening != nil {
		serveListening(ln.Addr().String())
	}
	if err := s.Serve(ctx, ln); err != nil {
		log.Error("cachekit serve", "err", err)
		return 1
	}
	return 0
}

// zerosInEffect replaces the zeros of o that select a default
// (service.Options: "The zero value of each field selects the default") by
// that default, so that the configuration log, which prints the flags'
// values, shows the values in effect (--read-timeout 0 is 30s, not no
// timeout); a zero DefaultTTL shows the default fitted to MaxTTL, as New
// fits it. Shards (0: the store's own default), MaxValueBytes and
// MaxHeaderBytes (which the server fits to the other limits, see
// serveContext) keep their zeros.
func zerosInEffect(o *service.Options) {
	d := service.DefaultOptions()
	o.Addr = cmp.Or(o.Addr, d.Addr)
	o.MaxBytes = cmp.Or(o.MaxBytes, d.MaxBytes)
	o.MaxTTL = cmp.Or(o.MaxTTL, d.MaxTTL)
	if o.DefaultTTL == 0 && o.MaxTTL > 0 { // as New fits it (service.DefaultOptions)
		o.DefaultTTL = min(service.DefaultTTL, o.MaxTTL)
	}
	o.MaxKeyBytes = cmp.Or(o.MaxKeyBytes, d.MaxKeyBytes)
	o.MaxBodyBytes = cmp.Or(o.MaxBodyBytes, d.MaxBodyBytes)
	o.ReadHeaderTimeout = cmp.Or(o.ReadHeaderTimeout, d.ReadHeaderTimeout)
	o.ReadTimeout = cmp.Or(o.ReadTimeout, d.ReadTimeout)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, d.WriteTimeout)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, d.IdleTimeout)
	o.ShutdownTimeout = cmp.Or(o.ShutdownTimeout, d.ShutdownTimeout)
	o.TierTimeout = cmp.Or(o.TierTimeout, d.TierTimeout)
}
