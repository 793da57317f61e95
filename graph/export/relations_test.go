package export

import (
	"fmt"
	"testing"

	"github.com/batchprep/batchprep/graph/train/model"
)

// Invariant 3: every relation's parameters, by id, side rhs (model side 0)
// then lhs (side 1, dynamic relations only), with the relation's name, its
// entity types and its operator; copies, not the model's own slices.
func TestRelations(t *testing.T) {
	for _, dynamic := range []bool{false, true} {
		diag, _ := model.NewOperator("diagonal", 2)
		none, _ := model.NewOperator("none", 2)
		m, err := model.New(model.Settings{Dim: 2, Comparator: "dot", Loss: "softmax", Dynamic: dynamic},
			[]model.Relation{{Op: diag, Lhs: 1, Rhs: 0}, {Op: none, Lhs: 0, Rhs: 0}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		m.Params[0][0].P[1] = 3
		if dynamic {
			m.Params[0][1].P[0] = -2
		}
		rels, err := Relations(m, []string{"likes", "is"}, []string{"item", "user"})
		if err != nil {
			t.Fatal(err)
		}
		want := "[{likes user item rhs diagonal [1 3]} {is item item rhs none []}]"
		if dynamic {
			want = "[{likes user item rhs diagonal [1 3]} {likes user item lhs diagonal [-2 1]} {is item item rhs none []} {is item item lhs none []}]"
		}
		if got := fmt.Sprint(rels); got != want {
			t.Errorf("dynamic %v: %s, want %s", dynamic, got, want)
		}
		rels[0].Params[0] = 99
		if m.Params[0][0].P[0] != 1 {
			t.Error("Relations shares the model's parameters")
		}
		if _, err := Relations(m, []string{"likes"}, []string{"item", "user"}); err == nil {
			t.Error("one name for two relations: no error")
		}
	}
}
