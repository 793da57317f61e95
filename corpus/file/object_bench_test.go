package file

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/miniotest"
	"github.com/batchprep/batchprep/internal/objstore"
)

// objectBench is ATIS x BATCHPREP_BENCH_ATIS_COPIES as CTF and Parquet,
// each a local file and an object in MinIO on loopback, behind a proxy
// that counts GETs and can delay them.
type objectBench struct {
	store *miniotest.Server
	proxy *miniotest.Proxy
	files map[string][2]string // format: local path, URL
	// direct and proxied are the AWS environments that reach MinIO
	// straight and through the proxy (the default).
	direct, proxied map[string]string
}

// through points the AWS environment at MinIO through the proxy (which
// counts GETs and adds delays, at a cost of CPU in this process) or, with
// proxied false, straight at it.
func (ob *objectBench) through(b *testing.B, proxied bool) {
	env := ob.direct
	if proxied {
		env = ob.proxied
	}
	for k, v := range env {
		b.Setenv(k, v)
	}
}

func newObjectBench(b *testing.B) *objectBench {
	ctfPath, pqPath := benchFiles(b)
	s := miniotest.Start(b)
	s.MakeBucket("bench")
	s.PutFile("bench", "atis.ctf", ctfPath)
	s.PutFile("bench", "atis.parquet", pqPath)
	p := s.ProxyFor(b)
	ob := &objectBench{store: s, proxy: p, files: map[string][2]string{
		"ctf": {ctfPath, "s3://bench/atis.ctf"}, "parquet": {pqPath, "s3://bench/atis.parquet"}},
		direct: s.Env(), proxied: p.Env(b, s)}
	ob.through(b, true)
	return ob
}

// sweep opens path with read's defaults (1 MiB chunks, a 128-chunk window,
// 64 chunks prefetched) and reads one sweep of minibatches of 1024 samples
// as rank of workers; it returns the samples read.
func objectSweep(b *testing.B, path string, opt Options, workers, rank int) uint64 {
	return objectRead(b, path, opt, "window", workers, rank)
}

// objectRead is objectSweep in the order of randomizer kind.
func objectRead(b *testing.B, path string, opt Options, kind string, workers, rank int) uint64 {
	return objectReadCfg(b, path, ctf.Config{Streams: atisStreams, ChunkBytes: 1 << 20}, opt, kind, workers, rank)
}

