package gcimpact

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachekit/cachekit/bench/internal/histogram"
)

// The churn and the request loop run in ticks of a millisecond; a rate
// that is not a multiple of 1000 per second must still be kept (it was
// rounded down to whole operations per tick, and raised to one per tick:
// -churn 500 churned 1000 Sets/s, -requests 2500 sent 2000/s).
func TestRatesNotMultiplesOfATick(t *testing.T) {
	for _, rate := range []int{1, 500, 1500, 2500, 4000} {
		t.Run(strconv.Itoa(rate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					stop          atomic.Bool
					wg            sync.WaitGroup
					churned, reqs uint64
					hist          histogram.Histogram
				)
				wg.Go(func() { churned = churn(nil, Job{ChurnRate: rate, ValueBytes: 1}, &stop) })
				wg.Go(func() { reqs = requests(rate, &hist, &stop) })
				// Half a tick past 2 s, so that no tick is due as the loops stop.
				time.Sleep(2*time.Second + time.Millisecond/2)
				stop.Store(true)
				wg.Wait()
				// 2 s of ticks, and the one at the start.
				lo, hi := uint64(2*rate), uint64(2*rate+rate/1000+1)
				if churned < lo || churned > hi {
					t.Errorf("churn at %d/s did %d Sets in 2 s, want %d to %d", rate, churned, lo, hi)
				}
				if reqs < lo || reqs > hi {
					t.Errorf("request loop at %d/s did %d requests in 2 s, want %d to %d", rate, reqs, lo, hi)
				}
			})
		})
	}
}
