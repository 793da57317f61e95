package parquet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sort"
	"strconv"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/mapped"
	"github.com/batchprep/batchprep/internal/pqframe"
	pq "github.com/parquet-go/parquet-go"
)

// Reader reads a Parquet corpus chunk by chunk. It implements
// corpus.Source and source.Fingerprinter.
type Reader struct {
	path    string
	f       corpus.Blob
	pf      *pq.File
	cfg     Config
	layout  *corpus.Layout
	first   []int64 // first[g]: file row of row group g's first row; last entry: the row count
	cols    []streamCols
	id      *shape // nil: ids are row numbers
	totals  []int64
	fp      map[string]string
	maxSeqB int64
	counts  *mapped.File // the layout's counts, when mapped (index.go)
	// fileSize and key identify the file's content (counts.go);
	// fromCounts: the layout came from a counts file, so loads check the
	// page headers they read and their rows' counts (invariant 6).
	fileSize   int64
	key        [32]byte
	fromCounts bool
}

// streamCols are the columns of one stream: its values (dense) or indices
// (sparse), and a sparse stream's optional values.
type streamCols struct {
	main, vals *shape
}

var _ corpus.Source = (*Reader)(nil)

// remoteReadBuffer is the read buffer of each column reader of a Parquet
// object (corpus.Hinter): a few of them per chunk being loaded.
const remoteReadBuffer = 256 << 10

// Magic is what a Parquet file starts (and ends) with.
const Magic = pqframe.Magic

// IsParquet reports whether the file at path starts with Parquet's magic.
func IsParquet(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && string(b[:]) == Magic
}

