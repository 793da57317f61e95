package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/graph/train/model"
)

// world is a random small graph imported as train, valid and test edge
// sets (one dictionary), with a model of small integer parameters: every
// score is then exact in float32, whatever the order of the sums, so
// that ties are exact and frequent.
type world struct {
	cfg    *config.Config
	store  *edgestore.Store
	m      *model.Model
	parts  map[string][]*model.Table
	files  [3][]Triple
	ev     *Evaluator
	typIdx map[string]int
}

type worldOpts struct {
	parts      int
	dynamic    bool
	disableLhs bool
	seed       uint64
}

func newWorld(t *testing.T, o worldOpts) *world {
	t.Helper()
	rng := rand.New(rand.NewPCG(o.seed, 11))
	dir := t.TempDir()
	rels := `[[relations]]
name = "r0"
lhs = "a"
rhs = "a"
operator = "complex_diagonal"
[[relations]]
name = "r1"
lhs = "a"
rhs = "b"
operator = "translation"
[[relations]]
name = "r2"
lhs = "b"
rhs = "a"
operator = "diagonal"
`
	relNames := []string{"r0", "r1", "r2"}
	if o.dynamic {
		rels = "[[relations]]\nname = \"all\"\nlhs = \"a\"\nrhs = \"a\"\noperator = \"complex_diagonal\"\n"
	}
	doc := fmt.Sprintf(`entity_path = %q
edge_paths = [%q, %q, %q]
edge_roles = ["train", "valid", "test"]
checkpoint_path = %q
dimension = 4
comparator = "dot"
global_emb = false
dynamic_relations = %v
disable_lhs_negs = %v
seed = %d
[entities.a]
num_partitions = %d
[entities.b]
num_partitions = 1
%s`, filepath.Join(dir, "ent"), filepath.Join(dir, "train"), filepath.Join(dir, "valid"), filepath.Join(dir, "test"),
		filepath.Join(dir, "ckpt"), o.dynamic, o.disableLhs, o.seed, o.parts, rels)
	cfg, err := config.Parse([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	w := &world{cfg: cfg, typIdx: map[string]int{}}
	for i, ty := range cfg.EntityTypes() {
		w.typIdx[ty] = i
	}
	// Entities a0.. and b0..; a few appear only in valid or test.
	na, nb := 9+rng.IntN(6), 4
	var paths []string
	for f, n := range []int{40, 12, 15} {
		var sb strings.Builder
		for range n {
			r := relNames[rng.IntN(3)]
			if o.dynamic {
				r = []string{"x", "y", "z", "w"}[rng.IntN(4)]
			}
			side := func(ty string) string {
				if ty == "b" {
					return fmt.Sprintf("b%d", rng.IntN(nb))
				}
				k := na - 3 // a_{na-3..} only outside train
				if f > 0 {
					k = na
				}
				return fmt.Sprintf("a%d", rng.IntN(k))
			}
			lt, rt := "a", "a"
			if !o.dynamic && r == "r1" {
				rt = "b"
			}
			if !o.dynamic && r == "r2" {
				lt = "b"
			}
			tr := Triple{side(lt), r, side(rt)}
			w.files[f] = append(w.files[f], tr)
			fmt.Fprintf(&sb, "%s\t%s\t%s\n", tr.Lhs, tr.Rel, tr.Rhs)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%d.txt", f))
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	io := importer.DefaultOptions()
	io.RelCol = 1
	if _, err := importer.Import(context.Background(), cfg, io, paths); err != nil {
		t.Fatal(err)
	}
	if w.store, err = edgestore.Open(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.store.Close() })
	if w.m, err = train.NewModel(cfg, w.store.NumRelations()); err != nil {
		t.Fatal(err)
	}
	small := func(v []float32) {
		for i := range v {
			v[i] = float32(rng.IntN(5) - 2)
		}
	}
	for _, p := range w.m.Params {
		for _, d := range p {
			if d != nil {
				small(d.P)
			}
		}
	}
	w.parts = map[string][]*model.Table{}
	for _, ty := range cfg.EntityTypes() {
		for p := range cfg.Entities[ty].NumPartitions {
			n, err := w.store.EntityCount(ty, p)
			if err != nil {
				t.Fatal(err)
			}
			tab := &model.Table{Rows: n, Dim: 4, Emb: make([]float32, n*4), Acc: make([]float32, n)}
			small(tab.Emb)
			w.parts[ty] = append(w.parts[ty], tab)
		}
	}
	if w.ev, err = newEvaluator(cfg, w.m, w.parts, w.store); err != nil {
		t.Fatal(err)
	}
	return w
}

// bruteRanks ranks every test triple by names, one score at a time, from
// the per-partition tables: for each ranked side, every entity of the
// candidate type is a candidate; candidates forming a known edge other
// than the true one are removed; ties count against the true entity.
func (w *world) bruteRanks(t *testing.T, test []Triple, known [][]Triple) (all, within [][]float64) {
	t.Helper()
	return w.brute(t, test, known, true)
}

// brute is bruteRanks; unfiltered (filtered false), no candidate but the
// true entity itself is left out.
func (w *world) brute(t *testing.T, test []Triple, known [][]Triple, filtered bool) (all, within [][]float64) {
	t.Helper()
	type loc struct {
		tab *model.Table
		off uint32
	}
	where := map[string]map[string]loc{}
	var names = map[string][]string{}
	for ty, tabs := range w.parts {
		where[ty] = map[string]loc{}
		for p, tab := range tabs {
			nm, err := w.store.EntityNames(ty, p)
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range nm {
				where[ty][n] = loc{tab, uint32(i)}
				names[ty] = append(names[ty], n)
			}
		}
	}
	isKnown := map[Triple]bool{}
	for _, f := range known {
		for _, tr := range f {
			isKnown[tr] = true
		}
	}
	for _, tr := range test {
		isKnown[tr] = true
	}
	relNames, _ := w.store.RelationNames()
	relID := map[string]int{}
	for i, n := range relNames {
		relID[n] = i
	}
	wk := model.NewWorker(w.m)
	emb := func(ty, name string) []float32 {
		l := where[ty][name]
		out := make([]float32, 4)
		wk.Gather(l.tab, w.typIdx[ty], []uint32{l.off}, out)
		return out
	}
	score := func(rhs bool, r int, lt, lhs, rt, rhsName string) float32 {
		out := make([]float32, 1)
		if rhs {
			wk.Scores(true, []uint32{uint32(r)}, emb(lt, lhs), emb(rt, rhsName), 1, 1, out)
		} else {
			wk.Scores(false, []uint32{uint32(r)}, emb(rt, rhsName), emb(lt, lhs), 1, 1, out)
		}
		return out[0]
	}
	for _, rhs := range []bool{true, false} {
		if rhs && w.cfg.DisableRhsNegs || !rhs && w.cfg.DisableLhsNegs {
			continue
		}
		var ranks, part []float64
		for _, tr := range test {
			r := relID[tr.Rel]
			rc := w.cfg.Relations[0]
			if !w.cfg.DynamicRelations {
				rc = w.cfg.Relations[r]
			}
			candType := rc.Rhs
			if !rhs {
				candType = rc.Lhs
			}
			ts := score(rhs, r, rc.Lhs, tr.Lhs, rc.Rhs, tr.Rhs)
			truth := tr.Rhs
			if !rhs {
				truth = tr.Lhs
			}
			rank, rankIn := 1, 1
			for _, c := range names[candType] {
				alt := tr
				if rhs {
					alt.Rhs = c
				} else {
					alt.Lhs = c
				}
				if alt == tr || filtered && isKnown[alt] {
					continue
				}
				if score(rhs, r, rc.Lhs, alt.Lhs, rc.Rhs, alt.Rhs) >= ts {
					rank++
					if where[candType][c].tab == where[candType][truth].tab {
						rankIn++
					}
				}
			}
			ranks, part = append(ranks, float64(rank)), append(part, float64(rankIn))
		}
		all, within = append(all, ranks), append(within, part)
	}
	return all, within
}

// Invariants 1-4 and 7 against a brute-force ranker, on random graphs with
// one and several partitions, an unpartitioned type beside a partitioned
// one, dynamic relations and disable_lhs_negs: the ranks are equal, edge
// by edge, for test edges read from a file and for the stored test edge
// set; entities that appear only in valid or test are ranked too.
func TestRanksEqualBruteForce(t *testing.T) {
	for _, o := range []worldOpts{
		{parts: 1, seed: 1}, {parts: 3, seed: 2}, {parts: 2, dynamic: true, seed: 3},
		{parts: 3, disableLhs: true, seed: 4}, {parts: 4, dynamic: true, disableLhs: true, seed: 5},
	} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			w := newWorld(t, o)
			want, wantIn := w.bruteRanks(t, w.files[2], w.files[:2])
			var rep Report
			got, gotIn := w.ev.ranks(w.ev.Resolve(w.files[2]), []Edges{w.ev.Resolve(w.files[0]), w.ev.Resolve(w.files[1])}, &rep)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ranks differ from the brute force:\n got %v\nwant %v", got, want)
			}
			if !reflect.DeepEqual(gotIn, wantIn) {
				t.Fatalf("ranks within the true entity's partition differ from the brute force:\n got %v\nwant %v", gotIn, wantIn)
			}
			if o.parts > 1 && reflect.DeepEqual(wantIn, want) {
				t.Fatalf("every rank within the partition equals the rank among all: the test proves nothing")
			}
			ties := 0
			for _, rs := range want {
				for _, r := range rs {
					if r > 1 {
						ties++
					}
				}
			}
			if ties == 0 {
				t.Fatalf("every edge ranks first: the test proves nothing")
			}
			// The stored test edge set, filtered against the stored train
			// and valid sets, gives the same ranks (in storage order).
			var stored [3]Edges
			for s := range stored {
				var err error
				if stored[s], err = w.ev.StoredEdges(s); err != nil {
					t.Fatal(err)
				}
			}
			got, _ = w.ev.ranks(stored[2], stored[:2], &rep)
			for i := range want {
				a, b := slices.Clone(got[i]), slices.Clone(want[i])
				slices.Sort(a)
				slices.Sort(b)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("stored edge set: side %d ranks %v, want %v", i, a, b)
				}
			}
			full := w.ev.RankEdges(stored[2], stored[:2]...)
			wantSides := map[bool]string{false: "both", true: "rhs"}[o.disableLhs]
			if full.Unknown != 0 || full.Count != int64(len(want)*len(w.files[2])) || full.Sides != wantSides {
				t.Errorf("report: count %d, unknown %d, sides %q", full.Count, full.Unknown, full.Sides)
			}
			switch {
			case o.parts == 1 && full.WithinPartition != nil:
				t.Errorf("one partition: within_partition reported: %+v", *full.WithinPartition)
			case o.parts > 1 && (full.WithinPartition == nil || full.WithinPartition.Count != full.Count || full.WithinPartition.MRR < full.MRR):
				t.Errorf("within_partition %+v against %+v: want the same count and an MRR at least as high", full.WithinPartition, full.Metrics)
			}
		})
	}
}

