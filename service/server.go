package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit/bytecache"
)

// Server is the cache service: an http.Handler over an in-memory
// bytecache.Cache (and optionally a second Tier), with Serve and
// ListenAndServe to run it with timeouts and a graceful shutdown.
//
// Every method is safe for concurrent use. Serve (or ListenAndServe) may be
// called once.
type Server struct {
	o         Options
	cache     *bytecache.Cache
	log       *slog.Logger
	start     time.Time
	counters  counters
	bufs      sync.Pool              // *buffer
	lastLog   [logKinds]atomic.Int64 // per kind of message (logLimited)
	dateCache atomic.Pointer[dateValue]
	fence     *fence // orders Tier fills against changes; nil without a Tier
	closed    atomic.Bool

	// Test hooks. entered, when set, is called as a request enters the
	// handler; shutdown, when set, runs (on its own goroutine) once the
	// graceful shutdown has begun.
	entered  func(*http.Request)
	shutdown func()
}

// buffer is a request's scratch space, pooled.
type buffer struct {
	key []byte
	val []byte
	tmp []byte
}

// maxPooledBuffer is the largest buffer returned to the pool; larger ones
// (large values, large POST bodies) are left to the garbage collector.
const maxPooledBuffer = 64 << 10

// headerSlop is what net/http reads beyond an http.Server's MaxHeaderBytes
// before it refuses a request's headers (its "bufio slop").
const headerSlop = 4 << 10

func (s *Server) getBuf() *buffer {
	if b, ok := s.bufs.Get().(*buffer); ok {
		return b
	}
	return &buffer{key: make([]byte, 0, 256), val: make([]byte, 0, 2048)}
}

func (s *Server) putBuf(b *buffer) {
	if cap(b.val) > maxPooledBuffer || cap(b.key) > maxPooledBuffer || cap(b.tmp) > maxPooledBuffer {
		return
	}
	s.bufs.Put(b)
}

// New returns a Server with an empty in-memory store sized by o.MaxBytes.
func New(o Options) (*Server, error) {
	valueSet := o.MaxValueBytes != 0
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	// The store must accept any entry the server accepts: the largest value
	// with its stored header and the longest key (bytecache refuses an
	// entry that does not fit in a shard). With the default value limit,
	// halve it until it fits the shards of a small budget.
	var cache *bytecache.Cache
	for {
		cache, err = openStore(o)
		if err == nil || valueSet || o.MaxValueBytes <= 1 {
			break
		}
		o.MaxValueBytes /= 2
	}
	if err != nil {
		tiny := o
		tiny.MaxValueBytes = 1
		c, terr := openStore(tiny)
		if terr != nil {
			// Not the value: no store can be made of max-bytes and
			// shards (halving a default value limit down to 1 then
			// blamed "max-value-bytes 1", which nobody had set).
			return nil, fmt.Errorf("%w: max-bytes %d with shards %d makes no store: %w", ErrInvalidOptions, o.MaxBytes, o.Shards, terr)
		}
		c.Close()
		return nil, fmt.Errorf("%w: max-value-bytes %d (with a key of max-key-bytes %d) must fit in a store shard: raise max-bytes or lower them (%w)",
			ErrInvalidOptions, o.MaxValueBytes, o.MaxKeyBytes, err)
	}
	srv := &Server{o: o, cache: cache, log: o.Logger, start: time.Now()}
	if o.Tier != nil {
		srv.fence = newFence()
	}
	return srv, nil
}

// openStore returns the in-memory store for o. With o.Shards 0, if the
// store's default number of shards leaves a shard too small for the
// largest entry (its default grows with GOMAXPROCS), it takes the most
// shards that fit one.
func openStore(o Options) (*bytecache.Cache, error) {
	entry := o.MaxValueBytes + maxValueHeader + o.MaxKeyBytes
	bo := bytecache.Options{
		MaxBytes:      o.MaxBytes,
		Shards:        o.Shards,
		MaxKeyBytes:   o.MaxKeyBytes,
		MaxValueBytes: entry,
		Now:           o.Now,
	}
	cache, err := bytecache.New(bo)
	if err == nil || o.Shards != 0 {
		return cache, err
	}
	// A shard of n bytes takes an entry of up to n-storeHeader bytes.
	fit := o.MaxBytes / int64(entry+storeHeader)
	if fit < 1 {
		return nil, err
	}
	bo.Shards = 1 << min(bits.Len64(uint64(fit))-1, 16) // the store's most
	return bytecache.New(bo)
}

// storeHeader is the most bytes the store adds to an entry's key and value
// (bytecache's largest entry header).
const storeHeader = 16

// Options returns the options in effect, defaults filled in.
func (s *Server) Options() Options { return s.o }

