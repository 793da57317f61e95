package file

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/miniotest"
	"github.com/batchprep/batchprep/internal/objstore"
	"github.com/batchprep/batchprep/internal/shared"
)

// sweepDigest reads one sweep of r in window order (a small window, so
// that many chunks are read at random) and hashes every minibatch's
// sequences and data.
func sweepDigest(t *testing.T, r corpus.Source) [32]byte {
	t.Helper()
	src, err := source.New(r, source.Config{Schedule: source.ConstantSchedule(512),
		Randomize: randomize.Config{Kind: "window", WindowChunks: 4, Seed: 3}, Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	h := sha256.New()
	var buf [8]byte
	put := func(v uint64) { binary.LittleEndian.PutUint64(buf[:], v); h.Write(buf[:]) }
	for {
		m, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range m.Sequences {
			put(uint64(s))
		}
		for _, sb := range m.Streams {
			for _, v := range sb.SeqStart {
				put(uint64(v))
			}
			for _, v := range sb.Indices {
				put(uint64(v))
			}
			for _, v := range sb.Values {
				put(uint64(math.Float32bits(v)))
			}
			for _, v := range sb.Dense {
				put(uint64(math.Float32bits(v)))
			}
		}
		if m.EndOfEpoch {
			break
		}
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// TestObjectCorpusIsTheFile (invariant 4): ATIS as CTF and as Parquet,
// read from MinIO, gives the fingerprint, layout and minibatches of the
// local file. A CTF object is indexed once: a second open finds the index
// in the cache and fetches nothing; a sweep costs at most one GET per
// chunk, and a second sweep none.
func TestObjectCorpusIsTheFile(t *testing.T) {
	ctfPath, pqPath := atisParquet(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "atis/train.ctf", ctfPath)
	s.PutFile("corpora", "atis/train.parquet", pqPath)
	proxy := s.ProxyFor(t)
	miniotest.SetEnv(t, proxy.Env(t, s))
	opt := Options{Objects: objstore.Options{CacheDir: t.TempDir()}}
	cfg := ctf.Config{Streams: atisStreams, ChunkBytes: 64 << 10}
	for _, c := range []struct{ local, url string }{
		{ctfPath, "s3://corpora/atis/train.ctf"},
		{pqPath, "s3://corpora/atis/train.parquet"},
	} {
		local, err := Open(c.local, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer local.Close()
		want := sweepDigest(t, local)
		for round := range 2 {
			proxy.ResetCounts()
			obj, err := OpenWith(t.Context(), c.url, cfg, opt)
			if err != nil {
				t.Fatalf("%s: %v", c.url, err)
			}
			opened := proxy.Gets()
			if obj.Path() != c.url {
				t.Errorf("Path() = %q, want %q", obj.Path(), c.url)
			}
			if !reflect.DeepEqual(obj.Fingerprint(), local.Fingerprint()) {
				t.Errorf("%s: fingerprint %v, the file's %v", c.url, obj.Fingerprint(), local.Fingerprint())
			}
			lo, ll := obj.Layout(), local.Layout()
			if lo.NumSequences() != ll.NumSequences() || lo.NumChunks() != ll.NumChunks() || lo.TotalSamples() != ll.TotalSamples() {
				t.Errorf("%s: layout of %d sequences in %d chunks, the file's %d in %d", c.url, lo.NumSequences(), lo.NumChunks(), ll.NumSequences(), ll.NumChunks())
			}
			proxy.ResetCounts()
			if got := sweepDigest(t, obj); got != want {
				t.Errorf("%s, round %d: the sweep's minibatches differ from the file's", c.url, round)
			}
			gets := proxy.Gets()
			obj.Close()
			t.Logf("%s, round %d: %d GETs to open, %d for a sweep of %d chunks", c.url, round, opened, gets, lo.NumChunks())
			if round == 0 && gets > int64(lo.NumChunks())+4 {
				t.Errorf("%s: %d GETs for a sweep of %d chunks, want at most chunks + 4", c.url, gets, lo.NumChunks())
			}
			if round == 1 && opened+gets > 0 {
				t.Errorf("%s: %d GETs to open and %d to read with everything cached, want none", c.url, opened, gets)
			}
		}
	}
}

// TestObjectIndexedInPieces: a CTF object large enough to be indexed in
// parallel streams (ATIS x12, 36 MB: pieces at once, cut at nominal
// offsets that each piece moves to a line start) gives the local file's
// index and fingerprint; the open fetches the object about once (each
// piece's stream, the first MiB, a slack past each cut), with no request
// to find a cut first, and a sweep after it needs no GET: every block was
// cached whole by the stream that passed it, each run of 4 (a segment,
// objstore.SegmentBytes) as one file; only the first MiB, read before the
// pass, has a file of its own.
func TestObjectIndexedInPieces(t *testing.T) {
	atis, err := os.ReadFile(shared.Need(t, "ctf", "atis", "atis.train.ctf"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "atis-x12.ctf")
	if err := os.WriteFile(path, bytes.Repeat(atis, 12), 0o644); err != nil {
		t.Fatal(err)
	}
	size := int64(12 * len(atis))
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "big.ctf", path)
	proxy := s.ProxyFor(t)
	miniotest.SetEnv(t, proxy.Env(t, s))
	cfg := ctf.Config{Streams: atisStreams, ChunkBytes: 1 << 20}
	local, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	cache := t.TempDir()
	obj, err := OpenWith(t.Context(), "s3://corpora/big.ctf", cfg, Options{Objects: objstore.Options{CacheDir: cache}})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	blocks, _ := filepath.Glob(filepath.Join(cache, "??", "*.blk"))
	segments, _ := filepath.Glob(filepath.Join(cache, "??", "*.seg"))
	if want := (size + objstore.SegmentBytes - 1) / objstore.SegmentBytes; int64(len(segments)) != want || len(blocks) > 1 {
		t.Errorf("the pass left %d segment files and %d block files; want %d and at most 1 (the first MiB)", len(segments), len(blocks), want)
	}
	lo, ll := obj.Layout(), local.Layout()
	if !reflect.DeepEqual(lo.Samples, ll.Samples) || !reflect.DeepEqual(lo.ChunkStart, ll.ChunkStart) {
		t.Fatalf("the object's index (%d sequences, %d chunks) differs from the file's (%d, %d)", lo.NumSequences(), lo.NumChunks(), ll.NumSequences(), ll.NumChunks())
	}
	if !reflect.DeepEqual(obj.Fingerprint(), local.Fingerprint()) {
		t.Errorf("fingerprint %v, the file's %v", obj.Fingerprint(), local.Fingerprint())
	}
	gets, fetched := proxy.Gets(), proxy.BodyBytes()
	t.Logf("open: %d GETs, %d bytes of a %d-byte object", gets, fetched, size)
	if fetched > size+2<<20 {
		t.Errorf("the open fetched %d bytes of a %d-byte object; want at most 2 MiB more", fetched, size)
	}
	if max := size/(4<<20) + 3; gets > max {
		t.Errorf("%d GETs to open; want at most %d (a stream per piece of 4 MiB or more, the first MiB, the published index)", gets, max)
	}
	proxy.ResetCounts()
	sweepDigest(t, obj)
	if n := proxy.Gets(); n != 0 {
		t.Errorf("%d GETs for a sweep after the index pass; want none", n)
	}
}

// TestObjectReplacedStopsTheRead: an object replaced after it was opened
// stops the read with an error naming it (objstore.ErrReplaced), never
// minibatches mixed from two versions.
func TestObjectReplacedStopsTheRead(t *testing.T) {
	ctfPath, _ := atisParquet(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "train.ctf", ctfPath)
	miniotest.SetEnv(t, s.Env())
	const url = "s3://corpora/train.ctf"
	cache := t.TempDir()
	r, err := OpenWith(t.Context(), url, ctf.Config{Streams: atisStreams, ChunkBytes: 64 << 10},
		Options{Objects: objstore.Options{CacheDir: cache}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The index pass left the blocks it streamed in the cache: remove them
	// (the block directories, not the index), so that the chunks are
	// fetched.
	dirs, _ := filepath.Glob(filepath.Join(cache, "??"))
	for _, d := range dirs {
		os.RemoveAll(d)
	}
	if len(dirs) == 0 {
		t.Fatal("no cached blocks after the index pass")
	}
	data, err := os.ReadFile(ctfPath)
	if err != nil {
		t.Fatal(err)
	}
	s.Put("corpora", "train.ctf", append(data, data...))
	var loadErr error
	for c := range r.Layout().NumChunks() {
		if _, loadErr = r.LoadChunk(c); loadErr != nil {
			break
		}
	}
	if !errors.Is(loadErr, objstore.ErrReplaced) {
		t.Fatalf("reading a replaced object: %v, want objstore.ErrReplaced", loadErr)
	}
	if msg := loadErr.Error(); !strings.Contains(msg, url) {
		t.Errorf("the error does not name %s: %s", url, msg)
	}
}
