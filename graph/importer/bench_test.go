package importer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/config"
)

// benchGraph sizes; BENCH_EDGES overrides the edge count (e.g. for a quick
// run).
func benchSize() (edges, relations, entities int) {
	edges, relations, entities = 10_000_000, 4, 1_000_000
	if s := os.Getenv("BENCH_EDGES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			edges = n
			entities = max(1, n/10)
		}
	}
	return
}

// BenchmarkImport measures an end-to-end import of a generated TSV
// (10 M edges, 4 relations, 1 M entities) next to two baselines on the same
// file in the same run: reading it raw, and counting its lines with
// bytes.Count. Reported: edges/s (and MB/s of input).
func BenchmarkImport(b *testing.B) {
	edges, relations, entities := benchSize()
	dir := b.TempDir()
	in := filepath.Join(dir, "edges.tsv")
	f, err := os.Create(in)
	if err != nil {
		b.Fatal(err)
	}
	if err := GenerateTSV(f, edges, relations, entities, 1); err != nil {
		b.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(in)
	size := fi.Size()
	report := func(b *testing.B) {
		b.SetBytes(size)
		b.ReportMetric(float64(edges)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
	}

	b.Run("baseline=read", func(b *testing.B) {
		buf := make([]byte, blockSize)
		for i := 0; i < b.N; i++ {
			f, _ := os.Open(in)
			if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		report(b)
	})
	b.Run("baseline=countlines", func(b *testing.B) {
		buf := make([]byte, blockSize)
		for i := 0; i < b.N; i++ {
			f, _ := os.Open(in)
			n := 0
			for {
				m, err := f.Read(buf)
				n += bytes.Count(buf[:m], []byte{'\n'})
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			f.Close()
			if n != edges {
				b.Fatalf("%d lines", n)
			}
		}
		report(b)
	})
	type variant struct {
		parts  int
		noSync bool
	}
	for _, v := range []variant{{1, false}, {4, false}, {16, false}, {4, true}} {
		parts := v.parts
		name := fmt.Sprintf("import/P=%d", parts)
		if v.noSync {
			name = fmt.Sprintf("import-nosync/P=%d", parts) // the cost of fsync, for comparison
		}
		b.Run(name, func(b *testing.B) {
			out := b.TempDir()
			doc := fmt.Sprintf("entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = \"c\"\n[entities.n]\nnum_partitions = %d\n",
				filepath.Join(out, "ent"), filepath.Join(out, "edges"), parts)
			for r := 0; r < relations; r++ {
				doc += fmt.Sprintf("[[relations]]\nname = \"r%d\"\nlhs = \"n\"\nrhs = \"n\"\n", r)
			}
			cfg, err := config.Parse([]byte(doc), "toml")
			if err != nil {
				b.Fatal(err)
			}
			o := DefaultOptions()
			o.RelCol, o.noSync = 1, v.noSync
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				rep, err := Import(context.Background(), cfg, o, []string{in})
				if err != nil {
					b.Fatal(err)
				}
				if rep.EdgeSets[0].Edges != int64(edges) {
					b.Fatalf("%d edges", rep.EdgeSets[0].Edges)
				}
			}
			cpu := cpuTime() - cpu0
			report(b)
			b.ReportMetric(float64(edges)*float64(b.N)/cpu.Seconds(), "edges/cpu-s")
		})
	}
}

// cpuTime is the process's user+system CPU time: on a shared machine it
// shows the work done, which wall time hides behind other loads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
