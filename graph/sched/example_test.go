package sched_test

import (
	"fmt"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/sched"
)

// Two trainers on a 3x3 grid, first pass, every bucket one time unit:
// the schedule and the idle time under batchprep's policy and PBG's.
func ExampleSimulate() {
	passes := []sched.Pass{{L: 3, R: 3, TreeInit: true}}
	unit := func(int, graph.Bucket) float64 { return 1 }
	for _, name := range []string{"batchprep", "pbg"} {
		res, err := sched.Simulate(passes, 2, sched.Policies[name], unit)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: makespan %g, idle %g\n", name, res.Makespan, res.Idle)
		for _, e := range res.Events {
			fmt.Printf("  t%d (%d,%d) at %g\n", e.Trainer, e.Bucket.Lhs, e.Bucket.Rhs, e.Start)
		}
	}
	// Output:
	// batchprep: makespan 7, idle 5
	//   t0 (0,0) at 0
	//   t1 (0,1) at 1
	//   t0 (0,2) at 2
	//   t1 (1,1) at 2
	//   t0 (1,0) at 3
	//   t1 (2,2) at 3
	//   t0 (1,2) at 4
	//   t1 (2,0) at 5
	//   t0 (2,1) at 6
	// pbg: makespan 7, idle 5
	//   t0 (0,0) at 0
	//   t1 (0,1) at 1
	//   t0 (0,2) at 2
	//   t1 (1,1) at 2
	//   t0 (2,0) at 3
	//   t1 (1,0) at 4
	//   t0 (2,2) at 4
	//   t0 (1,2) at 5
	//   t1 (2,1) at 6
}
