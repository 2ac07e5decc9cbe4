package buffer

import "testing"

// A Drain whose callback panics leaves the stripe usable: the elements
// passed stay drained, the rest are passed by the next Drain, and Add
// queues again (the drain emptied a slot and then left head before it,
// where every later drain stopped, taking the empty slot for one a
// producer had claimed: the stripe stayed full, every Add dropped).
func TestStripedDrainPanic(t *testing.T) {
	b := NewStriped[int](1)
	vals := make([]int, stripeSize)
	for i := range vals {
		vals[i] = i
		if r := b.Add(&vals[i], 0); r != Added {
			t.Fatalf("Add %d: %v", i, r)
		}
	}
	func() {
		defer func() { _ = recover() }()
		n := 0
		b.Drain(func(*int) {
			if n++; n == 3 {
				panic("callback")
			}
		})
	}()
	var got []int
	b.Drain(func(p *int) { got = append(got, *p) })
	if len(got) != stripeSize-3 || got[0] != 3 {
		t.Fatalf("after the panic Drain passed %v; want %d..%d", got, 3, stripeSize-1)
	}
	extra := 7
	if r := b.Add(&extra, 0); r != Added {
		t.Fatalf("Add after the drains: %v; want Added", r)
	}
	got = got[:0]
	b.Drain(func(p *int) { got = append(got, *p) })
	if len(got) != 1 || got[0] != 7 {
		t.Fatalf("Drain passed %v; want [7]", got)
	}
}
