package ctf

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/procs"
	"github.com/batchprep/batchprep/internal/shared"
)

// parallelMatches indexes data serially and in n ranges and fails unless
// both give the same index (or the parallel index declines, when
// mayDecline).
func parallelMatches(t *testing.T, name string, data []byte, cfg Config, n int, mayDecline bool) {
	t.Helper()
	want, err := buildIndex(bytes.NewReader(data), &cfg, name)
	got, ok := parallelIndex(nil, bytes.NewReader(data), int64(len(data)), n, &cfg, name)
	compareParallel(t, name, n, mayDecline, want, err, got, ok)
	// Read as an object is, in ranged streams cut at nominal offsets, with
	// a slack of a few bytes: most lines run past it.
	defer func(v int64) { streamSlack = v }(streamSlack)
	streamSlack = 3
	got, ok = parallelIndex(nil, memStreams(data), int64(len(data)), n, &cfg, name)
	compareParallel(t, name+" (ranged streams)", n, mayDecline, want, err, got, ok)
}

// memStreams is bytes read as an object is: in ranged streams
// (corpus.ParallelStreamer) besides ReadAt.
type memStreams []byte

func (m memStreams) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(m).ReadAt(p, off)
}

func (m memStreams) NewReader(off int64) io.ReadCloser {
	return io.NopCloser(bytes.NewReader(m[off:]))
}

func (m memStreams) NewRangeReader(off, n int64) io.ReadCloser {
	return io.NopCloser(bytes.NewReader(m[off : off+n]))
}

func (m memStreams) Streams() int { return 3 }

// compareParallel fails t unless the parallel index (got, ok) is the
// serial one (want, err) or, when mayDecline, declined.
func compareParallel(t *testing.T, name string, n int, mayDecline bool, want *index, err error, got *index, ok bool) {
	t.Helper()
	switch {
	case err != nil && ok:
		t.Fatalf("%s, %d ranges: the serial index fails (%v), the parallel one does not", name, n, err)
	case err != nil:
		return
	case !ok && !mayDecline:
		t.Fatalf("%s, %d ranges: the parallel index declined a valid file", name, n)
	case ok && !reflect.DeepEqual(got, want):
		// Name the first field that differs, briefly (fmt reads
		// unexported fields; nil and empty print alike).
		g, w := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
		for i := range g.NumField() {
			if a, b := fmt.Sprint(g.Field(i)), fmt.Sprint(w.Field(i)); a != b {
				t.Fatalf("%s, %d ranges: indexes differ in %s:\nparallel %.300s\nserial   %.300s", name, n, g.Type().Field(i).Name, a, b)
			}
		}
		t.Fatalf("%s, %d ranges: indexes differ (a nil table against an empty one)", name, n)
	}
}

// TestParallelIndexRealFiles: CNTK's own test files, every configuration
// that changes the index, 2-9 ranges.
func TestParallelIndexRealFiles(t *testing.T) {
	for _, f := range []string{"ctf/atis/atis.test.ctf", "ctf/cmudict/cmudict-0.7b.test.ctf", "ctf/reader_tests/Data/invalid_inputs.txt"} {
		data, err := os.ReadFile(shared.Need(t, f))
		if err != nil {
			t.Fatal(err)
		}
		streams := []corpus.Stream{sparse("S0", 943), sparse("S1", 943), sparse("S2", 129), dense("A", 1)}
		for _, cfg := range []Config{
			{Streams: streams},
			{Streams: streams, Label: "S1", ChunkBytes: 100000},
			{Streams: streams, DefinesMBSize: "S2", ChunkSequences: 7},
			{Streams: streams, LineMode: true, DefinesMBSize: "S1", ChunkBytes: 4096},
		} {
			for n := 2; n <= 9; n++ {
				parallelMatches(t, f, data, cfg, n, false)
			}
		}
	}
}