// Store returns the in-memory store, for example to preload it or to load a
// snapshot. Values written directly must be in the server's stored form
// (see EncodeValue): GET answers a value in no form it knows with a 500
// (and logs it), and serves one that merely starts like the stored form as
// what that start says. A snapshot's LoadFrom replaces the whole store:
// load it before the server takes requests, or the writes it serves
// meanwhile are lost (and the Tier's fence, which orders fills against
// the server's own writes, knows nothing of what the load brings back).
func (s *Server) Store() *bytecache.Cache { return s.cache }

// write stores key in the in-memory store and then in the Tier, if any (a
// failed Tier write is counted and logged, not returned), as a change that
// fills from the Tier must not overwrite (fence.go).
func (s *Server) write(ctx context.Context, key, value []byte, ttl time.Duration) error {
	_, err := s.writeTier(ctx, key, value, ttl, false)
	return err
}

// writeTier is write; with skipTier it leaves the Tier out (counted as a
// tier error). tierFailed reports a failed (or skipped) Tier write. It
// counts the entry in entries_stored once the in-memory store holds it.
func (s *Server) writeTier(ctx context.Context, key, value []byte, ttl time.Duration, skipTier bool) (tierFailed bool, err error) {
	if s.fence == nil {
		if err := s.cache.Set(key, value, ttl); err != nil {
			return false, err
		}
		s.counters.entriesStored.Add(1)
		return false, nil
	}
	if skipTier {
		// No Tier write follows, so there is nothing to keep in order
		// with the key's other changes: no wait for one in progress (a
		// Tier that hangs would make this entry wait for another
		// writer's TierTimeout).
		s.fence.change(key, func() { err = s.cache.Set(key, value, ttl) })
		if err != nil {
			return false, err
		}
		s.counters.entriesStored.Add(1)
		s.counters.tierErrors.Add(1)
		return true, nil
	}
	s.fence.open(key, func() { err = s.cache.Set(key, value, ttl) })
	defer s.fence.close(key)
	if err != nil {
		return false, err
	}
	// Counted now, not once the request is answered: a Tier that panics
	// below fails the request, but the store holds the entry.
	s.counters.entriesStored.Add(1)
	// The in-memory store holds the write now: the tier's part must not
	// be abandoned because the client went away (its Timeout bounds it).
	return !s.tierSet(context.WithoutCancel(ctx), key, value, ttl), nil
}

// del deletes key from the in-memory store and then from the Tier, if any,
// as write stores, and reports whether either held it. It returns the
// Tier's error, if its delete failed: the key may then still be in the
// Tier, and a read would bring it back; found then reports whether the
// in-memory store held it.
func (s *Server) del(ctx context.Context, key []byte) (found bool, err error) {
	if s.fence == nil {
		return s.cache.Delete(key), nil
	}
	s.fence.open(key, func() { found = s.cache.Delete(key) })
	defer s.fence.close(key)
	if s.closed.Load() {
		// A request served after Close changes no shared state, and
		// answers 503 (delete does when nothing was found): Close began
		// after the key left the store (or before), and the key stays in
		// the Tier.
		return false, nil
	}
	inTier, err := s.tierDelete(context.WithoutCancel(ctx), key)
	if err != nil {
		return found, err
	}
	return inTier || found, nil
}

// Invalidate drops key from the in-memory store (not from the Tier),
// reporting whether it was there: a Tier calls it when another instance
// changed or deleted key.
func (s *Server) Invalidate(key []byte) bool {
	if s.fence == nil {
		return s.cache.Delete(key)
	}
	var found bool
	s.fence.change(key, func() { found = s.cache.Delete(key) })
	return found
}

// InvalidateAll empties the in-memory store (not the Tier): a Tier calls
// it when this instance may have missed invalidations. A read that asked
// the Tier before InvalidateAll began (and may have got a value an
// invalidation since replaced) serves what it got but does not store it.
// A write whose Tier part failed is dropped too: later reads get the
// Tier's value, which may be older (see Consistency in the package
// documentation).
func (s *Server) InvalidateAll() {
	if s.fence != nil {
		s.fence.changeAll()
	}
	s.cache.Clear()
}

// Close closes the in-memory store. Call it after Serve has returned: a
// request served after Close (one still running when the graceful
// shutdown timed out) answers 503, as the closed store can neither store
// nor tell whether it held a key.
func (s *Server) Close() error {
	s.closed.Store(true)
	return s.cache.Close()
}

