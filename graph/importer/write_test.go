package importer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
)

// bucketize gives the same rows for any number of cores, and they are a
// stable sort of the edges by bucket (the order of the one-goroutine
// importer) with the ids replaced by offsets.
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
	var ref []edgeRow
	var refStarts []int
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
		rows, starts := bucketize(p, fe, L*R, R, cores)
		if cores == 1 {
			// The reference: a stable sort by bucket of the ids' locations.
			loc := func(k int) (uint64, uint64) {
				d := p.relDicts[rels[k]]
				return d[0].loc[ids[0][k]], d[1].loc[ids[1][k]]
			}
			bucket := func(k int) int {
				l, r := loc(k)
				return int(l>>32)*R + int(r>>32)
			}
			want := make([]int, n)
			for k := range want {
				want[k] = k
			}
			slices.SortStableFunc(want, func(a, b int) int { return bucket(a) - bucket(b) })
			for pos, k := range want {
				l, r := loc(k)
				w := edgeRow{lhs: uint32(l), rhs: uint32(r), rel: rels[k], idx: uint32(k)}
				if rows[pos] != w {
					t.Fatalf("row %d: %+v, want %+v", pos, rows[pos], w)
				}
				if b := bucket(k); pos < starts[b] || pos >= starts[b+1] {
					t.Fatalf("row %d (bucket %d) outside [%d, %d)", pos, b, starts[b], starts[b+1])
				}
			}
			ref, refStarts = rows, starts
			continue
		}
		if !slices.Equal(rows, ref) || !slices.Equal(starts, refStarts) {
			t.Fatalf("%d cores: a different result than 1", cores)
		}
	}
}
