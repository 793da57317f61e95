package ctf

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/shared"
)

func ids(t *testing.T, r *Reader) []string {
	var out []string
	for _, ch := range loadAll(t, r) {
		out = append(out, ch.IDs...)
	}
	return out
}

// Invariant 2: ids, continuation lines, BOM, CRLF, leading blank lines.
func TestIndexSequences(t *testing.T) {
	cfg := Config{Streams: []corpus.Stream{dense("a", 1), dense("b", 1)}}
	for name, tc := range map[string]struct {
		in      string
		ids     []string
		samples []uint32
	}{
		"plain":          {"1 |a 1 |b 1\n1 |a 2\n2 |a 3 |b 3\n", []string{"1", "2"}, []uint32{2, 1}},
		"no newline":     {"1 |a 1 |b 1\n1 |a 2", []string{"1"}, []uint32{2}},
		"crlf":           {"1 |a 1 |b 1\r\n1 |a 2\r\n2 |a 3 |b 3\r\n", []string{"1", "2"}, []uint32{2, 1}},
		"bom":            {"\xEF\xBB\xBF7 |a 1 |b 1\n", []string{"7"}, []uint32{1}},
		"continuation":   {"5 |a 1 |b 1\n |a 2\n\t|a 3\n6 |a 1 |b 2\n", []string{"5", "6"}, []uint32{3, 1}},
		"repeated ids":   {"1 |a 1 |b 1\n2 |a 1 |b 1\n1 |a 1 |b 1\n", []string{"1", "2", "1"}, []uint32{1, 1, 1}},
		"leading blank":  {"\n  \n\r\n1 |a 1 |b 1\n", []string{"1"}, []uint32{1}},
		"ids as written": {"01 |a 1 |b 1\n1 |a 1 |b 1\n", []string{"01", "1"}, []uint32{1, 1}},
		"empty":          {"", nil, []uint32{}},
	} {
		r := openString(t, tc.in, cfg, nil)
		if got := ids(t, r); !reflect.DeepEqual(got, tc.ids) {
			t.Errorf("%s: ids %q, want %q", name, got, tc.ids)
		}
		if got := r.Layout().Samples; !reflect.DeepEqual(got, tc.samples) && !(len(got) == 0 && len(tc.samples) == 0) {
			t.Errorf("%s: samples %v, want %v", name, got, tc.samples)
		}
		if err := r.Layout().Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Invariant 2: line mode, by first byte or forced.
func TestIndexLineMode(t *testing.T) {
	cfg := Config{Streams: []corpus.Stream{dense("a", 1)}}
	r := openString(t, "\n|a 1\n|a 2\n7 |a 3\n", cfg, nil)
	if got, want := ids(t, r), []string{"1", "2", "3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("line mode ids %q, want %q (0-based line numbers)", got, want)
	}
	if !r.Summary().LineMode {
		t.Error("line mode not reported")
	}
	cfg.LineMode = true
	r = openString(t, "1 |a 1\n1 |a 2\n", cfg, nil)
	if got, want := ids(t, r), []string{"0", "1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("forced line mode ids %q, want %q", got, want)
	}
}

// Invariant 3: sample and label counts.
func TestIndexCounts(t *testing.T) {
	in := "1 |w 1 |i 1 |s 1\n1 |w 2 |s 2\n1 |w 3 |s 3\n2 |w 1 |i 2 |s 1\n2 |w 1 |s 1\n"
	streams := []corpus.Stream{dense("w", 1), dense("i", 1), dense("s", 1)}
	r := openString(t, in, Config{Streams: streams}, nil)
	l := r.Layout()
	if !reflect.DeepEqual(l.Samples, []uint32{3, 2}) || l.Labels != nil {
		t.Errorf("samples %v labels %v", l.Samples, l.Labels)
	}
	if got := r.Summary().Samples; !reflect.DeepEqual(got, []int64{5, 2, 5}) {
		t.Errorf("per-stream samples %v, want [5 2 5]", got)
	}
	r = openString(t, in, Config{Streams: streams, DefinesMBSize: "i", Label: "s"}, nil)
	l = r.Layout()
	if !reflect.DeepEqual(l.Samples, []uint32{1, 1}) || !reflect.DeepEqual(l.Labels, []uint32{3, 2}) {
		t.Errorf("mb=i label=s: samples %v labels %v", l.Samples, l.Labels)
	}
	loadAll(t, r)
}

// Invariant 3: a sequence without the defines_mb_size stream is dropped and
// charged; line-mode lines without it are skipped and counted.
func TestIndexDroppedSequence(t *testing.T) {
	in := "1 |a 1 |b 1\n2 |a 1\n3 |a 1 |b 1\n"
	cfg := Config{Streams: []corpus.Stream{dense("a", 1), dense("b", 1)}, DefinesMBSize: "b"}
	_, err := Open(writeTemp(t, in), cfg)
	if !errors.Is(err, ErrTooManyErrors) || !errors.Is(err, ErrNoMBSizeStream) {
		t.Fatalf("budget 0: got %v, want a budget error about the missing stream", err)
	}
	if e := asError(t, err); e.Line != 2 || e.Col != 1 || e.Offset != 12 {
		t.Errorf("position of %v, want line 2 col 1 offset 12", e)
	}
	var warns []Error
	cfg.MaxErrors = 1
	r := openString(t, in, cfg, &warns)
	if got := ids(t, r); !reflect.DeepEqual(got, []string{"1", "3"}) {
		t.Errorf("ids %q", got)
	}
	s := r.Summary()
	if s.BadSequences != 1 || s.Skipped["no-mb-size-stream"] != 1 {
		t.Errorf("summary %+v", s)
	}
	if !reflect.DeepEqual(s.Samples, []int64{2, 2}) {
		t.Errorf("per-stream samples %v, want [2 2] (the dropped sequence not counted)", s.Samples)
	}
	if len(warns) != 1 || warns[0].Line != 2 || warns[0].Offset != 12 {
		t.Errorf("warnings %+v, want one at line 2 offset 12", warns)
	}
	warns = nil
	r = openString(t, "|a 1 |b 1\n|a 2\n|a 3 |b 3\n", Config{Streams: cfg.Streams, DefinesMBSize: "b"}, &warns)
	if got := ids(t, r); !reflect.DeepEqual(got, []string{"0", "2"}) {
		t.Errorf("line mode ids %q", got)
	}
	if !reflect.DeepEqual(r.Summary().Samples, []int64{2, 2}) {
		t.Errorf("line mode per-stream samples %v, want [2 2] (the skipped line not counted)", r.Summary().Samples)
	}
	if r.Summary().Warnings["skipped-line"] != 1 || len(warns) != 1 {
		t.Errorf("skipped line not reported: %+v %v", r.Summary(), warns)
	}
}

// Invariant 2: encoding and missing ids are index errors with positions.
func TestIndexErrors(t *testing.T) {
	cfg := Config{Streams: []corpus.Stream{dense("a", 1)}}
	_, err := Open(writeTemp(t, "\xFF\xFE1\x00"), cfg)
	if !errors.Is(err, ErrEncoding) {
		t.Errorf("UTF-16: %v", err)
	}
	_, err = Open(writeTemp(t, "\n x |a 1\n"), cfg)
	if e := asError(t, err); !errors.Is(err, ErrNoID) || e.Line != 2 || e.Offset != 1 {
		t.Errorf("no id: %v", err)
	}
	_, err = Open(filepath.Join(t.TempDir(), "missing"), cfg)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Invariant 4: chunking by bytes and by count.
func TestIndexChunks(t *testing.T) {
	in := "1 |a 1\n2 |a 1\n2 |a 1\n3 |a 1\n4 |a 1\n5 |a 1\n5 |a 1\n5 |a 1\n"
	// sequence sizes: 7 14 7 7 21
	cfg := Config{Streams: []corpus.Stream{dense("a", 1)}, ChunkBytes: 21}
	r := openString(t, in, cfg, nil)
	if got := r.Layout().ChunkStart; !reflect.DeepEqual(got, []int{0, 2, 4, 5}) {
		t.Errorf("by bytes: %v, want [0 2 4 5]", got)
	}
	cfg.ChunkBytes = 10
	r = openString(t, in, cfg, nil)
	if got := r.Layout().ChunkStart; !reflect.DeepEqual(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("oversized sequences: %v", got)
	}
	cfg.ChunkBytes, cfg.ChunkSequences = 0, 2
	r = openString(t, in, cfg, nil)
	if got := r.Layout().ChunkStart; !reflect.DeepEqual(got, []int{0, 2, 4, 5}) {
		t.Errorf("by count: %v", got)
	}
	chunks := loadAll(t, r)
	if chunks[1].First != 2 || chunks[1].Len() != 2 || chunks[2].IDs[0] != "5" {
		t.Errorf("chunk contents: %+v", chunks[1])
	}
}

// Lines longer than the indexer's buffer are handled.
func TestIndexLongLine(t *testing.T) {
	long := make([]byte, 0, 3*indexBufSize)
	long = append(long, "1 |a"...)
	for len(long) < 3*indexBufSize {
		long = append(long, " 0:1"...)
	}
	in := string(long) + "\n2 |a 1:2\n"
	r := openString(t, in, Config{Streams: []corpus.Stream{sparse("a", 2)}}, nil)
	ch := loadAll(t, r)[0]
	if ch.Len() != 2 || ch.IDs[1] != "2" || len(ch.Streams[0].Values) != (3*indexBufSize-4)/4+1 {
		t.Errorf("long line: %d sequences, %d values", ch.Len(), len(ch.Streams[0].Values))
	}
}

// carriedReference is the obvious per-token version of indexer.carried.
func carriedReference(names []string, line []byte) uint64 {
	var mask uint64
	for i := 0; i < len(line); i++ {
		if line[i] != '|' {
			continue
		}
		e := i + 1
		for e < len(line) && !isNameEnd(line[e]) {
			e++
		}
		for s, nm := range names {
			if string(line[i+1:e]) == nm {
				mask |= 1 << uint(s)
			}
		}
	}
	return mask
}

// The SWAR stream finder agrees with the obvious one.
func TestCarriedMatchesReference(t *testing.T) {
	names := []string{"S0", "S1", "S", "features", "x"}
	cfg := Config{Streams: []corpus.Stream{dense("S0", 1), dense("S1", 1), dense("S", 1), dense("features", 1), dense("x", 1)}}
	m := newMatcher(cfg.Streams)
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"|", "S", "0", "1", " ", "\t", "#", "x", "features", "|S0", "|x ", ":", "\r", "|#"}
	for i := 0; i < 100000; i++ {
		var b []byte
		for k := rng.IntN(20); k > 0; k-- {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		if got, want := m.carried(b), carriedReference(names, b); got != want {
			t.Fatalf("%q: mask %b, want %b", b, got, want)
		}
	}
}

// The scanLines fast path and the line-by-line path build the same index,
// across buffer refills (ATIS test is 0.5 MB, cmudict test 4 MB > the 1 MiB
// buffer).
func TestFastPathMatchesLineByLine(t *testing.T) {
	for _, f := range []string{"ctf/atis/atis.test.ctf", "ctf/cmudict/cmudict-0.7b.test.ctf", "ctf/reader_tests/Data/invalid_inputs.txt"} {
		data, err := os.ReadFile(shared.Need(t, f))
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Streams: []corpus.Stream{sparse("S0", 943), sparse("S1", 943), dense("A", 1)}, Label: "S1", ChunkBytes: 100000}
		fast, err := buildIndex(bytes.NewReader(data), &cfg, f)
		if err != nil {
			t.Fatal(err)
		}
		ref := newIndexer(&cfg, f)
		ref.lineByLine = true
		if err := ref.run(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, ref.x) {
			t.Errorf("%s: indexes differ", f)
		}
	}
}

// The index keeps at most 8 bytes per sequence besides the layout's sample
// and label counts (per-sequence line numbers and ids are recovered at
// parse time): every per-sequence table is counted here by reflection, so a
// new one shows up.
func TestIndexCompact(t *testing.T) {
	data, err := os.ReadFile(shared.Need(t, "ctf/atis/atis.test.ctf"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Streams: []corpus.Stream{sparse("S0", 943), sparse("S1", 26), sparse("S2", 129)}, Label: "S2", ChunkBytes: 64 << 10}
	x, err := buildIndex(bytes.NewReader(data), &cfg, "atis")
	if err != nil {
		t.Fatal(err)
	}
	n := len(x.samples)
	v := reflect.ValueOf(x).Elem()
	per := 0
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		if f.Kind() != reflect.Slice || f.Len() != n || name == "samples" || name == "labels" {
			continue
		}
		per += int(f.Type().Elem().Size())
	}
	if per > 8 || per == 0 {
		t.Errorf("%d bytes per sequence besides the layout, want 1-8", per)
	}
	if c := len(x.chunkStart) - 1; c*50 > n {
		t.Fatalf("test needs many sequences per chunk: %d chunks, %d sequences", c, n)
	}
	if b := float64(x.memBytes()) / float64(n); b > 32 {
		t.Errorf("%.1f bytes per sequence in all, want <= 32 (16 + append's spare room)", b)
	}
}

// Invariant 4: a chunk also ends before a sequence that starts more than
// maxChunkSpan bytes after the chunk's first sequence (dropped sequences in
// between make the span larger than the chunk's bytes); line numbers and
// ids are still right.
func TestChunkSpanLimit(t *testing.T) {
	defer func(v int64) { maxChunkSpan = v }(maxChunkSpan)
	maxChunkSpan = 40
	// Sequences 2, 4 and 6 lack stream b and are dropped: 3 to 5 bytes of
	// chunk, 24 bytes of span each.
	in := "1 |a 1 |b 1\n2 |a 2\n2 |a 2\n3 |a 3 |b 3\n4 |a 4\n4 |a 4\n5 |a 5 |b 5\n6 |a 6\n6 |a 6\n7 |a 7 |b 7 |c\n"
	var warns []Error
	cfg := Config{Streams: []corpus.Stream{dense("a", 1), dense("b", 1)}, DefinesMBSize: "b", MaxErrors: 10, ChunkSequences: 100}
	r := openString(t, in, cfg, &warns)
	if got := r.Layout().ChunkStart; !reflect.DeepEqual(got, []int{0, 2, 4}) {
		t.Errorf("chunk starts %v, want [0 2 4] (a new chunk past 40 bytes of span)", got)
	}
	if err := r.x.check(int64(len(in))); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, r); !reflect.DeepEqual(got, []string{"1", "3", "5", "7"}) {
		t.Errorf("ids %q", got)
	}
	last := warns[len(warns)-1]
	if !errors.Is(last.Err, ErrUnknownStream) || last.Line != 10 || last.Col != 13 {
		t.Errorf("last warning %+v, want the unknown stream at line 10 col 13", last)
	}
}

// The SWAR finder of "|name" agrees with a byte-by-byte search, for names
// of one, two and many bytes, at every start position.
func TestFinderMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"|", "S", "2", "S2", "|S2", "|S", " ", "\t", "\n", "#", "a", "|a", "|features", "features", "\r", ":"}
	for _, name := range []string{"a", "S2", "features"} {
		f := newFinder(name, 1)
		for n := 0; n < 3000; n++ {
			var b []byte
			for k := rng.IntN(30); k > 0; k-- {
				b = append(b, alphabet[rng.IntN(len(alphabet))]...)
			}
			for from := 0; from <= len(b); from++ {
				want := len(b)
				for i := from; i < len(b); i++ {
					e := i + 1
					for e < len(b) && !isNameEnd(b[e]) {
						e++
					}
					if b[i] == '|' && string(b[i+1:e]) == name {
						want = i
						break
					}
				}
				if got := f.find(b, from); got != want {
					t.Fatalf("%q in %q from %d: %d, want %d", name, b, from, got, want)
				}
			}
		}
	}
}