// objectReadCfg is objectRead with a reader configuration. A kind ending
// in "-chunks" ("window-chunks") splits the ranks by chunk owner.
func objectReadCfg(b *testing.B, path string, cfg ctf.Config, opt Options, kind string, workers, rank int) uint64 {
	kind, split := strings.CutSuffix(kind, "-chunks")
	opt.Objects.Exact = split && workers > 1 // as read sets it
	r, err := OpenWith(b.Context(), path, cfg, opt)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	src, err := source.New(r, source.Config{Randomize: randomize.Config{Kind: kind}, Prefetch: true,
		PrefetchChunks: 64, Workers: workers, Rank: rank, SplitChunks: split})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var n uint64
	for src.Epoch() < 1 {
		mb, err := src.NextK(1024)
		if err != nil {
			b.Fatal(err)
		}
		n += mb.End - mb.Start
	}
	return n
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// remoteRate is the cap per connection of the "cold-remote" runs: 100 MB/s,
// an assumption for one connection to a store across a network.
const remoteRate = 100e6

// BenchmarkReadObject reads one sweep of ATIS (index pass included) with
// read's defaults from a local file ("file", the baseline) and from MinIO:
// with an empty cache ("cold": a fresh cache directory per iteration),
// with everything cached ("warm") and with 20 ms added to every request
// ("cold-20ms"); and the CTF file with its index cached
// ("file-cached-index", as the warm read has it); and the CTF object with
// its index at hand but no block cached ("cold-indexed", as a later run
// of a rank that owns other chunks), with and without the 20 ms; and cold
// from a store like a remote one ("cold-remote": 20 ms and remoteRate per
// connection, so that only several connections at once reach the
// bandwidth of the loopback); and the CTF object streamed once in 8 MiB
// ranges, FetchConcurrency at a time, into nothing ("receive": no index,
// no parse, no cache), the least any cold read must spend to have its
// bytes. The runs with 20 ms report GETs per sweep
// and the bytes fetched over the object's size (through the proxy; the
// others read the store straight). Each run reports the CPU time a sweep cost
// this process (cpu-s/op: the reader, and the proxy when there is one)
// and the store (store-cpu-s/op): on a machine whose cores the store
// shares, their sum over the cores bounds a cold read's time from below.
func BenchmarkReadObject(b *testing.B) {
	ob := newObjectBench(b)
	for _, format := range []string{"ctf", "parquet"} {
		local, url := ob.files[format][0], ob.files[format][1]
		warmDir := b.TempDir()
		objectSweep(b, url, Options{Objects: objstore.Options{CacheDir: warmDir}}, 1, 0)
		for _, c := range []struct {
			name  string
			path  string
			delay time.Duration
			rate  int64 // per response, bytes per second
			cold  bool
		}{{"file", local, 0, 0, false}, {"file-cached-index", local, 0, 0, false}, {"cold", url, 0, 0, true}, {"warm", url, 0, 0, false},
			{"cold-20ms", url, 20 * time.Millisecond, 0, true}, {"cold-remote", url, 20 * time.Millisecond, remoteRate, true},
			{"cold-indexed", url, 0, 0, true}, {"cold-indexed-20ms", url, 20 * time.Millisecond, 0, true},
			{"receive", url, 0, 0, true}} {
			if (c.name == "file-cached-index" || c.name == "receive" || strings.HasPrefix(c.name, "cold-indexed")) && format != "ctf" {
				continue
			}
			b.Run(format+"/"+c.name, func(b *testing.B) {
				// Without a delay the store is read straight: the proxy's
				// copies would cost this process CPU no store would. The
				// runs with a delay count the GETs (the same requests).
				ob.through(b, c.delay > 0)
				ob.proxy.SetDelay(c.delay)
				ob.proxy.SetRate(c.rate)
				defer ob.proxy.SetDelay(0)
				defer ob.proxy.SetRate(0)
				ob.proxy.ResetCounts()
				body0 := ob.proxy.BodyBytes()
				var samples uint64
				last := ""
				cpu0, _ := miniotest.ProcessCPU(os.Getpid())
				store0, storeOK := ob.store.CPU()
				for b.Loop() {
					dir := warmDir
					if c.cold {
						b.StopTimer()
						// The last round's cache goes first: left, its dirty
						// pages would slow this round's writes.
						os.RemoveAll(last)
						dir = b.TempDir()
						last = dir
						if strings.HasPrefix(c.name, "cold-indexed") { // the blocks cold, the index at hand
							os.CopyFS(filepath.Join(dir, "index"), os.DirFS(filepath.Join(warmDir, "index")))
						}
						b.StartTimer()
					}
					if c.name == "receive" {
						receiveObject(b, c.path)
						continue
					}
					cfg := ctf.Config{Streams: atisStreams, ChunkBytes: 1 << 20, CacheIndex: c.name == "file-cached-index"}
					samples += objectReadCfg(b, c.path, cfg, Options{Objects: objstore.Options{CacheDir: dir}}, "window", 1, 0)
				}
				if samples > 0 {
					b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
				}
				// CPU time counts the rounds' untimed set-up too (removing
				// a cache, copying an index): small beside a sweep.
				if cpu1, ok := miniotest.ProcessCPU(os.Getpid()); ok {
					b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				}
				if store1, ok := ob.store.CPU(); ok && storeOK {
					b.ReportMetric((store1-store0).Seconds()/float64(b.N), "store-cpu-s/op")
				}
				if c.delay > 0 {
					b.ReportMetric(float64(ob.proxy.Gets())/float64(b.N), "GETs/sweep")
					if info, err := os.Stat(local); err == nil {
						b.ReportMetric(float64(ob.proxy.BodyBytes()-body0)/float64(b.N)/float64(info.Size()), "fetched/size")
					}
				}
			})
		}
	}
}

// receiveObject streams the object at url in ranges of 8 MiB,
// FetchConcurrency of them at once, into nothing, with a cache too small
// for any of it to be kept. Each read asks for up to 1 MiB, as the index
// pass's do.
func receiveObject(b *testing.B, url string) {
	o, err := objstore.Open(b.Context(), url, objstore.Options{CacheDir: b.TempDir(), CacheBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	const piece = 8 << 20
	size := o.Size()
	next := make(chan int64)
	var wg sync.WaitGroup
	var got atomic.Int64
	for range o.Streams() {
		wg.Go(func() {
			buf := make([]byte, 1<<20)
			for off := range next {
				rc := o.NewRangeReader(off, piece)
				// Not io.Discard itself: its ReadFrom would read 8 KiB at a time.
				n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, rc, buf)
				rc.Close()
				if err != nil {
					b.Error(err)
				}
				got.Add(n)
			}
		})
	}
	for off := int64(0); off < size; off += piece {
		next <- off
	}
	close(next)
	wg.Wait()
	if got.Load() != size {
		b.Fatalf("received %d bytes of %d", got.Load(), size)
	}
}

// BenchmarkObjectRanks reads one sweep of the CTF object as each of 4
// data-parallel ranks, each with an empty cache of its own and the index
// published beside the object (PublishIndex),
// in window and in file order and in window order split by chunk owner
// (window-chunks), and the Parquet object in window order and split by
// chunk owner; it reports the bytes each rank fetched over the object's
// size (share-rankR, from its cache directory: the index included) and
// its GETs.
func BenchmarkObjectRanks(b *testing.B) {
	ob := newObjectBench(b)
	first := objstore.Options{CacheDir: b.TempDir()}
	for _, format := range []string{"ctf", "parquet"} {
		r, err := OpenWith(b.Context(), ob.files[format][1], ctf.Config{Streams: atisStreams, ChunkBytes: 1 << 20}, Options{Objects: first})
		if err != nil {
			b.Fatal(err)
		}
		_, err = PublishIndex(b.Context(), r, first)
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct{ format, kind string }{{"ctf", "window"}, {"ctf", "none"}, {"ctf", "window-chunks"},
		{"parquet", "window"}, {"parquet", "window-chunks"}} {
		local, url := ob.files[c.format][0], ob.files[c.format][1]
		info, err := os.Stat(local)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.format+"-"+c.kind, func(b *testing.B) {
			for b.Loop() {
				for rank := range 4 {
					dir := b.TempDir()
					ob.proxy.ResetCounts()
					objectRead(b, url, Options{Objects: objstore.Options{CacheDir: dir}}, c.kind, 4, rank)
					r := string(rune('0' + rank))
					b.ReportMetric(float64(dirBytes(dir))/float64(info.Size()), "share-rank"+r)
					b.ReportMetric(float64(ob.proxy.Gets()), "gets-rank"+r)
				}
			}
		})
	}
}

// BenchmarkObjectSeek times the first minibatch of the CTF object at
// position 0 ("start") and at sweep 10^9 ("sweep1e9"), each with the index
// cached and no block cached, and reports the GETs it took.
func BenchmarkObjectSeek(b *testing.B) {
	ob := newObjectBench(b)
	url := ob.files["ctf"][1]
	indexDir := b.TempDir()
	objectSweep(b, url, Options{Objects: objstore.Options{CacheDir: indexDir}}, 1, 0)
	for _, c := range []struct {
		name  string
		sweep uint64
	}{{"start", 0}, {"sweep1e9", 1e9}} {
		b.Run(c.name, func(b *testing.B) {
			ob.proxy.ResetCounts()
			for b.Loop() {
				b.StopTimer()
				dir := b.TempDir()
				os.CopyFS(filepath.Join(dir, "index"), os.DirFS(filepath.Join(indexDir, "index")))
				b.StartTimer()
				r, err := OpenWith(b.Context(), url, ctf.Config{Streams: atisStreams, ChunkBytes: 1 << 20}, Options{Objects: objstore.Options{CacheDir: dir}})
				if err != nil {
					b.Fatal(err)
				}
				src, err := source.New(r, source.Config{Randomize: randomize.Config{Kind: "window"}, Prefetch: true, PrefetchChunks: 64})
				if err != nil {
					b.Fatal(err)
				}
				if err := src.Seek(c.sweep * src.SweepSize()); err != nil {
					b.Fatal(err)
				}
				if _, err := src.NextK(1024); err != nil {
					b.Fatal(err)
				}
				src.Close()
				r.Close()
			}
			b.ReportMetric(float64(ob.proxy.Gets())/float64(b.N), "GETs")
		})
	}
}
