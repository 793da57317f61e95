package ctf

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/shared"
)

// Benchmark corpora, generated once per process into a temporary directory
// (removed by TestMain): ATIS train replicated to >= 200 MB (sparse, ids)
// and MNIST_dense replicated to >= 100 MB (dense, line mode).
var (
	benchOnce  sync.Once
	benchDir   string
	benchFiles = map[string]string{}
	benchErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

type benchCorpus struct {
	name    string
	src     string
	size    int64
	streams []corpus.Stream
}

var benchCorpora = []benchCorpus{
	{"atis", "ctf/atis/atis.train.ctf", 200 << 20, []corpus.Stream{sparse("S0", 943), sparse("S1", 26), sparse("S2", 129)}},
	{"mnist", "ctf/reader_tests/Data/MNIST_dense.txt", 100 << 20, []corpus.Stream{dense("F", 784), dense("L", 10)}},
}

func benchFile(b *testing.B, c benchCorpus) string {
	src := shared.Need(b, c.src)
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "ctf-bench")
		for _, bc := range benchCorpora {
			if benchErr != nil {
				return
			}
			data, err := os.ReadFile(shared.Need(b, bc.src))
			if err != nil {
				benchErr = err
				return
			}
			if !bytes.HasSuffix(data, []byte("\n")) {
				data = append(data, '\n')
			}
			p := filepath.Join(benchDir, bc.name+".ctf")
			f, err := os.Create(p)
			if err != nil {
				benchErr = err
				return
			}
			for n := int64(0); n < bc.size; n += int64(len(data)) {
				if _, err := f.Write(data); err != nil {
					benchErr = err
				}
			}
			f.Close()
			benchFiles[bc.name] = p
		}
	})
	_ = src
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchFiles[c.name]
}

func fileSize(b *testing.B, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// BenchmarkRawRead is the baseline: read the whole file with a 1 MiB buffer
// and count newlines (bytes.Count), the least any indexer must do.
func BenchmarkRawRead(b *testing.B) {
	for _, c := range benchCorpora {
		b.Run(c.name, func(b *testing.B) {
			p := benchFile(b, c)
			b.SetBytes(fileSize(b, p))
			buf := make([]byte, 1<<20)
			cpu := startCPU(b)
			for b.Loop() {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				lines := 0
				for {
					n, err := f.Read(buf)
					lines += bytes.Count(buf[:n], []byte{'\n'})
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				f.Close()
				if lines == 0 {
					b.Fatal("no lines")
				}
			}
			cpu.report(b, fileSize(b, p))
		})
	}
}

// BenchmarkIndex measures Open (the indexing pass, no cache), with the
// streams alone (the index looks at ids and newlines) and, for ATIS, with a
// label stream (it looks at every '|' as well). Besides wall-clock MB/s it
// reports cpu-MB/s (bytes over the process's user+sys time, garbage
// collection included) and index-B/seq (the index and layout's memory per
// sequence).
func BenchmarkIndex(b *testing.B) {
	for _, c := range benchCorpora {
		run := func(name string, cfg Config) {
			b.Run(name, func(b *testing.B) {
				p := benchFile(b, c)
				size := fileSize(b, p)
				b.SetBytes(size)
				var perSeq float64
				cpu := startCPU(b)
				for b.Loop() {
					r, err := Open(p, cfg)
					if err != nil {
						b.Fatal(err)
					}
					perSeq = float64(r.x.memBytes()) / float64(r.Layout().NumSequences())
					r.Close()
				}
				cpu.report(b, size)
				b.ReportMetric(perSeq, "index-B/seq")
			})
		}
		run(c.name, Config{Streams: c.streams})
		if c.name == "atis" {
			run(c.name+"-label", Config{Streams: c.streams, Label: "S2"})
		}
	}
}

// cpuMeter measures the process's CPU time (user + sys) over a benchmark.
type cpuMeter struct{ start time.Duration }

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) cpuMeter { return cpuMeter{cpuTime(b)} }

// report adds cpu-MB/s: bytes per iteration times b.N over the CPU seconds.
func (m cpuMeter) report(b *testing.B, bytes int64) {
	d := cpuTime(b) - m.start
	if d > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/d.Seconds(), "cpu-MB/s")
	}
}

// BenchmarkParse measures parsing every chunk on one goroutine (the index
// is built once outside the timer), and reports the peak heap in use,
// sampled after every chunk, which stays near a few chunks (32 MiB each)
// whatever the file size.
func BenchmarkParse(b *testing.B) {
	for _, c := range benchCorpora {
		b.Run(c.name, func(b *testing.B) { benchParse(b, c, 0) })
		b.Run(c.name+"-chunk4MiB", func(b *testing.B) { benchParse(b, c, 4<<20) })
	}
}

func benchParse(b *testing.B, c benchCorpus, chunkBytes int64) {
	p := benchFile(b, c)
	r, err := Open(p, Config{Streams: c.streams, ChunkBytes: chunkBytes})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.SetBytes(fileSize(b, p))
	var peak uint64
	var ms runtime.MemStats
	cpu := startCPU(b)
	for b.Loop() {
		for ch := 0; ch < r.Layout().NumChunks(); ch++ {
			if _, err := r.LoadChunk(ch); err != nil {
				b.Fatal(err)
			}
			if ch%4 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}
	cpu.report(b, fileSize(b, p))
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(fileSize(b, p))/(1<<20), "file-MiB")
}

// BenchmarkInfer measures InferStreams (what inspect runs without --stream)
// on every core against the same scan on one goroutine, in the same run.
func BenchmarkInfer(b *testing.B) {
	c := benchCorpora[0]
	for _, tc := range []struct {
		name    string
		workers int
	}{{"one-goroutine", 1}, {"all-cores", runtime.GOMAXPROCS(0)}} {
		b.Run(c.name+"-"+tc.name, func(b *testing.B) {
			p := benchFile(b, c)
			b.SetBytes(fileSize(b, p))
			for b.Loop() {
				if _, err := inferPath(p, tc.workers, inferPiece); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadAll measures LoadAll (inspect's parse of every chunk, in
// order, on every core) against a loop of LoadChunk on one goroutine, both
// with 1 MiB chunks, in the same run.
func BenchmarkLoadAll(b *testing.B) {
	c := benchCorpora[0]
	p := benchFile(b, c)
	r, err := Open(p, Config{Streams: c.streams, ChunkBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.Run(c.name+"-baseline-LoadChunk-loop", func(b *testing.B) {
		b.SetBytes(fileSize(b, p))
		for b.Loop() {
			for ch := 0; ch < r.Layout().NumChunks(); ch++ {
				if _, err := r.LoadChunk(ch); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run(c.name+"-LoadAll", func(b *testing.B) {
		b.SetBytes(fileSize(b, p))
		for b.Loop() {
			if err := r.LoadAll(0, func(int, *corpus.Chunk) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