// Open opens a Parquet corpus and indexes it: it reads every configured
// column once, checks every row (invariant 3) and cuts the chunks
// (invariant 4).
func Open(path string, cfg Config) (*Reader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	r, err := open(nil, f, path, cfg)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// OpenFile is Open of a file the caller opened already: f is the file
// read (path names it in messages), and the index pass checks ctx between
// batches of rows, stopping with an error that unwraps to ctx.Err(). On
// success the Reader owns f (Close closes it); on error the caller does.
func OpenFile(ctx context.Context, f corpus.Blob, path string, cfg Config) (*Reader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return open(ctx, f, path, cfg)
}

func open(ctx context.Context, f corpus.Blob, path string, cfg Config) (r *Reader, err error) {
	defer func() {
		if p := recover(); p != nil { // the library's checks of a damaged file
			r, err = nil, damaged(path, -1, -1)
		}
	}()
	if r, err = openFooter(f, path, cfg); err != nil {
		return nil, err
	}
	var edges string
	if cfg.CacheDir != "" {
		if edges, err = r.setKey(); err != nil {
			return nil, err
		}
		kept, err := r.loadCounts()
		if err == nil {
			r.fromCounts = true
			r.fingerprint(kept)
			return r, nil
		}
		if !os.IsNotExist(err) && cfg.Warn != nil {
			cfg.Warn(fmt.Sprintf("the index %s is not used (%v); indexing the file", CountsPath(path, cfg), err))
		}
	}
	if edges == "" {
		if edges, err = r.edges(); err != nil {
			return nil, err
		}
	}
	r.fingerprint(edges)
	if cfg.OnIndexPass != nil {
		cfg.OnIndexPass()
	}
	if err := r.checkPages(); err != nil {
		return nil, err
	}
	if err := r.index(ctx, r.fileSize); err != nil {
		return nil, err
	}
	if err := r.saveCounts(); err != nil && cfg.Warn != nil {
		cfg.Warn(fmt.Sprintf("the index could not be kept in %s (%v)", CountsPath(path, cfg), err))
	}
	return r, nil
}

// openFooter reads the file's footer and resolves the configured columns.
func openFooter(f corpus.Blob, path string, cfg Config) (r *Reader, err error) {
	defer func() {
		if p := recover(); p != nil { // the library's checks of a damaged file
			r, err = nil, damaged(path, -1, -1)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || string(magic[:]) != Magic {
		return nil, &Error{File: path, RowGroup: -1, Row: -1, Msg: "not a Parquet file (it does not start with PAR1)", Err: ErrNotParquet}
	}
	if err := checkFrame(f, st.Size(), path, ErrDamaged); err != nil {
		return nil, err
	}
	opts := []pq.FileOption{pq.SkipBloomFilters(true)}
	if _, remote := f.(corpus.Hinter); remote {
		// An object's reads each cost a cache lookup: read its pages in
		// large pieces rather than the library's 4 KiB.
		opts = append(opts, pq.ReadBufferSize(remoteReadBuffer))
	}
	pf, err := pq.OpenFile(f, st.Size(), opts...)
	if err != nil {
		return nil, &Error{File: path, RowGroup: -1, Row: -1, Msg: "a damaged Parquet file: its footer cannot be read", Err: ErrDamaged}
	}
	r = &Reader{path: path, f: f, pf: pf, cfg: cfg, fileSize: st.Size()}
	if err := r.resolve(); err != nil {
		return nil, err
	}
	r.first = append(r.first, 0)
	for _, rg := range pf.RowGroups() {
		r.first = append(r.first, r.first[len(r.first)-1]+rg.NumRows())
	}
	// A column compressed with a codec that has no decoder is refused by
	// name, whether or not its rows are counted now.
	if err := checkCodecs(pf, path, r.first, r.neededCols()); err != nil {
		return nil, err
	}
	return r, nil
}

// checkFrame refuses a file whose frame is not a Parquet file's
// (pqframe.Check) before the library trusts its footer length. The error
// is kind: ErrDamaged, or ErrNotParquet for a file not yet known to be
// one.
func checkFrame(f io.ReaderAt, size int64, path string, kind error) error {
	err := pqframe.Check(f, size)
	var fe *pqframe.Error
	if !errors.As(err, &fe) {
		if err != nil {
			return fmt.Errorf("parquet: %s: %w", path, err)
		}
		return nil
	}
	lead := "a damaged Parquet file: "
	if kind == ErrNotParquet {
		lead = "not a readable Parquet file: "
	}
	return &Error{File: path, RowGroup: -1, Row: -1, Msg: lead + fe.Msg, Err: kind}
}

// resolve finds each stream's columns and checks their types.
func (r *Reader) resolve() error {
	s := r.pf.Schema()
	for _, st := range r.cfg.Streams {
		main, err := findShape(s, r.path, st.Name)
		if err != nil {
			return err
		}
		c := streamCols{main: main}
		if st.Sparse {
			if !isInt(main.kind) {
				return r.typeError(st.Name, main, "integer indices (int32 or int64)")
			}
			if hasField(s, st.Name+ValuesSuffix) {
				if c.vals, err = findShape(s, r.path, st.Name+ValuesSuffix); err != nil {
					return err
				}
				if !isNumber(c.vals.kind) {
					return r.typeError(c.vals.name, c.vals, "numbers")
				}
				if c.vals.depth != main.depth {
					return &Error{File: r.path, RowGroup: -1, Row: -1, Column: c.vals.name, Msg: fmt.Sprintf("lists nested %d deep, but its indices column %q nests %d deep", c.vals.depth, st.Name, main.depth), Err: ErrShape}
				}
			}
		} else if !isNumber(main.kind) {
			return r.typeError(st.Name, main, "numbers (float, double, int32 or int64)")
		}
		r.cols = append(r.cols, c)
	}
	if hasField(s, IDColumn) {
		id, err := findShape(s, r.path, IDColumn)
		if err != nil {
			return err
		}
		if id.depth != 0 || !(isInt(id.kind) || id.kind == pq.ByteArray) {
			return r.typeError(IDColumn, id, "one string or integer per row")
		}
		r.id = id
	}
	return nil
}

func (r *Reader) typeError(col string, sh *shape, want string) error {
	return &Error{File: r.path, RowGroup: -1, Row: -1, Column: col, Msg: fmt.Sprintf("holds %s; want %s", typeName(sh.kind), want), Err: ErrColumnType}
}

func hasField(s *pq.Schema, name string) bool {
	for _, f := range s.Fields() {
		if f.Name() == name {
			return true
		}
	}
	return false
}

// groupOf returns the row group holding file row row.
func (r *Reader) groupOf(row int64) int {
	return sort.Search(len(r.first)-1, func(g int) bool { return r.first[g+1] > row })
}

// Layout returns the index.
func (r *Reader) Layout() *corpus.Layout { return r.layout }

// Streams returns the configured streams.
func (r *Reader) Streams() []corpus.Stream { return r.cfg.Streams }

// Path returns the file name.
func (r *Reader) Path() string { return r.path }

// RowGroups returns the number of row groups in the file.
func (r *Reader) RowGroups() int { return len(r.first) - 1 }

// StreamSamples returns each stream's sample count over the whole file.
func (r *Reader) StreamSamples() []int64 { return append([]int64(nil), r.totals...) }

// MaxSequenceBytes is the largest sequence's size in memory (invariant 4's
// measure).
func (r *Reader) MaxSequenceBytes() int64 { return r.maxSeqB }

// HasIDs reports whether the file has an id column.
func (r *Reader) HasIDs() bool { return r.id != nil }

// Close closes the file and lets go of the mapped counts, if any: the
// Layout's Samples and Labels must not be read after Close.
func (r *Reader) Close() error {
	r.counts.Close()
	return r.f.Close()
}

// LoadChunk reads chunk c's rows. It is safe for concurrent use.
func (r *Reader) LoadChunk(c int) (ch *corpus.Chunk, err error) {
	defer func() {
		if p := recover(); p != nil { // the library's checks of a damaged file
			ch, err = nil, damaged(r.path, r.groupOf(int64(r.layout.ChunkStart[c])), int64(r.layout.ChunkStart[c]))
		}
	}()
	a, b := r.layout.Chunk(c)
	return r.loadRows(int64(a), int64(b))
}

// loadRows reads file rows [a, b), which may span row groups, through the
// pages that hold them (load.go).
func (r *Reader) loadRows(a, b int64) (*corpus.Chunk, error) {
	var rd *groupReader
	for row := a; row < b; {
		g := r.groupOf(row)
		end := min(b, r.first[g+1])
		cols, spans, endsPage := r.loadSpans(g, row, end)
		r.hint(cols)
		if r.fromCounts {
			if err := r.checkSpans(g, cols); err != nil {
				return nil, err
			}
		}
		next, err := r.openGroup(r.pf.RowGroups()[g], g, row, &load{clipReader{r.f, spans}, endsPage})
		if err != nil {
			return nil, err
		}
		if rd != nil {
			next.data = rd.data
		}
		err = next.decode(int(end - row))
		next.close()
		if err != nil {
			return nil, err
		}
		rd = next
		row = end
	}
	ch, err := r.build(rd.data, a)
	if err != nil {
		return nil, err
	}
	if r.fromCounts {
		if err := r.checkCounts(ch, a); err != nil {
			return nil, err
		}
	}
	return ch, nil
}

// Fingerprint identifies the file and the settings that shape the layout,
// with the same keys as a CTF file's (ctf.Reader.Fingerprint) and
// "format": "parquet".
func (r *Reader) Fingerprint() map[string]string { return maps.Clone(r.fp) }

const fingerprintEdge = 64 << 10

// edges hashes the file's first and last fingerprintEdge bytes: the
// fingerprint's file_edges_sha256.
func (r *Reader) edges() (string, error) {
	size := r.fileSize
	h := sha256.New()
	head := make([]byte, min(fingerprintEdge, size))
	if _, err := r.f.ReadAt(head, 0); err != nil && err != io.EOF {
		return "", fmt.Errorf("parquet: %s: %w", r.path, err)
	}
	h.Write(head)
	if size > fingerprintEdge {
		tail := make([]byte, min(fingerprintEdge, size-fingerprintEdge))
		if _, err := r.f.ReadAt(tail, size-int64(len(tail))); err != nil && err != io.EOF {
			return "", fmt.Errorf("parquet: %s: %w", r.path, err)
		}
		h.Write(tail)
	}
	return hex.EncodeToString(h.Sum(nil))[:edgesLen], nil
}

// edgesLen is the length of the edges' hash in the fingerprint.
const edgesLen = 32

// version names the file's content: an object's ETag (versioned), or a
// local file's modification time.
func (r *Reader) version() (v string, versioned bool) {
	if v, ok := r.f.(corpus.Versioned); ok {
		return v.Version(), true
	}
	if st, err := r.f.Stat(); err == nil {
		return strconv.FormatInt(st.ModTime().UnixNano(), 10), false
	}
	return "", false
}

// fingerprint sets the fingerprint of the file whose edges hash to edges.
func (r *Reader) fingerprint(edges string) {
	r.fp = map[string]string{
		"format":            "parquet",
		"file_size":         strconv.FormatInt(r.fileSize, 10),
		"file_edges_sha256": edges,
		"defines_mb_size":   r.cfg.DefinesMBSize,
		"label":             r.cfg.Label,
	}
	if r.cfg.ChunkSequences > 0 {
		r.fp["chunking"] = strconv.Itoa(r.cfg.ChunkSequences) + " sequences"
	} else {
		r.fp["chunking"] = strconv.FormatInt(r.cfg.chunkBytes(), 10) + " bytes (decoded)"
	}
}
