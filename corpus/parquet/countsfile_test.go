package parquet

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	pq "github.com/parquet-go/parquet-go"
)

// pagedFile writes n rows of a sparse stream x (dimension 50, 1 to 9
// samples) and ids, 2,000 rows per row group in pages of about page bytes
// (an offset index locates them), and returns its path.
func pagedFile(t testing.TB, n, page int) string {
	t.Helper()
	g := pq.Group{"x": list(i32), "id": pq.String()}
	var b bytes.Buffer
	w := pq.NewGenericWriter[map[string]any](&b, pq.NewSchema("t", g), pq.MaxRowsPerRowGroup(2000), pq.PageBufferSize(page))
	rows := make([]map[string]any, n)
	for i := range rows {
		x := make([]any, 1+(i*7)%9)
		for j := range x {
			x[j] = int32((i + j) % 50)
		}
		rows[i] = map[string]any{"x": x, "id": "s" + string(rune('a'+i%26))}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "paged.parquet")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var pagedStreams = []corpus.Stream{{Name: "x", Dim: 50, Sparse: true}}

// allChunks loads every chunk of r.
func allChunks(t *testing.T, r *Reader) []*corpus.Chunk {
	t.Helper()
	var out []*corpus.Chunk
	for c := range r.Layout().NumChunks() {
		out = append(out, chunk(t, r, c))
	}
	return out
}

// TestCountsFile (invariant 6): with a CacheDir, an open keeps the counts
// its index pass learned, and the next open with the same settings reads
// no rows and gives the same layout, totals and chunks. Counts for other
// settings, or damaged, are reported and not used (the pass runs and
// rewrites them).
func TestCountsFile(t *testing.T) {
	p := pagedFile(t, 5000, 1024)
	var warnings []string
	cfg := Config{Streams: pagedStreams, ChunkSequences: 200, CacheDir: t.TempDir(),
		Warn: func(msg string) { warnings = append(warnings, msg) }}
	passes := 0
	cfg.OnIndexPass = func() { passes++ }
	first := openT(t, p, cfg)
	defer first.Close()
	if first.FromCounts() || passes != 1 {
		t.Fatalf("first open: from counts %v, %d passes", first.FromCounts(), passes)
	}
	if _, err := os.Stat(CountsPath(p, cfg)); err != nil {
		t.Fatalf("no counts kept: %v", err)
	}
	second := openT(t, p, cfg)
	defer second.Close()
	if !second.FromCounts() || passes != 1 || len(warnings) > 0 {
		t.Fatalf("second open: from counts %v, %d passes, warnings %v", second.FromCounts(), passes, warnings)
	}
	if first.Layout().Hash() != second.Layout().Hash() || !reflect.DeepEqual(first.StreamSamples(), second.StreamSamples()) ||
		first.MaxSequenceBytes() != second.MaxSequenceBytes() || !reflect.DeepEqual(first.Fingerprint(), second.Fingerprint()) {
		t.Error("the layout, totals, largest sequence or fingerprint differ when read from the counts")
	}
	if !reflect.DeepEqual(allChunks(t, first), allChunks(t, second)) {
		t.Error("the chunks differ when the counts come from the counts file")
	}

	other := cfg
	other.ChunkSequences = 300
	r := openT(t, p, other)
	r.Close()
	if r.FromCounts() || len(warnings) != 1 || !strings.Contains(warnings[0], errCountsMismatch.Error()) {
		t.Errorf("counts for other settings: from counts %v, warnings %v", r.FromCounts(), warnings)
	}
	if r = openT(t, p, other); !r.FromCounts() {
		t.Error("the counts were not rewritten for the new settings")
	}
	r.Close()

	path := CountsPath(p, cfg)
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 0x40
	os.WriteFile(path, data, 0o644)
	warnings = nil
	if r = openT(t, p, cfg); r.FromCounts() || len(warnings) != 1 || !strings.Contains(warnings[0], path) {
		t.Errorf("damaged counts: from counts %v, warnings %v", r.FromCounts(), warnings)
	}
	r.Close()
}

// TestCountsThatDoNotMatch: a counts file made for this version of the
// file whose counts differ from the rows (written by hand here) is found
// out by the first load of a chunk that differs: an error, never a chunk
// whose sequences disagree with the layout.
func TestCountsThatDoNotMatch(t *testing.T) {
	p := pagedFile(t, 1000, 1024)
	cfg := Config{Streams: pagedStreams, ChunkSequences: 200, CacheDir: t.TempDir()}
	r := openT(t, p, cfg)
	r.layout.Samples[450]++
	if err := r.saveCounts(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r = openT(t, p, cfg)
	defer r.Close()
	if !r.FromCounts() {
		t.Fatal("the counts file was not used")
	}
	chunk(t, r, 0)
	_, err := r.LoadChunk(2)
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "row 450: 1 sample, but the index says 2") || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("LoadChunk(2): %v, want the mismatch at row 450", err)
	}
}

