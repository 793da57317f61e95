package importer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
)

// bucketize gives the same order and columns for any number of cores, and
// they are a stable sort of the edges by bucket (the order of the
// one-goroutine importer) with the ids replaced by offsets.
func TestBucketizeSameForAnyCores(t *testing.T) {
	doc := "entity_path = \"e\"\nedge_paths = [\"s\"]\ncheckpoint_path = \"c\"\n[entities.a]\nnum_partitions = 3\n[entities.b]\nnum_partitions = 3\n" +
		"[[relations]]\nname = \"x\"\nlhs = \"a\"\nrhs = \"b\"\n[[relations]]\nname = \"y\"\nlhs = \"b\"\nrhs = \"a\"\n"
	cfg, err := config.Parse([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	const n = 4*minPerWorker + 123
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "n%d\t%s\tn%d\n", r.IntN(5000), []string{"x", "y"}[r.IntN(2)], r.IntN(5000))
	}
	o := DefaultOptions()
	o.RelCol = 1
	L, R := cfg.BucketShape()
	var ref []uint32
	var refStarts []int
	var refL, refR, refRel []uint32
	for _, cores := range []int{1, 2, 3, 7} {
		p, fe, err := parseString(t, cfg, o, sb.String())
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []string{"a", "b"} {
			p.dicts[typ].partition(cfg.Seed, cfg.Entities[typ].NumPartitions)
		}
		ids := [2][]uint32{slices.Clone(fe.lhs), slices.Clone(fe.rhs)}
		rels := slices.Clone(fe.rel)
		order, starts := bucketize(p, fe, L*R, R, cores)
		if cores == 1 {
			// The reference: a stable sort by bucket of the ids' locations.
			loc := func(k int) (uint64, uint64) {
				d := p.relDicts[rels[k]]
				return d[0].loc[ids[0][k]], d[1].loc[ids[1][k]]
			}
			want := make([]uint32, n)
			for k := range want {
				want[k] = uint32(k)
			}
			slices.SortStableFunc(want, func(a, b uint32) int {
				la, ra := loc(int(a))
				lb, rb := loc(int(b))
				return int(la>>32)*R + int(ra>>32) - (int(lb>>32)*R + int(rb>>32))
			})
			if !slices.Equal(order, want) {
				t.Fatal("order is not a stable sort by bucket")
			}
			for pos, k := range order {
				if l, rr := loc(int(k)); fe.lhs[pos] != uint32(l) || fe.rhs[pos] != uint32(rr) || fe.rel[pos] != rels[k] {
					t.Fatalf("edge %d at %d: offsets %d %d relation %d, want %d %d %d", k, pos, fe.lhs[pos], fe.rhs[pos], fe.rel[pos], uint32(l), uint32(rr), rels[k])
				}
			}
			ref, refStarts, refL, refR, refRel = order, starts, fe.lhs, fe.rhs, fe.rel
			continue
		}
		if !slices.Equal(order, ref) || !slices.Equal(starts, refStarts) || !slices.Equal(fe.lhs, refL) || !slices.Equal(fe.rhs, refR) || !slices.Equal(fe.rel, refRel) {
			t.Fatalf("%d cores: a different result than 1", cores)
		}
	}
}
