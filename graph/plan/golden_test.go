package plan

import (
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/golden"
)

// Invariant 7: pins the exact plan of a small graph for each bucket order
// and both batching modes (regenerate with go test -run Golden -update
// only when a change of every plan is intended and documented).
func TestGolden(t *testing.T) {
	g := testGraph(2, 3, 2, 30, 3, false, 11)
	var sb strings.Builder
	for _, order := range []string{"random", "affinity", "inside_out", "outside_in"} {
		for _, dyn := range []bool{false, true} {
			o := testOptions()
			o.BucketOrder, o.DynamicRelations, o.NumEpochs, o.NumEdgeChunks = order, dyn, 1, 2
			p := mustPlan(t, g, o)
			sb.WriteString("# " + order + map[bool]string{false: "", true: " dynamic"}[dyn] + "\n")
			for _, l := range collect(t, mustIter(t, p, p.Start()), -1) {
				sb.WriteString(l + "\n")
			}
		}
	}
	golden.Check(t, "plan.golden", sb.String())
}
