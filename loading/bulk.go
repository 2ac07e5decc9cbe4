package loading

import "context"

// GetMany returns the values of keys, like Get for each key, but loads the
// keys it must load together: with a BulkLoader in one LoadMany call, with
// only a Loader in concurrent Load calls (at most Options.MaxManyLoads at
// once). Keys already being loaded (by any Get, GetMany or refresh) are not
// loaded again: GetMany waits for those loads. Duplicate keys are looked up
// once.
//
// The map holds every key that has a value, fresh or stale. The error is nil
// when every key has a fresh value; otherwise it is a *BulkError[K] whose
// Errors give, for each other key, what Get would have returned as its
// error: ErrStale (wrapped) for a key in the map served stale, and the
// load's error, ErrNotFound, ErrReentrant or ctx.Err() for a key not in it.
// If ctx ends while GetMany waits, it returns at once with what it has; the
// loads go on and their results are cached. After Close it returns
// (nil, ErrClosed). A nil ctx is an error: GetMany returns nil and an
// error at once, without looking any key up or starting a load.
func (c *Cache[K, V]) GetMany(ctx context.Context, keys []K) (map[K]V, error) {
	if ctx == nil {
		return nil, errNilContext
	}
	if c.closed.Load() {
		return nil, ErrClosed
	}
	out := make(map[K]V, len(keys))
	var errs map[K]error
	fail := func(k K, err error) {
		if errs == nil {
			errs = make(map[K]error)
		}
		errs[k] = err
	}
	// take records what a record answered for k.
	take := func(k K, v V, err error, st state) {
		if st == fresh || st == stale {
			out[k] = v
		}
		if err != nil {
			fail(k, err)
		}
	}

	now, ep := c.now(), c.epoch.Load()
	seen := make(map[K]struct{}, len(keys))
	var need []K
	var due []dueKey[K, V]
	// The reloads claimed so far are given back if a later key's lookup
	// panics (its Clock, recovered by the caller): otherwise no later read
	// could claim them again, and the keys would never be reloaded.
	looked := false
	defer func() {
		if !looked {
			for _, d := range due {
				d.r.refreshing.Store(false)
			}
		}
	}()
	for _, k := range keys {
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		r, ok := c.core.Get(k)
		if !ok {
			need = append(need, k)
			continue
		}
		st, isDue := c.view(r, now, ep)
		if st == unusable {
			c.stats.unusable.Add(1)
			need = append(need, k)
			continue
		}
		// Answer without the refresh; the due keys are refreshed
		// together below.
		v, err := c.answer(ctx, k, r, st, false, true)
		take(k, v, err, st)
		if isDue && ctx.Err() == nil && !r.refreshing.Load() && r.refreshing.CompareAndSwap(false, true) {
			due = append(due, dueKey[K, V]{k, r})
		}
	}
	looked = true
	if len(due) > 0 {
		c.refreshMany(ctx, due)
	}
	if len(need) == 0 {
		return c.bulkResult(out, errs)
	}

	ch := chainOf(ctx, c)
	var owned, waits []*flight[K, V]
	// The loads registered so far are launched even if a later key's
	// second look panics (its Clock, recovered by the caller, as net/http
	// recovers a handler's): otherwise they would stay in the table with
	// nobody to run them, and every later miss of their keys would join
	// them and wait until its context ended.
	launched := false
	defer func() {
		if !launched {
			c.launchOwned(ctx, owned)
		}
	}()
	for _, k := range need {
		if ch.has(k) {
			c.stats.noWait.Add(1)
			fail(k, ErrReentrant)
			continue
		}
		if c.beforeFlight != nil {
			c.beforeFlight(k)
		}
		sh := c.shard(k)
		sh.mu.Lock()
		if f := c.joinable(ctx, sh, k); f != nil {
			f.waitable()
			sh.mu.Unlock()
			if err := c.joined(ctx, f); err != nil {
				fail(k, err)
				continue
			}
			f.startDeferred() // we wait for it: it must not wait for a turn
			waits = append(waits, f)
			continue
		}
		prev, st, isDue := c.recheck(sh, k)
		if st != unusable {
			sh.mu.Unlock()
			v, err := c.answer(ctx, k, prev, st, isDue, false)
			take(k, v, err, st)
			continue
		}
		if err := ctx.Err(); err != nil {
			// A caller that has already given up starts no load.
			sh.mu.Unlock()
			c.stats.noWait.Add(1)
			fail(k, err)
			continue
		}
		f := c.newFlight(k, sh, prev, true)
		if c.bulk == nil && len(owned) >= c.manyLoads {
			// Queued behind the first MaxManyLoads (launchEach): marked
			// before a caller can join it, whose startDeferred would
			// otherwise find nothing to start and wait for a turn.
			start := func() { c.launch(ctx, []*flight[K, V]{f}, false) }
			f.deferred.Store(&start)
		}
		sh.register(f)
		sh.mu.Unlock()
		owned = append(owned, f)
		waits = append(waits, f)
	}
	launched = true
	c.launchOwned(ctx, owned)

	for i, f := range waits {
		select {
		case <-f.done:
		case <-ctx.Done():
			// Take what has finished; the rest fail with ctx's error.
			for _, f := range waits[i:] {
				select {
				case <-f.done:
					take(f.key, f.value, f.err, resultState(f.err))
				default:
					fail(f.key, ctx.Err())
				}
			}
			return c.bulkResult(out, errs)
		}
		take(f.key, f.value, f.err, resultState(f.err))
	}
	return c.bulkResult(out, errs)
}

