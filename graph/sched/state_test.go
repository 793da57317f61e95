package sched

import (
	"math/rand/v2"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/bucket"
)

// randomPass draws a grid, an order and the first-pass flag.
func randomPass(r *rand.Rand) Pass {
	l, rr := 1+r.IntN(6), 1+r.IntN(6)
	if r.IntN(2) == 0 {
		rr = l
	}
	name := bucket.Names[r.IntN(len(bucket.Names))]
	o, err := bucket.Make(name, l, rr, r)
	if err != nil {
		panic(err)
	}
	return Pass{L: l, R: rr, Order: o, TreeInit: r.IntN(2) == 0}
}

// TestRandomOperations drives a State with random claims, finishes and
// abandons (a holder dying) and checks invariants 1, 2, 3 and 5 after
// every step from its own record of what was given, not from the State.
func TestRandomOperations(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		p := randomPass(r)
		s := NewState(p)
		var held []graph.Bucket
		var given []graph.Bucket
		doneCount := map[graph.Bucket]int{}
		for steps := 0; !s.Complete(); steps++ {
			if steps > 10000 {
				t.Fatalf("seed %d: pass not complete after %d steps", seed, steps)
			}
			switch op := r.IntN(4); {
			case op < 2 || len(held) == 0:
				var prev *graph.Bucket
				if len(given) > 0 && r.IntN(2) == 0 {
					prev = &given[r.IntN(len(given))]
				}
				b, ok := Batchprep(s, prev, 0, 1)
				if !ok {
					// Invariant 5: with nothing held, something is claimable.
					if len(held) == 0 {
						t.Fatalf("seed %d: nothing held, nothing claimable, %d of %d done", seed, s.NumDone(), p.L*p.R)
					}
					continue
				}
				for _, h := range held { // invariant 2
					if shares(h, b) {
						t.Fatalf("seed %d: gave (%d,%d) while (%d,%d) is held", seed, b.Lhs, b.Rhs, h.Lhs, h.Rhs)
					}
				}
				if doneCount[b] > 0 { // invariant 1
					t.Fatalf("seed %d: gave done bucket (%d,%d)", seed, b.Lhs, b.Rhs)
				}
				if p.TreeInit && len(given) > 0 { // invariant 3
					ok := false
					for _, g := range given {
						ok = ok || shares(g, b)
					}
					if !ok {
						t.Fatalf("seed %d: first pass gave (%d,%d), no partition given before", seed, b.Lhs, b.Rhs)
					}
				}
				if err := s.Claim(b); err != nil {
					t.Fatal(err)
				}
				held, given = append(held, b), append(given, b)
			case op == 2:
				i := r.IntN(len(held))
				s.Abandon(held[i])
				held = append(held[:i], held[i+1:]...)
			default:
				i := r.IntN(len(held))
				s.Finish(held[i])
				doneCount[held[i]]++
				held = append(held[:i], held[i+1:]...)
			}
		}
		if len(doneCount) != p.L*p.R {
			t.Fatalf("seed %d: %d buckets done, want %d", seed, len(doneCount), p.L*p.R)
		}
		for b, n := range doneCount {
			if n != 1 {
				t.Fatalf("seed %d: bucket (%d,%d) done %d times", seed, b.Lhs, b.Rhs, n)
			}
		}
	}
}

