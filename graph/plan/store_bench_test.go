package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph"
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

// benchStores caches the generated benchmark stores (per partition count)
// for the whole test binary, so that each b.N round and each -count run
// does not import 10 M edges again; they live in one temporary directory
// that TestMain removes.
var (
	benchStoreMu   sync.Mutex
	benchStoreDir  string
	benchStoreCfgs = map[int]*config.Config{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchStoreDir != "" {
		os.RemoveAll(benchStoreDir)
	}
	os.Exit(code)
}

// benchStore returns an open store of the benchmark graph (10 M edges, 4
// relations, 1 M entities) over parts x parts buckets, importing it on
// first use (not timed).
func benchStore(b *testing.B, parts int) *edgestore.Store {
	b.Helper()
	benchStoreMu.Lock()
	defer benchStoreMu.Unlock()
	cfg := benchStoreCfgs[parts]
	if cfg == nil {
		if benchStoreDir == "" {
			d, err := os.MkdirTemp("", "batchprep-plan-bench-")
			if err != nil {
				b.Fatal(err)
			}
			benchStoreDir = d
		}
		dir := filepath.Join(benchStoreDir, fmt.Sprintf("P%d", parts))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		cfg = storeConfig(b, dir, parts)
		if _, err := importer.GenerateStore(context.Background(), cfg, dir, benchEdges, 1_000_000, 1); err != nil {
			b.Fatal(err)
		}
		benchStoreCfgs[parts] = cfg
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// heapPeak samples the bytes of live heap objects every millisecond until
// stopped, and returns the largest sample. runtime/metrics reads do not
// stop the world.
type heapPeak struct {
	stop chan struct{}
	done chan uint64
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapPeak() *heapPeak {
	h := &heapPeak{stop: make(chan struct{}), done: make(chan uint64)}
	go func() {
		peak := heapObjects()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				h.done <- max(peak, heapObjects())
				return
			case <-t.C:
				peak = max(peak, heapObjects())
			}
		}
	}()
	return h
}

func (h *heapPeak) Stop() uint64 { close(h.stop); return <-h.done }

// BenchmarkPrepareStore is BenchmarkPrepare reading from an imported edge
// store (10 M edges, 4 relations, 1 M entities, generated and imported into
// a temporary directory first, not timed): the chunk load is a read of the
// bucket files (from the page cache; the first epoch also verifies every
// column checksum with the read). It reports the peak of live heap bytes
// during the epochs above the heap before the iterator existed, per edge of
// the largest chunk (peak-B/edge: the iterator's buffers plus anything the
// store's read path allocates), and the bytes allocated per edge and epoch
// (alloc-B/edge: 0 means no allocation that grows with the edges).
func BenchmarkPrepareStore(b *testing.B) {
	for _, parts := range []int{1, 4} {
		b.Run(fmt.Sprintf("P%d", parts), func(b *testing.B) {
			st := benchStore(b, parts)
			o := Options{NumEpochs: b.N, MaxEdgesPerChunk: 1e9, BucketOrder: "inside_out", Workers: 2,
				BatchSize: 1000, EvalFraction: 0.05, NumRelations: 4, Seed: 1}
			p := mustPlan(b, st, o)
			runtime.GC()
			base, alloc0 := heapObjects(), heapAllocs()
			peak := startHeapPeak()
			b.ResetTimer()
			cpu0 := cpuTime()
			it := mustIter(b, p, p.Start())
			drainBatches(b, it)
			reportRates(b, benchEdges, cpu0)
			b.StopTimer()
			top, alloc := peak.Stop(), heapAllocs()-alloc0
			b.ReportMetric(float64(it.MemoryBytes())/float64(p.maxChunk), "B/edge")
			b.ReportMetric(float64(top-min(top, base))/float64(p.maxChunk), "peak-B/edge")
			// The first epoch sizes the buffers; later ones should allocate
			// nothing per edge.
			b.ReportMetric((float64(alloc)-float64(it.MemoryBytes()))/float64(benchEdges)/float64(b.N), "alloc-B/edge")
		})
	}
}

// BenchmarkStoreBaseline measures, on the same stores and in the same run
// as BenchmarkPrepareStore, what loading alone costs: read-file is the raw
// read bandwidth of the bucket files (one ReadAt of each whole file into
// one reused buffer), read-edges is Store.ReadEdges of every bucket into
// reused columns (the plan's load), copy-columns is a plain copy of the
// same columns from memory.
func BenchmarkStoreBaseline(b *testing.B) {
	for _, parts := range []int{1, 4} {
		st := benchStore(b, parts)
		var buckets []graph.Bucket
		largest := 0
		for i := 0; i < parts; i++ {
			for j := 0; j < parts; j++ {
				bk := graph.Bucket{Lhs: i, Rhs: j}
				buckets = append(buckets, bk)
				n, err := st.NumEdges(0, bk)
				if err != nil {
					b.Fatal(err)
				}
				largest = max(largest, n)
			}
		}
		var e graph.Edges
		readAll := func(b *testing.B) {
			for _, bk := range buckets {
				n, _ := st.NumEdges(0, bk)
				e.Reset()
				if err := st.ReadEdges(0, bk, 0, n, &e); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(fmt.Sprintf("P%d/read-file", parts), func(b *testing.B) {
			dir := benchStoreCfgs[parts].EdgePaths[0]
			var files []*os.File
			var sizes []int64
			var total int64
			for _, bk := range buckets {
				f, err := os.Open(filepath.Join(dir, edgestore.BucketFile(bk.Lhs, bk.Rhs)))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				fi, _ := f.Stat()
				files, sizes, total = append(files, f), append(sizes, fi.Size()), total+fi.Size()
			}
			buf := make([]byte, total)
			b.SetBytes(total)
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				for k, f := range files {
					if _, err := f.ReadAt(buf[:sizes[k]], 0); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportRates(b, benchEdges, cpu0)
		})
		b.Run(fmt.Sprintf("P%d/read-edges", parts), func(b *testing.B) {
			readAll(b) // sizes the columns and verifies every file once
			b.SetBytes(int64(benchEdges) * 20)
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				readAll(b)
			}
			reportRates(b, benchEdges, cpu0)
		})
		b.Run(fmt.Sprintf("P%d/copy-columns", parts), func(b *testing.B) {
			readAll(b)
			var dst graph.Edges
			dst.Lhs, dst.Rhs, dst.Rel = make([]uint32, 0, largest), make([]uint32, 0, largest), make([]uint32, 0, largest)
			dst.Ordinal = make([]uint64, 0, largest)
			src := e // the last bucket read
			b.SetBytes(int64(benchEdges) * 20)
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				for range buckets { // each bucket is about as large as the last
					dst.Lhs = append(dst.Lhs[:0], src.Lhs...)
					dst.Rhs = append(dst.Rhs[:0], src.Rhs...)
					dst.Rel = append(dst.Rel[:0], src.Rel...)
					dst.Ordinal = append(dst.Ordinal[:0], src.Ordinal...)
				}
			}
			b.StopTimer()
			// Per edge copied (the buckets are only about equal in size).
			copied := float64(src.Len()) * float64(len(buckets)) * float64(b.N)
			b.ReportMetric(copied/b.Elapsed().Seconds(), "edges/s")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/copied, "cpu-ns/edge")
		})
	}
}