// TestCountsLoadChecksPageHeaders: an open from the counts reads no page,
// so a load checks the headers of the pages it reads: a header declaring
// more than its column chunk (outside the edges the counts' key hashes) is
// reported as damaged when a chunk with rows in that page loads, before
// the library allocates what it declares; the other chunks load.
func TestCountsLoadChecksPageHeaders(t *testing.T) {
	p := pagedFile(t, 20000, 16<<10)
	cfg := Config{Streams: pagedStreams, ChunkSequences: 500, CacheDir: t.TempDir()}
	openT(t, p, cfg).Close()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	const g = 5 // rows 10000-11999
	xcol := -1
	for i, c := range pf.Metadata().RowGroups[g].Columns {
		if c.MetaData.PathInSchema[0] == "x" {
			xcol = i
		}
	}
	ncols := len(pf.Metadata().RowGroups[g].Columns)
	locs := pf.OffsetIndexes()[g*ncols+xcol].PageLocations
	if len(locs) < 3 {
		t.Fatalf("%d pages in row group %d", len(locs), g)
	}
	loc := locs[1]
	pageRows := [2]int{g*2000 + int(loc.FirstRowIndex), g*2000 + int(locs[2].FirstRowIndex)}
	if loc.Offset < fingerprintEdge || loc.Offset > int64(len(data))-fingerprintEdge {
		t.Fatalf("the page at %d lies in the edges of a file of %d bytes", loc.Offset, len(data))
	}
	info, _ := os.Stat(p)
	oversize(t, data, loc.Offset, pf.Metadata().RowGroups[g].Columns[xcol].MetaData.TotalUncompressedSize)
	os.WriteFile(p, data, 0o644)
	os.Chtimes(p, info.ModTime(), info.ModTime()) // the same version, as far as the key can tell

	r := openT(t, p, cfg)
	defer r.Close()
	if !r.FromCounts() {
		t.Fatal("the counts file was not used")
	}
	bad := 0
	for c := range r.Layout().NumChunks() {
		a, e := r.Layout().Chunk(c)
		inPage := a < pageRows[1] && pageRows[0] < e
		_, err := r.LoadChunk(c)
		switch {
		case err == nil && !inPage:
		case inPage && errors.Is(err, ErrDamaged) && strings.Contains(err.Error(), "page header does not fit"):
			bad++
		default:
			t.Errorf("chunk %d (rows %d-%d, the page's %v): %v", c, a, e, pageRows, err)
		}
	}
	if bad == 0 {
		t.Error("no chunk reported the damaged page")
	}
}

// TestLoadReadsItsPages (invariant 6): a chunk's load reads the pages
// that hold its rows, not the rest of their column chunks: a tenth of a
// row group's rows costs well under a third of its bytes.
func TestLoadReadsItsPages(t *testing.T) {
	p := pagedFile(t, 6000, 1024)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b := &spanLog{memBlob: memBlob{bytes.NewReader(data)}}
	cfg := Config{Streams: pagedStreams, ChunkSequences: 200}
	r, err := OpenFile(context.Background(), b, "f.parquet", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var group int64 // row group 1's bytes of the columns read
	for _, c := range r.pf.Metadata().RowGroups[1].Columns {
		group += c.MetaData.TotalCompressedSize
	}
	for _, c := range []int{12, 17} { // rows 2400-2599 and 3400-3599 of row group 1's 2000-3999
		b.reads = nil
		chunk(t, r, c)
		if b.read() > group/3 {
			t.Errorf("chunk %d: read %d bytes of a row group of %d, want under a third", c, b.read(), group)
		}
	}
}

// FuzzCounts: no counts file, however damaged, panics the decoder or
// gives a layout that breaks its invariants; one that decodes describes
// the file's rows.
func FuzzCounts(f *testing.F) {
	p := pagedFile(f, 300, 1024)
	cfg := Config{Streams: pagedStreams, ChunkSequences: 40, CacheDir: f.TempDir()}
	r, err := Open(p, cfg)
	if err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(CountsPath(p, cfg))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(countsMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) >= 44 {
			copy(data[12:44], r.key[:]) // past the key, where the decoder's work is
		}
		fresh := *r
		if _, err := fresh.decodeCounts(bytes.NewReader(data), int64(len(data))); err != nil {
			return
		}
		if err := fresh.layout.Validate(); err != nil {
			t.Fatalf("a decoded layout breaks its invariants: %v", err)
		}
		if fresh.layout.NumSequences() != r.layout.NumSequences() {
			t.Fatalf("%d sequences decoded for a file of %d rows", fresh.layout.NumSequences(), r.layout.NumSequences())
		}
	})
}

