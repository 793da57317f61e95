package sched

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
)

// checkSim checks invariant 6 and invariants 1-3 from the events alone.
func checkSim(t *testing.T, passes []Pass, w int, res *SimResult) {
	t.Helper()
	byPass := make([][]SimEvent, len(passes))
	for _, e := range res.Events {
		byPass[e.Pass] = append(byPass[e.Pass], e)
	}
	passEnd := 0.0
	busy := 0.0
	for pi, evs := range byPass {
		p := passes[pi]
		seen := map[graph.Bucket]bool{}
		end := passEnd
		for i, e := range evs {
			busy += e.End - e.Start
			if seen[e.Bucket] {
				t.Fatalf("pass %d: bucket %v twice", pi, e.Bucket)
			}
			seen[e.Bucket] = true
			if e.Start < passEnd {
				t.Fatalf("pass %d starts at %v before the previous pass ended at %v", pi, e.Start, passEnd)
			}
			end = math.Max(end, e.End)
			for _, f := range evs[:i] {
				if f.Trainer == e.Trainer && f.End > e.Start {
					t.Fatalf("trainer %d runs two buckets at once", e.Trainer)
				}
				if shares(f.Bucket, e.Bucket) && f.Start < e.End && e.Start < f.End && f.End > f.Start && e.End > e.Start {
					t.Fatalf("pass %d: %v and %v share a partition and overlap", pi, f.Bucket, e.Bucket)
				}
			}
			if p.TreeInit && i > 0 {
				ok := false
				for _, f := range evs[:i] {
					ok = ok || shares(f.Bucket, e.Bucket)
				}
				if !ok {
					t.Fatalf("pass %d: %v given with no partition given before", pi, e.Bucket)
				}
			}
		}
		if len(seen) != p.L*p.R {
			t.Fatalf("pass %d: %d buckets ran, want %d", pi, len(seen), p.L*p.R)
		}
		passEnd = end
	}
	if math.Abs(passEnd-res.Makespan) > 1e-9 || math.Abs(busy+res.Idle-float64(w)*res.Makespan) > 1e-6*math.Max(1, res.Makespan) {
		t.Fatalf("makespan %v (events say %v), busy %v + idle %v != %d * makespan", res.Makespan, passEnd, busy, res.Idle, w)
	}
}

func TestSimulateRandom(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 2))
		var passes []Pass
		for i := 0; i < 1+r.IntN(3); i++ {
			p := randomPass(r)
			if i > 0 {
				p.L, p.R, p.TreeInit = passes[0].L, passes[0].R, false
				p.Order = nil
			}
			passes = append(passes, p)
		}
		costs := map[[3]int]float64{}
		cost := func(pi int, b graph.Bucket) float64 {
			k := [3]int{pi, b.Lhs, b.Rhs}
			if _, ok := costs[k]; !ok {
				costs[k] = float64(r.IntN(5))
			}
			return costs[k]
		}
		w := 1 + r.IntN(8)
		for name, pol := range Policies {
			res, err := Simulate(passes, w, pol, cost)
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, name, err)
			}
			checkSim(t, passes, w, res)
			again, _ := Simulate(passes, w, pol, cost)
			if fmt.Sprint(again.Events) != fmt.Sprint(res.Events) {
				t.Fatalf("seed %d %s: not deterministic", seed, name)
			}
		}
	}
}

// TestSimulateGolden pins a small schedule worked by hand: 2x2,
// lexicographic order, first pass, unit costs, 2 trainers. Trainer 0 gets
// (0,0); every other bucket shares partition 0 and waits. At 1, trainer 1
// (free since 0) is asked first: in the first pass every rank reads the
// order from its start, so it gets (0,1); trainer 0 waits ((1,0) and (1,1)
// share 0 or 1). At 2, trainer 0 (free since 1) gets (1,0), which shares
// 0 with its (0,0); (1,1) waits for it and goes to trainer 1 (free since
// 2) at 3.
func TestSimulateGolden(t *testing.T) {
	res, err := Simulate([]Pass{{L: 2, R: 2, TreeInit: true}}, 2, Batchprep, func(int, graph.Bucket) float64 { return 1 })
	if err != nil {
		t.Fatal(err)
	}
	got := events(res)
	want := "t0 (0,0) 0-1\nt1 (0,1) 1-2\nt0 (1,0) 2-3\nt1 (1,1) 3-4\n"
	if got != want || res.Makespan != 4 || res.Idle != 4 {
		t.Fatalf("got\n%smakespan %v idle %v\nwant\n%s", got, res.Makespan, res.Idle, want)
	}
}

// TestSimulateGoldenLaterPass pins the rank offset of later passes: the
// same grid without the first-pass rule. Trainer 0 reads the order from
// place 0 and gets (0,0); trainer 1 reads it from place 2, finds (1,0)
// locked and gets (1,1). At 1 both are free and asked by rank: trainer 0
// gets (0,1), the first bucket sharing a partition with (0,0); (1,0)
// shares partition 1 with it and goes to trainer 1 at 2.
func TestSimulateGoldenLaterPass(t *testing.T) {
	res, err := Simulate([]Pass{{L: 2, R: 2}}, 2, Batchprep, func(int, graph.Bucket) float64 { return 1 })
	if err != nil {
		t.Fatal(err)
	}
	got := events(res)
	want := "t0 (0,0) 0-1\nt1 (1,1) 0-1\nt0 (0,1) 1-2\nt1 (1,0) 2-3\n"
	if got != want || res.Makespan != 3 || res.Idle != 2 {
		t.Fatalf("got\n%smakespan %v idle %v\nwant\n%s", got, res.Makespan, res.Idle, want)
	}
}

// events lists a simulation's bucket runs, one line each.
func events(res *SimResult) string {
	var sb strings.Builder
	for _, e := range res.Events {
		fmt.Fprintf(&sb, "t%d (%d,%d) %g-%g\n", e.Trainer, e.Bucket.Lhs, e.Bucket.Rhs, e.Start, e.End)
	}
	return sb.String()
}