// TestOpenIndexesInParallel: Open indexes a file large enough for two
// ranges in parallel, and gets the serial index.
func TestOpenIndexesInParallel(t *testing.T) {
	data, err := os.ReadFile(shared.Need(t, "ctf/atis/atis.test.ctf"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Streams: []corpus.Stream{sparse("S0", 943), sparse("S1", 26), sparse("S2", 129)}, Label: "S2", ChunkBytes: 64 << 10}
	want, err := buildIndex(bytes.NewReader(data), &cfg, "atis")
	if err != nil {
		t.Fatal(err)
	}
	defer func(v int64) { indexPiece = v }(indexPiece)
	indexPiece = int64(len(data)) / 4
	p := writeTemp(t, string(data))
	for _, procs := range []int{2, 4} {
		if indexRanges(int64(len(data)), procs, maxPiece) != procs {
			t.Fatalf("test setup: %d ranges on %d cores", indexRanges(int64(len(data)), procs, maxPiece), procs)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		x, ok := parallelIndex(nil, f, int64(len(data)), procs, &cfg, p)
		f.Close()
		if !ok {
			t.Fatalf("%d ranges: declined", procs)
		}
		if !reflect.DeepEqual(x, want) {
			t.Fatalf("%d ranges: index differs from the serial one", procs)
		}
	}
	r, err := Open(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !sameIndex(r.x, want) {
		t.Fatal("Open's index differs from the serial one")
	}
}

// randomCTF writes a CTF-like file that exercises what a cut between
// ranges can split: sequences of many lines, lines without an id that
// continue a sequence, an id repeated after lines without one, the same
// id again later (a new sequence), blank lines, CRLF, sequences without
// the defines_mb_size stream, a leading byte order mark and blank lines,
// and an unterminated last line.
func randomCTF(r *rand.Rand, lineMode bool) []byte {
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteString("\xEF\xBB\xBF")
	}
	for range r.IntN(3) {
		b.WriteString(" \t\n")
	}
	nl := func() {
		if r.IntN(5) == 0 {
			b.WriteString("\r")
		}
		b.WriteString("\n")
	}
	body := func() {
		if r.IntN(3) > 0 {
			fmt.Fprintf(&b, " |a %d %d", r.IntN(9), r.IntN(9))
		}
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, " |b %d:1", r.IntN(4))
		}
	}
	seqs := 1 + r.IntN(60)
	for s := range seqs {
		id := s
		if r.IntN(8) == 0 && s > 1 {
			id = r.IntN(s - 1) // an id seen before, not the previous one
		}
		lines := 1 + r.IntN(6)
		for l := range lines {
			switch {
			case lineMode:
			case l == 0 || r.IntN(3) == 0:
				fmt.Fprintf(&b, "%d", id)
			case r.IntN(6) == 0:
				// a blank continuation line
				nl()
				continue
			}
			body()
			if s < seqs-1 || l < lines-1 || r.IntN(3) > 0 {
				nl()
			}
		}
	}
	return []byte(b.String())
}

// TestParallelIndexRandom: random files in every configuration, cut in 2-9
// ranges at every place the range arithmetic picks.
func TestParallelIndexRandom(t *testing.T) {
	for i := range 150 {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		lineMode := i%4 == 3
		data := randomCTF(r, lineMode)
		cfg := Config{Streams: []corpus.Stream{dense("a", 2), sparse("b", 4)}, LineMode: lineMode && i%8 == 3, ChunkBytes: int64(16 + r.IntN(200))}
		switch i % 3 {
		case 1:
			cfg.DefinesMBSize = "a"
		case 2:
			cfg.Label = "b"
		}
		for n := 2; n <= 9; n++ {
			// A parallel index declines when the first data line is not in
			// the first range; only tiny files and many ranges do that.
			parallelMatches(t, fmt.Sprintf("random %d", i), data, cfg, n, true)
		}
	}
}

