package sched

import (
	"fmt"

	"github.com/batchprep/batchprep/graph"
)

// SimEvent is one bucket run in a simulation.
type SimEvent struct {
	Pass       int // index into the passes given to Simulate
	Trainer    int
	Bucket     graph.Bucket
	Start, End float64
}

// SimResult is the outcome of Simulate.
type SimResult struct {
	Events   []SimEvent // in the order the buckets were given
	Makespan float64    // end of the last bucket
	Busy     float64    // sum of bucket times
	Idle     float64    // Trainers*Makespan - Busy
	// IdlePerTrainer is each trainer's idle time.
	IdlePerTrainer []float64
}

// IdleFraction is Idle / (Trainers * Makespan), 0 for an empty run.
func (r *SimResult) IdleFraction() float64 {
	if r.Makespan == 0 {
		return 0
	}
	return r.Idle / (r.Idle + r.Busy)
}

// Simulate runs w trainers over passes under policy, a bucket of pass i
// taking cost(i, bucket) time units (>= 0). Trainers are asked in a fixed
// order: at each instant the trainers that are free, by the time they
// became free, then by rank; a trainer that is given nothing waits for the
// next bucket to end. A pass starts when every bucket of the previous one
// has ended (invariant 6). Each trainer's previous bucket is forgotten at a
// pass boundary.
func Simulate(passes []Pass, w int, policy Policy, cost func(pass int, b graph.Bucket) float64) (*SimResult, error) {
	if w < 1 {
		return nil, fmt.Errorf("sched: simulate: %d trainers", w)
	}
	res := &SimResult{IdlePerTrainer: make([]float64, w)}
	busy := make([]float64, w)
	now := 0.0
	for pi, p := range passes {
		s := NewState(p)
		type run struct {
			b   graph.Bucket
			end float64
			on  bool
		}
		runs := make([]run, w)
		prev := make([]*graph.Bucket, w)
		freeSince := make([]float64, w)
		for t := range freeSince {
			freeSince[t] = now
		}
		for !s.Complete() {
			// Give buckets to the free trainers, earliest-free first.
			for {
				t := -1
				for i := range runs {
					if !runs[i].on && (t < 0 || freeSince[i] < freeSince[t]) {
						t = i
					}
				}
				if t < 0 {
					break
				}
				b, ok := policy(s, prev[t], t, w)
				if !ok {
					break
				}
				if err := s.Claim(b); err != nil {
					return nil, fmt.Errorf("sched: policy gave an unclaimable bucket: %w", err)
				}
				c := cost(pi, b)
				if c < 0 {
					return nil, fmt.Errorf("sched: pass %d bucket (%d,%d): negative cost %v", pi, b.Lhs, b.Rhs, c)
				}
				runs[t] = run{b: b, end: now + c, on: true}
				res.Events = append(res.Events, SimEvent{Pass: pi, Trainer: t, Bucket: b, Start: now, End: now + c})
				busy[t] += c
				freeSince[t] = now + c // the order among trainers freed later
			}
			next := -1.0
			for _, r := range runs {
				if r.on && (next < 0 || r.end < next) {
					next = r.end
				}
			}
			if next < 0 {
				return nil, fmt.Errorf("sched: pass %d stuck with %d of %d buckets done", pi, s.NumDone(), p.L*p.R)
			}
			now = next
			for t := range runs {
				if runs[t].on && runs[t].end == now {
					s.Finish(runs[t].b)
					b := runs[t].b
					prev[t], runs[t].on = &b, false
				}
			}
		}
	}
	res.Makespan = now
	for t := range busy {
		res.Busy += busy[t]
		res.IdlePerTrainer[t] = now - busy[t]
		res.Idle += res.IdlePerTrainer[t]
	}
	return res, nil
}
