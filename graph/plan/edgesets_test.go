package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
)

// A plan over some of a store's edge sets (Options.EdgeSets, the train
// edge sets of edge_roles) is the plan of a store holding only those: the
// other edge sets are never read, so nothing is trained on them.
func TestPlanWalksSelectedEdgeSets(t *testing.T) {
	all := testGraph(2, 2, 3, 30, 3, false, 5)
	only := &MemReader{L: 2, R: 2, Sets: all.Sets[2:3]}
	o := testOptions()
	want := collect(t, mustIter(t, mustPlan(t, only, o), mustPlan(t, only, o).Start()), -1)
	o.EdgeSets = []int{2}
	p := mustPlan(t, all, o)
	if p.NumEdgeSets() != 1 || p.StoreEdgeSet(0) != 2 {
		t.Fatalf("plan walks %d edge sets, the first is the store's %d", p.NumEdgeSets(), p.StoreEdgeSet(0))
	}
	if got := collect(t, mustIter(t, p, p.Start()), -1); !reflect.DeepEqual(got, want) {
		t.Errorf("plan over edge set 2 of 3 differs from a plan over a store of that set alone (%d and %d records)", len(got), len(want))
	}
	if p.EdgesPerEpoch() == mustPlan(t, all, testOptions()).EdgesPerEpoch() {
		t.Errorf("EdgesPerEpoch counts edge sets the plan does not walk")
	}
	o.EdgeSets = []int{}
	if _, err := New(all, o); err == nil || !strings.Contains(err.Error(), "no edge set to walk") {
		t.Errorf("empty selection: %v", err)
	}
	o.EdgeSets = []int{3}
	if _, err := New(all, o); err == nil || !strings.Contains(err.Error(), "edge set 3: the store has 3") {
		t.Errorf("selection past the store: %v", err)
	}
}

// OptionsFromConfig selects the train edge sets of edge_roles, and all
// edge sets when edge_roles is unset.
func TestOptionsSelectTrainEdgeSets(t *testing.T) {
	doc := `entity_path = "e"
edge_paths = ["train", "valid", "test"]
%s
[entities.n]
num_partitions = 1
[[relations]]
name = "r"
lhs = "n"
rhs = "n"
`
	for roles, want := range map[string][]int{"": nil, `edge_roles = ["train", "valid", "test"]`: {0}, `edge_roles = ["test", "train", "train"]`: {1, 2}} {
		c, err := config.Parse([]byte(strings.Replace(doc, "%s", roles, 1)), "toml")
		if err != nil {
			t.Fatal(err)
		}
		if got := OptionsFromConfig(c).EdgeSets; !reflect.DeepEqual(got, want) {
			t.Errorf("%q: EdgeSets %v, want %v", roles, got, want)
		}
	}
}