// Invariant 6: a true entity whose score is NaN or infinite gets the worst
// rank and is reported; NaN candidates count against the true entity.
func TestNonFiniteScoresRankLast(t *testing.T) {
	w := newWorld(t, worldOpts{parts: 2, seed: 9})
	test := w.files[2][:1]
	// Poison the true lhs entity's embedding.
	tr := test[0]
	ty := w.cfg.Relations[0].Lhs
	if !w.cfg.DynamicRelations {
		id, _ := w.cfg.RelationIndex(tr.Rel)
		ty = w.cfg.Relations[id].Lhs
	}
	ti := w.ev.types[ty]
	row := w.ev.ids[ti][tr.Lhs]
	for k := range 4 {
		w.ev.all[ti].Emb[int(row)*4+k] = float32(math.NaN())
	}
	rep := w.ev.Rank(test)
	if rep.NonFinite != 2 || len(rep.NonFiniteExamples) != 2 || !strings.Contains(rep.NonFiniteExamples[0], tr.Lhs) {
		t.Fatalf("non-finite scores not reported: %+v", rep)
	}
	// Both sides: the rhs side's true score is NaN; on the lhs side the
	// true lhs is NaN too. Each ranks below every candidate of its type.
	rc := w.cfg.Relations[0]
	if !w.cfg.DynamicRelations {
		id, _ := w.cfg.RelationIndex(tr.Rel)
		rc = w.cfg.Relations[id]
	}
	n := func(typ string) int { return len(w.ev.names[w.ev.types[typ]]) }
	if want := 1 / float64(n(rc.Rhs)) / 2 * (1 + float64(n(rc.Rhs))/float64(n(rc.Lhs))); math.Abs(rep.MRR-want) > 1e-12 {
		t.Errorf("MRR %v with NaN scores, want %v (worst ranks)", rep.MRR, want)
	}
}