// TestParallelIndexDeclines: what the parallel index leaves to the serial
// one, which reports it at its line.
func TestParallelIndexDeclines(t *testing.T) {
	cfg := Config{Streams: []corpus.Stream{dense("a", 1)}}
	for name, in := range map[string]string{
		"UTF-16":                   "\xFF\xFE1 |a 1\n2 |a 2\n3 |a 3\n4 |a 4\n",
		"no id on the first line":  " x 1\n1 |a 1\n2 |a 2\n3 |a 3\n",
		"blank first range":        "\n\n\n\n\n\n\n\n\n\n\n\n\n1 |a 1\n",
		"no newline in the buffer": "1 |a 1",
	} {
		if _, ok := parallelIndex(nil, bytes.NewReader([]byte(in)), int64(len(in)), 2, &cfg, name); ok {
			t.Errorf("%s: indexed in parallel", name)
		}
	}
	// The whole Open path reports the serial indexer's error.
	defer func(v int64) { indexPiece = v }(indexPiece)
	indexPiece = 4
	p := writeTemp(t, " x 1\n1 |a 1\n2 |a 2\n3 |a 3\n")
	_, err := Open(p, cfg)
	if err == nil || !strings.Contains(err.Error(), ":1:1") {
		t.Fatalf("Open: %v, want the missing id at line 1, column 1", err)
	}
}

// TestIndexRanges: how many pieces a file is cut in: one per core, more
// when a piece would pass maxPiece.
func TestIndexRanges(t *testing.T) {
	for _, c := range []struct {
		size  int64
		procs int
		want  int
	}{{0, 8, 0}, {indexPiece - 1, 8, 0}, {2 * indexPiece, 1, 1}, {2 * indexPiece, 2, 2}, {100 * indexPiece, 4, int(100 * indexPiece / maxPiece)},
		{5 * maxIndexRange, 2, int(5 * maxIndexRange / maxPiece)}, {3 * maxPiece, 2, 3}, {3*maxPiece + 1, 2, 4}} {
		if got := indexRanges(c.size, c.procs, maxPiece); got != c.want {
			t.Errorf("indexRanges(%d, %d) = %d, want %d", c.size, c.procs, got, c.want)
		}
	}
}

// FuzzParallelIndex: on arbitrary bytes, the parallel index is the serial
// one or declines; it never succeeds where the serial index fails.
func FuzzParallelIndex(f *testing.F) {
	for _, s := range []string{"1 |a 1 |b 1:2\n1 |a 2\n2 |a 1\n", "|a 1\n|b 0:1\n|a 2\n", "\xEF\xBB\xBF1 |a 1\r\n2 |a 2\n",
		"\xFF\xFE", "1 |a 1\n |a 2\n\n1 |a 3\n2 |b 1:1\n", "\n\n1 |a 1\n1 |a 1\n"} {
		f.Add([]byte(s), false, uint8(0), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, lineMode bool, mb, n uint8) {
		cfg := Config{Streams: []corpus.Stream{dense("a", 2), sparse("b", 4)}, LineMode: lineMode, ChunkBytes: 16}
		if mb%3 == 1 {
			cfg.DefinesMBSize = "a"
		} else if mb%3 == 2 {
			cfg.Label = "b"
		}
		parallelMatches(t, "fuzz", data, cfg, 2+int(n%8), true)
	})
}

// streamedFile is a file whose index pass must read through NewReader (as
// an object's does, one request per piece); it counts the streams and the
// bytes read by ReadAt.
type streamedFile struct {
	*os.File
	streams, readAt atomic.Int64
}

func (s *streamedFile) NewReader(off int64) io.ReadCloser {
	s.streams.Add(1)
	return io.NopCloser(io.NewSectionReader(s.File, off, 1<<62))
}

func (s *streamedFile) ReadAt(p []byte, off int64) (int, error) {
	s.readAt.Add(int64(len(p)))
	return s.File.ReadAt(p, off)
}

// streamedCorpus writes a corpus of n sequences for the streamed index
// tests and opens it as a plain file; it returns the path, the config, that
// reader (closed when the test ends) and the file's size.
func streamedCorpus(t *testing.T, n int) (string, Config, *Reader, int64) {
	path := tinyCorpus(t, n)
	cfg := Config{Streams: []corpus.Stream{dense("a", 1), sparse("b", 5)}, ChunkSequences: 1000}
	want, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { want.Close() })
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, cfg, want, info.Size()
}

// sameCounts reports whether two readers have the same chunks and counts.
func sameCounts(got, want *Reader) bool {
	return reflect.DeepEqual(got.Layout().Samples, want.Layout().Samples) && reflect.DeepEqual(got.Layout().ChunkStart, want.Layout().ChunkStart)
}