// Invariant 3 and 7: in line mode with defines_mb_size each skipped line is
// named by its own warning (line, column, offset), the first
// maxSkippedNamed of them; the rest are one more warning with their count.
// The cache keeps them.
func TestSkippedLinesNamed(t *testing.T) {
	cfg := Config{Streams: []corpus.Stream{dense("a", 1), dense("b", 1)}, DefinesMBSize: "b"}
	var warns []Error
	openString(t, "|a 1 |b 1\n|a 2\n|a 3 |b 3\n|a 4\n", cfg, &warns)
	var lines []int64
	for _, w := range warns {
		if errors.Is(w.Err, ErrSkippedLine) && w.Col == 1 {
			lines = append(lines, w.Line)
		}
	}
	if !reflect.DeepEqual(lines, []int64{2, 4}) || warns[0].Offset != 10 {
		t.Errorf("skipped-line warnings %+v, want lines 2 and 4 (offset 10 and 28)", warns)
	}

	var b bytes.Buffer
	for i := 0; i < maxSkippedNamed+50; i++ {
		b.WriteString("|a 1 |b 1\n|a 2\n")
	}
	path := writeTemp(t, b.String())
	cfg.CacheIndex = true
	for pass := 0; pass < 2; pass++ { // build, then from the cache
		warns = nil
		cfg.Warn = func(e Error) { warns = append(warns, e) }
		r, err := Open(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Summary().FromCache != (pass == 1) || r.Summary().Warnings["skipped-line"] != maxSkippedNamed+50 {
			t.Errorf("pass %d: summary %+v", pass, r.Summary())
		}
		r.Close()
		if len(warns) != maxSkippedNamed+1 || warns[maxSkippedNamed-1].Line != 2*maxSkippedNamed ||
			!strings.Contains(warns[maxSkippedNamed].Msg, "50 more lines") {
			t.Fatalf("pass %d: %d warnings, last two %v", pass, len(warns), warns[len(warns)-2:])
		}
	}
	// One line past the named ones: its count in the singular.
	b.Reset()
	for i := 0; i < maxSkippedNamed+1; i++ {
		b.WriteString("|a 1 |b 1\n|a 2\n")
	}
	warns = nil
	cfg.CacheIndex = false
	r, err := Open(writeTemp(t, b.String()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if last := warns[len(warns)-1].Msg; !strings.HasPrefix(last, `1 more line without stream "b" after this one was skipped`) {
		t.Errorf("last warning %q", last)
	}
}