// ListenAndServe listens on Options.Addr and serves until ctx is done; see
// Serve.
func (s *Server) ListenAndServe(ctx context.Context) error {
	if ctx == nil {
		return errors.New("service: ListenAndServe: nil Context")
	}
	ln, err := net.Listen("tcp", s.o.Addr)
	if err != nil {
		return fmt.Errorf("service: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves HTTP on ln until ctx is done, then shuts down gracefully: it
// stops accepting connections, closes idle ones, and waits for the requests
// in flight to complete, for at most Options.ShutdownTimeout, after which
// it closes the remaining connections and returns an error. It returns nil
// after a complete graceful shutdown, or the error that stopped the
// listener. Serve closes ln. A nil ctx is refused with an error (ln is
// closed, nothing is served).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if ctx == nil {
		ln.Close()
		return errors.New("service: Serve: nil Context")
	}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.o.ReadHeaderTimeout,
		ReadTimeout:       s.o.ReadTimeout,
		WriteTimeout:      s.o.WriteTimeout,
		IdleTimeout:       s.o.IdleTimeout,
		// net/http reads up to headerSlop more than its MaxHeaderBytes ("bufio
		// slop"): take it off, so that Options.MaxHeaderBytes is the bound.
		// Validation keeps that above headerSlop.
		MaxHeaderBytes: s.o.MaxHeaderBytes - headerSlop,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if s.shutdown != nil {
		hs.RegisterOnShutdown(s.shutdown)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		// The listener failed. Stop serving the connections it accepted
		// too, as a shutdown would: none may be served once Serve has
		// returned (its caller then closes the store).
		sctx, cancel := context.WithTimeout(context.Background(), s.o.ShutdownTimeout)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
		return fmt.Errorf("service: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing the requests in flight", "timeout", s.o.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.o.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-errc // http.ErrServerClosed, at once
	if err != nil {
		hs.Close()
		return fmt.Errorf("service: graceful shutdown: %w (the remaining connections were closed)", err)
	}
	s.log.Info("stopped")
	return nil
}

// logKind is a kind of message that logLimited limits on its own.
type logKind uint8

const (
	logTierGet logKind = iota
	logTierForeign
	logTierSet
	logTierDelete
	logKinds
)

// logLimited logs at most one message of kind a second (tier errors can
// come at the request rate); each kind has its own limit, so that a flood
// of one failure (writes refused) does not hide another (a foreign value).
// A last message stamped after now means the wall clock was set back
// since: it logs then, rather than stay silent until the clock is back at
// that stamp.
func (s *Server) logLimited(kind logKind, msg string, args ...any) {
	l := &s.lastLog[kind]
	now := time.Now().UnixNano()
	last := l.Load()
	if since := now - last; since >= 0 && since < int64(time.Second) || !l.CompareAndSwap(last, now) {
		return
	}
	s.log.Warn(msg, args...)
}

// tierGet asks the Tier for b.key after the in-memory store missed it; gen
// is the fence's generation taken before that miss (fence.begin).
func (s *Server) tierGet(reqCtx context.Context, b *buffer, gen uint64) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(reqCtx, s.o.TierTimeout)
	defer cancel()
	v, ttl, ok, err := s.o.Tier.Get(ctx, b.val[:0], b.key)
	switch {
	case err != nil:
		if reqCtx.Err() == nil { // else the client went away: no failure of the tier
			s.counters.tierErrors.Add(1)
			s.logLimited(logTierGet, "second tier: get failed", "err", err)
		}
		return b.val[:0], false
	case !ok:
		s.counters.tierMisses.Add(1)
		return v, false
	}
	if _, _, valid := decodeValue(v); !valid {
		// Not a value this server wrote: a miss, not a 500.
		s.counters.tierMisses.Add(1)
		s.logLimited(logTierForeign, "second tier: a value is not in the server's format; read as a miss", "key", string(b.key))
		return v[:0], false
	}
	s.counters.tierHits.Add(1)
	if ttl <= 0 {
		ttl = s.defaultTTL()
	}
	// A refusal, or a change of the key since gen, only means the value is
	// not cached locally.
	s.fence.fill(b.key, gen, func() { _ = s.cache.Set(b.key, v, ttl) })
	return v, true
}

func (s *Server) tierSet(ctx context.Context, key, value []byte, ttl time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, s.o.TierTimeout)
	defer cancel()
	if err := s.o.Tier.Set(ctx, key, value, ttl); err != nil {
		s.counters.tierErrors.Add(1)
		s.logLimited(logTierSet, "second tier: set failed", "err", err)
		return false
	}
	return true
}

func (s *Server) tierDelete(ctx context.Context, key []byte) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.TierTimeout)
	defer cancel()
	ok, err := s.o.Tier.Delete(ctx, key)
	if err != nil {
		s.counters.tierErrors.Add(1)
		s.logLimited(logTierDelete, "second tier: delete failed", "err", err)
	}
	return ok, err
}

func (s *Server) defaultTTL() time.Duration {
	if s.o.DefaultTTL > 0 {
		return s.o.DefaultTTL
	}
	return -1 // no expiry
}

// storeError maps an error of the store's Set to a response.
func (s *Server) storeError(err error) *apiError {
	switch {
	case errors.Is(err, bytecache.ErrKeyTooLarge):
		return errKeyTooLong
	case errors.Is(err, bytecache.ErrValueTooLarge):
		return errValueTooLarge
	case errors.Is(err, bytecache.ErrClosed):
		return errClosed
	}
	s.log.Error("store: set failed", "err", err)
	return errInternal
}