// launchOwned launches the loads of the flights a GetMany registered: in
// one call with a BulkLoader, otherwise one call per key (see launchEach).
func (c *Cache[K, V]) launchOwned(ctx context.Context, owned []*flight[K, V]) {
	switch {
	case len(owned) == 0:
	case c.bulk != nil:
		c.launch(ctx, owned, false)
	default:
		c.launchEach(ctx, owned)
	}
}

// resultState is the state in which a flight's result puts its waiters: a
// value, or an error without one.
func resultState(err error) state {
	if err == nil {
		return fresh
	}
	return negative
}

func (c *Cache[K, V]) bulkResult(out map[K]V, errs map[K]error) (map[K]V, error) {
	if errs != nil {
		return out, &BulkError[K]{Errors: errs}
	}
	return out, nil
}

// dueKey is a key whose record's reload the caller has claimed.
type dueKey[K comparable, V any] struct {
	key K
	r   *record[V]
}

// refreshMany starts background reloads of due keys: with a BulkLoader in
// one call, which takes one slot; otherwise one call, and one slot, per key.
func (c *Cache[K, V]) refreshMany(ctx context.Context, due []dueKey[K, V]) {
	if c.bulk == nil || len(due) == 1 {
		// If a refresh's Clock read panics, refresh gives back its own
		// key's claim as the panic unwinds; the later keys' claims are
		// given back here, or those keys would never be reloaded.
		i := 0
		defer func() {
			if i < len(due) {
				for _, d := range due[i+1:] {
					d.r.refreshing.Store(false)
				}
			}
		}()
		for ; i < len(due); i++ {
			c.refresh(ctx, due[i].key, due[i].r)
		}
		return
	}
	if c.closed.Load() || !c.acquireSlot() {
		for _, d := range due {
			d.r.refreshing.Store(false)
		}
		if !c.closed.Load() {
			c.stats.refreshSkips.Add(uint64(len(due)))
		}
		return
	}
	var fl []*flight[K, V]
	asked := 0
	defer func() {
		if asked == len(due) {
			return
		}
		// refreshFlight's Clock read (the core's Peek) panicked: give
		// back the claims not asked for, and launch the flights already
		// registered (callers may have joined them), or give the slot
		// back, as the panic unwinds.
		for _, d := range due[asked:] {
			d.r.refreshing.Store(false)
		}
		if len(fl) == 0 {
			<-c.slots
			return
		}
		c.launch(ctx, fl, true)
	}()
	for _, d := range due {
		if f := c.refreshFlight(d.key, d.r); f != nil {
			fl = append(fl, f)
		}
		asked++
	}
	if len(fl) == 0 {
		<-c.slots
		return
	}
	c.launch(ctx, fl, true)
}

// launchEach launches a load of each flight of fl, at most c.manyLoads at
// once: the first ones now, each other one as soon as any load of fl has
// finished (or at once when a caller joins it: see flight.deferred, which
// GetMany set on those before it registered them), from a goroutine that
// Close waits for (flights launched after Close finish at once with
// ErrClosed).
func (c *Cache[K, V]) launchEach(ctx context.Context, fl []*flight[K, V]) {
	n := min(len(fl), c.manyLoads)
	if n < len(fl) {
		// One token per finished load launched in its turn (the channel
		// holds them all, so a finishing load never blocks): each queued
		// flight takes one, so it starts when any load ends, not only the
		// one launched c.manyLoads before it, which may be slow. A flight
		// that a caller joined and started early (see flight.deferred)
		// runs beyond the bound, on that caller's behalf: it takes no
		// turn, and gives none back when it ends, so that the GetMany is
		// back within its bound as soon as that load ends.
		freed := make(chan struct{}, len(fl))
		turnEnded := func() { freed <- struct{}{} }
		for _, f := range fl[:n] {
			f.onDone = turnEnded
		}
		c.lifeMu.RLock()
		closed := c.closed.Load()
		if !closed {
			c.loads.Add(1)
		}
		c.lifeMu.RUnlock()
		if closed {
			for _, f := range fl[n:] {
				f.startDeferred() // finishes f with ErrClosed
			}
			fl = fl[:n]
		} else {
			go func() {
				defer c.loads.Done()
				turn := false // a token taken and not yet spent
				for _, f := range fl[n:] {
					if f.deferred.Load() == nil {
						continue // started early by a caller that joined it
					}
					if !turn {
						<-freed
						turn = true
					}
					// A caller may have started f while we waited: then
					// the turn goes to the next queued flight.
					if f.deferred.Swap(nil) != nil {
						f.onDone = turnEnded // before the launch publishes f
						c.launch(ctx, []*flight[K, V]{f}, false)
						turn = false
					}
				}
			}()
		}
	}
	for _, f := range fl[:n] {
		c.launch(ctx, []*flight[K, V]{f}, false)
	}
}
