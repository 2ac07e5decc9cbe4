package node

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

func keys(l *List) []uint64 {
	var out []uint64
	for n := l.Front(); n != nil; n = n.Next() {
		out = append(out, KeyedHash(n))
	}
	return out
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestList(t *testing.T) {
	var l List
	n := make([]*Node, 5)
	for i := range n {
		n[i] = NewKeyed(uint64(i), uint32(i+1))
	}
	l.PushBack(n[1])
	l.PushBack(n[2])
	l.PushFront(n[0])
	if got := keys(&l); !equal(got, []uint64{0, 1, 2}) || l.Len() != 3 || l.Weight() != 6 {
		t.Fatalf("list %v len %d weight %d", got, l.Len(), l.Weight())
	}
	l.MoveToBack(n[0])
	if got := keys(&l); !equal(got, []uint64{1, 2, 0}) {
		t.Fatalf("after MoveToBack: %v", got)
	}
	l.Replace(n[2], n[3])
	if got := keys(&l); !equal(got, []uint64{1, 3, 0}) || l.Weight() != 2+4+1 {
		t.Fatalf("after Replace: %v weight %d", got, l.Weight())
	}
	if n[2].Next() != nil || n[2].Prev() != nil {
		t.Fatal("replaced node keeps its links")
	}
	l.Remove(n[1])
	l.Remove(n[0])
	if got := keys(&l); !equal(got, []uint64{3}) || l.Front() != n[3] || l.Back() != n[3] {
		t.Fatalf("after Remove: %v", got)
	}
	l.Remove(n[3])
	if l.Len() != 0 || l.Weight() != 0 || l.Front() != nil || l.Back() != nil {
		t.Fatal("list not empty")
	}
}

// TestWalk checks walks over three lists under random changes: WalkNext
// returns only nodes in its list, and once every list is exhausted at the
// same time, every node in the lists has been returned at least once since
// the walks started (a node that replaced a returned one counts as
// returned).
func TestWalk(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var lists [3]List
		in := map[*Node]int{} // node -> its list
		var nodes []*Node     // nodes in some list, in no order
		next := uint64(0)
		fresh := func() *Node { next++; return NewKeyed(next, 1) }
		add := func(n *Node, i int, front bool) {
			if front {
				lists[i].PushFront(n)
			} else {
				lists[i].PushBack(n)
			}
			in[n] = i
			nodes = append(nodes, n)
		}
		drop := func(j int) *Node {
			n := nodes[j]
			lists[in[n]].Remove(n)
			delete(in, n)
			nodes[j] = nodes[len(nodes)-1]
			nodes = nodes[:len(nodes)-1]
			return n
		}
		for range 30 {
			add(fresh(), rng.IntN(3), false)
		}
		for i := range lists {
			lists[i].StartWalk()
		}
		visited := map[*Node]bool{}
		steps := 0
		for ; ; steps++ {
			if steps > 100_000 {
				t.Fatalf("seed %d: walk not over after %d steps", seed, steps)
			}
			switch op := rng.IntN(10); {
			case op < 2:
				add(fresh(), rng.IntN(3), rng.IntN(8) == 0)
			case op < 3 && len(nodes) > 0:
				drop(rng.IntN(len(nodes)))
			case op < 4 && len(nodes) > 0:
				n := nodes[rng.IntN(len(nodes))]
				lists[in[n]].MoveToBack(n)
			case op < 5 && len(nodes) > 0:
				add(drop(rng.IntN(len(nodes))), rng.IntN(3), false)
			case op < 6 && len(nodes) > 0:
				j := rng.IntN(len(nodes))
				old, n := nodes[j], fresh()
				lists[in[old]].Replace(old, n)
				in[n] = in[old]
				delete(in, old)
				nodes[j] = n
				if visited[old] {
					visited[n] = true
				}
			default:
				done := true
				for i := range lists {
					n := lists[i].WalkNext()
					if n == nil {
						continue
					}
					done = false
					if j, ok := in[n]; !ok || j != i {
						t.Fatalf("seed %d: list %d's walk returned a node not in it", seed, i)
					}
					visited[n] = true
				}
				if !done {
					continue
				}
				for _, n := range nodes {
					if !visited[n] {
						t.Fatalf("seed %d, step %d: the walk is over, node %d never visited", seed, steps, KeyedHash(n))
					}
				}
				for i := range lists {
					if !lists[i].Walking() {
						t.Fatalf("seed %d: list %d stopped walking by itself", seed, i)
					}
					lists[i].EndWalk()
					if lists[i].Walking() || lists[i].WalkNext() != nil {
						t.Fatalf("seed %d: list %d still walking after EndWalk", seed, i)
					}
				}
			}
			if !lists[0].Walking() {
				break
			}
		}
		t.Logf("seed %d: walk over after %d steps, %d nodes", seed, steps, len(nodes))
	}
}

// TestSize pins the node's size: it is part of every cache entry and of
// every key of the miniature simulations, so growing it costs memory.
func TestSize(t *testing.T) {
	want := uintptr(16 + 8) // two links, Weight+Queue+Flags+Tag+Mark
	if unsafe.Sizeof(uintptr(0)) == 4 {
		want = 8 + 8
	}
	if got := unsafe.Sizeof(Node{}); got != want {
		t.Errorf("Sizeof(Node) = %d, want %d", got, want)
	}
}