// TestIndexPiecesStreamed: a blob that streams (corpus.Streamer) is indexed
// with one stream per piece, serially and in parallel, and gives the index
// a plain file gives; ReadAt reads only the starts of the pieces.
func TestIndexPiecesStreamed(t *testing.T) {
	path, cfg, want, size := streamedCorpus(t, 30000)
	for _, pieces := range []int64{1, 4} {
		defer func(v, m int64) { indexPiece, maxPiece = v, m }(indexPiece, maxPiece)
		indexPiece, maxPiece = size/pieces, size/pieces+1
		if pieces == 1 {
			indexPiece = size + 1 // serial
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sf := &streamedFile{File: f}
		got, err := OpenContext(context.Background(), path, cfg, OpenOptions{File: sf})
		if err != nil {
			t.Fatal(err)
		}
		if n := sf.streams.Load(); n != pieces {
			t.Errorf("%d pieces: %d streams", pieces, n)
		}
		if n := sf.readAt.Load(); n > 4*pieces*indexBufSize {
			t.Errorf("%d pieces: %d bytes read by ReadAt besides the streams", pieces, n)
		}
		if !sameCounts(got, want) {
			t.Errorf("%d pieces: the streamed index differs from the file's", pieces)
		}
		got.Close()
	}
}

// hintLog is a reader that is a corpus.Hinter (as an object is) and logs
// its hints and reads in order.
type hintLog struct {
	*bytes.Reader
	mu  sync.Mutex
	log []string
}

func (h *hintLog) Hint(off, n int64) {
	h.mu.Lock()
	h.log = append(h.log, fmt.Sprintf("hint %d", off))
	h.mu.Unlock()
}

func (h *hintLog) ReadAt(p []byte, off int64) (int, error) {
	h.mu.Lock()
	h.log = append(h.log, fmt.Sprintf("read %d", off))
	h.mu.Unlock()
	return h.Reader.ReadAt(p, off)
}

// TestParallelIndexHintsBounds: before it looks for the first line of
// each piece of a Hinter (an object), the pass hints every such place, so
// the round trips overlap; the index is the serial one.
func TestParallelIndexHintsBounds(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&b, "%d |x %d\n", i/2, i)
	}
	data := []byte(b.String())
	cfg := Config{Streams: []corpus.Stream{{Name: "x", Dim: 1}}, ChunkBytes: 4096}
	want, err := buildIndex(bytes.NewReader(data), &cfg, "h")
	if err != nil {
		t.Fatal(err)
	}
	h := &hintLog{Reader: bytes.NewReader(data)}
	const n = 4
	x, ok := parallelIndex(nil, h, int64(len(data)), n, &cfg, "h")
	if !ok || !reflect.DeepEqual(x, want) {
		t.Fatalf("declined (%v) or an index unlike the serial one", ok)
	}
	hinted := 0
	for _, e := range h.log {
		if strings.HasPrefix(e, "hint ") {
			hinted++
			continue
		}
		if e != "read 0" { // the first line's read needs no bound
			break
		}
	}
	if hinted != n-1 {
		t.Fatalf("%d bounds hinted before the first probe, want %d: %v", hinted, n-1, h.log[:min(len(h.log), 8)])
	}
}

// rangedFile is a streamedFile that streams ranges (corpus.ParallelStreamer)
// and asks for want streams at once; it records the most streams read at
// once (from a stream's first read to its close) and the ranges asked for.
type rangedFile struct {
	streamedFile
	want           int
	open, maxOpen  atomic.Int64
	mu             sync.Mutex
	ranges         [][2]int64
	plainReaderUse atomic.Int64
}

func (r *rangedFile) Streams() int { return r.want }

func (r *rangedFile) NewReader(off int64) io.ReadCloser {
	r.plainReaderUse.Add(1)
	return r.streamedFile.NewReader(off)
}

func (r *rangedFile) NewRangeReader(off, n int64) io.ReadCloser {
	r.streams.Add(1)
	r.mu.Lock()
	r.ranges = append(r.ranges, [2]int64{off, off + n})
	r.mu.Unlock()
	return &rangedStream{r: r, sr: io.NewSectionReader(r.File, off, n)}
}

// rangedStream counts itself open from its first Read to its Close.
type rangedStream struct {
	r             *rangedFile
	sr            io.Reader
	opened, close sync.Once
	read          atomic.Bool
}

