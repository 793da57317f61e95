package importer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/gen"
)

// powerLawSize is the graph of BenchmarkImportPowerLaw: 10 M edges over
// 1 M entities by default, LiveJournal's size (69 M edges, 4.8 M
// entities) with BATCHPREP_SCALE=1; BENCH_EDGES=N shrinks it for a quick
// run (entities N/10).
func powerLawSize() gen.Params {
	p := gen.Params{Entities: 1_000_000, Edges: 10_000_000, Relations: 1, Zipf: 0.8, Seed: 1}
	if os.Getenv("BATCHPREP_SCALE") == "1" {
		p.Entities, p.Edges = 4_800_000, 69_000_000
	}
	if s := os.Getenv("BENCH_EDGES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			p.Edges, p.Entities = n, max(1, n/10)
		}
	}
	return p
}

// BenchmarkImportPowerLaw measures an end-to-end import (parse, dictionary,
// partition, write, fsync) of a generated power-law graph (package gen,
// zipf 0.8, 1 relation, in the TSV that bench/gengraph writes), with 1 and
// 8 partitions. Reported: edges/s and edges per CPU-second.
func BenchmarkImportPowerLaw(b *testing.B) {
	p := powerLawSize()
	dir := b.TempDir()
	in := filepath.Join(dir, "edges.tsv")
	f, err := os.Create(in)
	if err != nil {
		b.Fatal(err)
	}
	if err := gen.WriteTSV(f, p); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(in)
	for _, parts := range []int{1, 8} {
		b.Run(fmt.Sprintf("P=%d", parts), func(b *testing.B) {
			out := b.TempDir()
			doc := fmt.Sprintf("entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = \"c\"\n[entities.n]\nnum_partitions = %d\n"+
				"[[relations]]\nname = \"r0\"\nlhs = \"n\"\nrhs = \"n\"\n", filepath.Join(out, "ent"), filepath.Join(out, "edges"), parts)
			cfg, err := config.Parse([]byte(doc), "toml")
			if err != nil {
				b.Fatal(err)
			}
			o := DefaultOptions()
			o.RelCol = 1
			b.SetBytes(fi.Size())
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				rep, err := Import(context.Background(), cfg, o, []string{in})
				if err != nil {
					b.Fatal(err)
				}
				if rep.EdgeSets[0].Edges != int64(p.Edges) {
					b.Fatalf("%d edges", rep.EdgeSets[0].Edges)
				}
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(p.Edges)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			b.ReportMetric(float64(p.Edges)*float64(b.N)/cpu.Seconds(), "edges/cpu-s")
		})
	}
}
