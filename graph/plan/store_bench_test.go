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
)

// storeConfig is a config for a generated graph of 4 relations in dir.
func storeConfig(tb testing.TB, dir string, parts int) *config.Config {
	tb.Helper()
	var sb strings.Builder
	fmt.Fprintf(&sb, "entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = %q\n", filepath.Join(dir, "ent"), filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt"))
	fmt.Fprintf(&sb, "workers = 2\nbatch_size = 1000\neval_fraction = 0.05\nbucket_order = \"inside_out\"\nseed = 1\n")
	fmt.Fprintf(&sb, "[entities.node]\nnum_partitions = %d\n", parts)
	for r := 0; r < 4; r++ {
		fmt.Fprintf(&sb, "[[relations]]\nname = \"r%d\"\nlhs = \"node\"\nrhs = \"node\"\n", r)
	}
	cfg, err := config.Parse([]byte(sb.String()), "toml")
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// BenchmarkPrepareStore is BenchmarkPrepare reading from an imported edge
// store (10 M edges, 4 relations, 1 M entities, generated and imported into
// b.TempDir() first, not timed): the chunk load is a read of the bucket
// files (from the page cache after the first epoch).
func BenchmarkPrepareStore(b *testing.B) {
	for _, parts := range []int{1, 4} {
		b.Run(fmt.Sprintf("P%d", parts), func(b *testing.B) {
			dir := b.TempDir()
			cfg := storeConfig(b, dir, parts)
			if _, err := importer.GenerateStore(context.Background(), cfg, dir, benchEdges, 1_000_000, 1); err != nil {
				b.Fatal(err)
			}
			st, err := edgestore.Open(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			o := Options{NumEpochs: b.N, MaxEdgesPerChunk: 1e9, BucketOrder: "inside_out", Workers: 2,
				BatchSize: 1000, EvalFraction: 0.05, NumRelations: 4, Seed: 1}
			p := mustPlan(b, st, o)
			b.ResetTimer()
			cpu0 := cpuTime()
			it := mustIter(b, p, p.Start())
			for it.Next() {
			}
			if it.Err() != nil {
				b.Fatal(it.Err())
			}
			reportRates(b, benchEdges, cpu0)
			b.ReportMetric(float64(it.MemoryBytes())/float64(p.maxChunk), "B/edge")
		})
	}
}