func (s *rangedStream) Read(p []byte) (int, error) {
	s.opened.Do(func() {
		s.read.Store(true)
		r := s.r
		k := r.open.Add(1)
		for m := r.maxOpen.Load(); k > m && !r.maxOpen.CompareAndSwap(m, k); m = r.maxOpen.Load() {
		}
		// Each of the first streams waits (up to a limit) for the others
		// to open: a pass that reads fewer at once is seen to.
		for deadline := time.Now().Add(2 * time.Second); r.maxOpen.Load() < int64(r.want) && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	})
	return s.sr.Read(p)
}

func (s *rangedStream) Close() error {
	s.close.Do(func() {
		if s.read.Load() {
			s.r.open.Add(-1)
		}
	})
	return nil
}

// TestIndexParallelStreams: a blob whose streams are capped one by one
// (corpus.ParallelStreamer, an object) is indexed with as many ranged
// streams at once as it asks for, though there are fewer cores, in pieces
// smaller in proportion that tile the file; the index is a plain file's.
func TestIndexParallelStreams(t *testing.T) {
	path, cfg, want, size := streamedCorpus(t, 60000)
	defer func(v, m, s int64) { indexPiece, maxPiece, minStreamPiece = v, m, s }(indexPiece, maxPiece, minStreamPiece)
	// More streams than cores; a piece per core would be a quarter of the
	// file, and each stream's piece is smaller in proportion.
	streams := max(8, 2*procs.Compute())
	indexPiece, maxPiece, minStreamPiece = size/int64(4*streams), size/4+1, 1
	largest := maxPiece * int64(max(2, procs.Compute())) / int64(streams)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rf := &rangedFile{streamedFile: streamedFile{File: f}, want: streams}
	got, err := OpenContext(context.Background(), path, cfg, OpenOptions{File: rf})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if !sameCounts(got, want) {
		t.Error("the index read in ranged streams differs from the file's")
	}
	if n := rf.plainReaderUse.Load(); n != 0 {
		t.Errorf("%d streams to the end of the blob; want ranged ones only", n)
	}
	if m := rf.maxOpen.Load(); m != int64(streams) {
		t.Errorf("at most %d streams open at once; want %d", m, streams)
	}
	// The ranges run from a byte before each nominal cut to streamSlack
	// past the next, and so cover the file.
	slices.SortFunc(rf.ranges, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	at := int64(0)
	for _, r := range rf.ranges {
		if r[0] > at || r[1] <= r[0] || at-r[0] > streamSlack+1 {
			t.Fatalf("ranges %v: do not cover the file, or overlap by more than the slack", rf.ranges)
		}
		if r[1]-r[0] > largest+streamSlack+1 {
			t.Errorf("a range of %d bytes; want at most %d (a core's share over the streams per core) and the slack", r[1]-r[0], largest)
		}
		at = r[1]
	}
	if at != size {
		t.Errorf("ranges end at %d, the file at %d", at, size)
	}
}

// TestPiecing: the pieces an object asks for are bounded by the lists one
// piece per core would hold, whatever its Streams; a file and an object
// asking for no more than the cores get one piece per core.
func TestPiecing(t *testing.T) {
	cores := max(2, procs.Compute())
	held := maxPiece * int64(cores)
	for _, c := range []struct {
		streams     int
		wantAtOnce  int
		wantLargest int64
	}{
		{1000, int(held / minStreamPiece), minStreamPiece},
		{2 * cores, 2 * cores, held / int64(2*cores)},
	} {
		at, largest := piecing(&rangedFile{want: c.streams})
		if at != c.wantAtOnce || largest != c.wantLargest {
			t.Errorf("%d streams: %d at once, pieces up to %d; want %d and %d", c.streams, at, largest, c.wantAtOnce, c.wantLargest)
		}
	}
	for _, f := range []io.ReaderAt{&rangedFile{want: 1}, &streamedFile{}} {
		if at, largest := piecing(f); at != procs.Compute() || largest != maxPiece {
			t.Errorf("%T: %d at once, pieces up to %d; want one per core and %d", f, at, largest, maxPiece)
		}
	}
}
