package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/internal/shared"
)

// FB15k-237 and the SNAP graphs import and plan with 1,
// 4 and 16 partitions. Each case imports the real file (FB15k-237's relation
// ids from its data), plans one epoch (relation-sampled batches over
// FB15k-237's 237 relations, each batch checked to hold one relation; dynamic
// batches for the SNAP graphs' single relation), and checks that every edge ordinal of the
// file is listed exactly once, trained or held out, and that the holdout is
// floor(n * eval_fraction) per bucket chunk. Edge counts are those of
// ../shared/data/README.md.
func TestRealGraphsPlan(t *testing.T) {
	cases := []struct {
		rel     []string // path under ../shared/data
		edges   int
		typed   bool // relation column 1, relations from the data
		parts   []int
		spaceFS bool
	}{
		{[]string{"kg", "fb15k-237", "train.txt"}, 272115, true, []int{1, 4, 16}, false},
		{[]string{"graphs", "facebook_combined.txt"}, 88234, false, []int{16}, true},
		{[]string{"graphs", "wiki-Vote.txt"}, 103689, false, []int{4}, true},
		{[]string{"graphs", "ca-GrQc.txt"}, 28980, false, []int{1, 16}, true},
		{[]string{"graphs", "email-Eu-core.txt"}, 25571, false, []int{4}, true},
		{[]string{"graphs", "p2p-Gnutella08.txt"}, 20777, false, []int{16}, true},
	}
	for _, c := range cases {
		for _, P := range c.parts {
			name := fmt.Sprintf("%s/P=%d", c.rel[len(c.rel)-1], P)
			t.Run(name, func(t *testing.T) {
				src := shared.Need(t, c.rel...)
				dir := t.TempDir()
				var sb strings.Builder
				fmt.Fprintf(&sb, "entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = %q\n",
					filepath.Join(dir, "ent"), filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt"))
				fmt.Fprintf(&sb, "num_epochs = 1\nworkers = 2\nbatch_size = 1000\neval_fraction = 0.05\nseed = 3\n")
				fmt.Fprintf(&sb, "dynamic_relations = %v\n[entities.node]\nnum_partitions = %d\n", c.typed, P)
				sb.WriteString("[[relations]]\nname = \"edge\"\nlhs = \"node\"\nrhs = \"node\"\n")
				cfg, err := config.Parse([]byte(sb.String()), "toml")
				if err != nil {
					t.Fatal(err)
				}
				opts := importer.DefaultOptions()
				if c.typed {
					opts.RelCol = 1
				} else {
					opts.RhsCol = 1
				}
				if c.spaceFS {
					if opts.Delimiter, err = importer.ParseDelimiter("space"); err != nil {
						t.Fatal(err)
					}
				}
				st := importStore(t, cfg, opts, src)
				if l, r := st.Partitions(); l != P || r != P {
					t.Fatalf("store has %dx%d partitions, want %dx%d", l, r, P, P)
				}
				o := Options{NumEpochs: 1, MaxEdgesPerChunk: cfg.MaxEdgesPerChunk, BucketOrder: cfg.BucketOrder,
					Workers: 2, BatchSize: cfg.BatchSize, EvalFraction: cfg.EvalFraction,
					DynamicRelations: !c.typed, NumRelations: st.NumRelations(), Seed: cfg.Seed}
				p := mustPlan(t, st, o)
				seen := make([]uint8, c.edges)
				buckets, held := 0, 0
				it := mustIter(t, p, p.Start())
				var ords []uint64
				for it.Next() {
					r := it.Record()
					if r.Kind == BucketRecord {
						buckets++
						if want := HoldoutCount(r.Edges, o.EvalFraction); len(r.Holdout) != want {
							t.Fatalf("bucket %v: %d held out of %d, want %d", r.Bucket, len(r.Holdout), r.Edges, want)
						}
						held += len(r.Holdout)
					}
					if r.Kind == BatchRecord && c.typed {
						for _, row := range r.Rows {
							if int(r.Data.Rel[row]) != r.Relation {
								t.Fatalf("batch of relation %d holds an edge of relation %d", r.Relation, r.Data.Rel[row])
							}
						}
					}
					ords = r.Ordinals(ords[:0], r.Rows)
					if r.Kind == BucketRecord {
						ords = r.Ordinals(ords[:0], r.Holdout)
					}
					for _, x := range ords {
						if x >= uint64(c.edges) {
							t.Fatalf("ordinal %d out of range %d", x, c.edges)
						}
						seen[x]++
					}
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				if buckets != P*P {
					t.Errorf("%d bucket records, want %d", buckets, P*P)
				}
				for x, n := range seen {
					if n != 1 {
						t.Fatalf("ordinal %d listed %d times in the epoch", x, n)
					}
				}
				if held == 0 {
					t.Error("nothing held out")
				}
			})
		}
	}
}

// importStore imports src into cfg's store and opens it; the store is
// closed when the test ends.
func importStore(t *testing.T, cfg *config.Config, opts importer.Options, src string) *edgestore.Store {
	t.Helper()
	if _, err := importer.Import(context.Background(), cfg, opts, []string{src}); err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