// TestCountsDamagedNeverUsed: a counts file cut short, emptied, or with a
// bit flipped at any byte is reported and never used: the open counts the
// rows again, with the same layout, and rewrites a sound file.
func TestCountsDamagedNeverUsed(t *testing.T) {
	p := pagedFile(t, 300, 1024)
	var warned int
	cfg := Config{Streams: pagedStreams, ChunkSequences: 40, CacheDir: t.TempDir(), Warn: func(string) { warned++ }}
	r := openT(t, p, cfg)
	want := r.Layout().Hash()
	r.Close()
	path := CountsPath(p, cfg)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damages := [][]byte{nil, good[:len(good)/2], good[:len(good)-1]}
	for i := range good {
		d := bytes.Clone(good)
		d[i] ^= 1 << (i % 8)
		damages = append(damages, d)
	}
	for i, d := range damages {
		os.WriteFile(path, d, 0o644)
		warned = 0
		r := openT(t, p, cfg)
		if r.FromCounts() || warned != 1 || r.Layout().Hash() != want {
			t.Fatalf("damage %d: from counts %v, %d warnings, same layout %v", i, r.FromCounts(), warned, r.Layout().Hash() == want)
		}
		r.Close()
		if again, _ := os.ReadFile(path); !bytes.Equal(again, good) {
			t.Fatalf("damage %d: the counts were not rewritten", i)
		}
	}
	t.Logf("%d damages of a %d-byte counts file", len(damages), len(good))
}

// TestPrefetchHintsTheLoad: Prefetch(c) hints an object of the bytes chunk
// c's load then reads, for a chunk inside a row group and one across two.
func TestPrefetchHintsTheLoad(t *testing.T) {
	data, err := os.ReadFile(pagedFile(t, 6000, 1024))
	if err != nil {
		t.Fatal(err)
	}
	b := &spanLog{memBlob: memBlob{bytes.NewReader(data)}}
	r, err := OpenFile(context.Background(), b, "f.parquet", Config{Streams: pagedStreams, ChunkSequences: 300})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []int{3, 6} { // rows 900-1199; 1800-2099 across row groups 0 and 1
		b.hints, b.reads = nil, nil
		r.Prefetch(c)
		hinted := b.hints
		if len(hinted) == 0 {
			t.Fatalf("chunk %d: nothing hinted", c)
		}
		chunk(t, r, c)
		for _, rd := range b.reads {
			if !slices.ContainsFunc(hinted, func(h [2]int64) bool { return h[0] <= rd[0] && rd[1] <= h[1] }) {
				t.Errorf("chunk %d: read [%d, %d) outside the hints %v", c, rd[0], rd[1], hinted)
			}
		}
	}
}

// TestSharedPagesFetchedWhole: a column whose pages hold more rows than a
// chunk (here the ids, beside a stream of 50 values a row) is hinted whole
// by every load in its row group, one range an object fetches once,
// instead of a different run of pages per load, each fetched again; the
// stream's own pages are still hinted by the load.
func TestSharedPagesFetchedWhole(t *testing.T) {
	g := pq.Group{"x": list(i32), "id": pq.String()}
	var b bytes.Buffer
	w := pq.NewGenericWriter[map[string]any](&b, pq.NewSchema("t", g), pq.MaxRowsPerRowGroup(2000), pq.PageBufferSize(1024))
	rows := make([]map[string]any, 4000)
	for i := range rows {
		x := make([]any, 50)
		for j := range x {
			x[j] = int32((i*7 + j) % 50)
		}
		rows[i] = map[string]any{"x": x, "id": strconv.Itoa(i % 10)}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	blob := &spanLog{memBlob: memBlob{bytes.NewReader(b.Bytes())}}
	// Pages of 64 rows of x and of 256 ids; chunks of 100 rows.
	r, err := OpenFile(context.Background(), blob, "f.parquet", Config{Streams: pagedStreams, ChunkSequences: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md := r.pf.Metadata().RowGroups[1]
	var id, x span
	for _, c := range md.Columns {
		lo, hi := chunkSpan(&c.MetaData)
		if c.MetaData.PathInSchema[0] == "id" {
			id = span{lo, hi}
		} else {
			x = span{lo, hi}
		}
	}
	for c := 20; c < 40; c += 3 { // chunks of row group 1 (rows 2000-3999)
		blob.hints = nil
		chunk(t, r, c)
		idWhole, xWhole := false, false
		for _, h := range blob.hints {
			idWhole = idWhole || h[0] <= id.lo && id.hi <= h[1]
			xWhole = xWhole || h[0] <= x.lo && x.hi <= h[1]
		}
		if !idWhole || xWhole {
			t.Errorf("chunk %d: hinted whole: the id column chunk %v %v, the x column chunk %v %v: %v", c, id, idWhole, x, xWhole, blob.hints)
		}
	}
}