// TestPreference pins invariant 4 on a case worked by hand: 3x3, order
// lexicographic, prev (2,2): of the claimable buckets those sharing
// partition 2 come first, the earliest in the order among them.
func TestPreference(t *testing.T) {
	s := NewState(Pass{L: 3, R: 3})
	prev := graph.Bucket{Lhs: 2, Rhs: 2}
	if b, _ := Batchprep(s, &prev, 0, 1); b != (graph.Bucket{Lhs: 0, Rhs: 2}) {
		t.Fatalf("got (%d,%d), want (0,2)", b.Lhs, b.Rhs)
	}
	if b, _ := Batchprep(s, nil, 0, 1); b != (graph.Bucket{Lhs: 0, Rhs: 0}) {
		t.Fatalf("got (%d,%d), want (0,0)", b.Lhs, b.Rhs)
	}
	// (0,0) held: buckets touching 0 are locked; (1,2) shares 2 with prev.
	s.MarkHeld(graph.Bucket{})
	if b, _ := Batchprep(s, &prev, 0, 1); b != (graph.Bucket{Lhs: 1, Rhs: 2}) {
		t.Fatalf("got (%d,%d), want (1,2)", b.Lhs, b.Rhs)
	}
	// PBG from scratch: the diagonal (1,1) needs one partition.
	if b, _ := PBG(s, nil, 0, 1); b != (graph.Bucket{Lhs: 1, Rhs: 1}) {
		t.Fatalf("pbg got (%d,%d), want (1,1)", b.Lhs, b.Rhs)
	}
	// PBG after (2,2): (2,2) itself is free in this state and differs by
	// nothing; then (1,2) before (2,1) (one load, one save each).
	if b, _ := PBG(s, &prev, 0, 1); b != (graph.Bucket{Lhs: 2, Rhs: 2}) {
		t.Fatalf("pbg got (%d,%d), want (2,2)", b.Lhs, b.Rhs)
	}
	s.MarkHeld(graph.Bucket{Lhs: 2, Rhs: 2})
	s.Finish(graph.Bucket{Lhs: 2, Rhs: 2})
	if b, _ := PBG(s, &prev, 0, 1); b != (graph.Bucket{Lhs: 1, Rhs: 2}) {
		t.Fatalf("pbg got (%d,%d), want (1,2)", b.Lhs, b.Rhs)
	}
}

// TestOrderPriority: with no previous bucket, the pass's order decides.
func TestOrderPriority(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 50; i++ {
		p := randomPass(r)
		p.TreeInit = false
		s := NewState(p)
		if b, _ := Batchprep(s, nil, 0, 1); b != p.Order[0] {
			t.Fatalf("%+v: first pick (%d,%d), want the order's first (%d,%d)", p, b.Lhs, b.Rhs, p.Order[0].Lhs, p.Order[0].Rhs)
		}
		// Rank 1 of 2 starts half way through the order.
		n := p.L * p.R
		if b, _ := Batchprep(s, nil, 1, 2); b != p.Order[n/2] {
			t.Fatalf("%+v: rank 1 of 2 picks (%d,%d), want the order's place %d", p, b.Lhs, b.Rhs, n/2)
		}
	}
}

// TestTreeInitStartsAtTheOrder: in a first pass every rank reads the order
// from its start, so the first bucket is the order's first whoever claims
// it (a rank reading from its own place would start the embedding space
// where the order puts it late), and later picks are the first claimable
// bucket in the order; in a later pass the ranks read from their own
// places (TestOrderPriority).
func TestTreeInitStartsAtTheOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < 50; i++ {
		p := randomPass(r)
		p.TreeInit = true
		s := NewState(p)
		world := 2 + r.IntN(7)
		for rank := range world {
			if b, ok := Batchprep(s, nil, rank, world); !ok || b != p.Order[0] {
				t.Fatalf("%+v: rank %d of %d picks (%d,%d) first, want the order's first (%d,%d)", p, rank, world, b.Lhs, b.Rhs, p.Order[0].Lhs, p.Order[0].Rhs)
			}
		}
		s.MarkHeld(p.Order[0])
		s.Finish(p.Order[0])
		var want graph.Bucket
		found := false
		for _, c := range p.Order {
			if s.Claimable(c) {
				want, found = c, true
				break
			}
		}
		for rank := range world {
			b, ok := Batchprep(s, nil, rank, world)
			if ok != found || (found && b != want) {
				t.Fatalf("%+v: rank %d of %d after the first bucket picks (%d,%d) %v, want (%d,%d) %v", p, rank, world, b.Lhs, b.Rhs, ok, want.Lhs, want.Rhs, found)
			}
		}
	}
}
