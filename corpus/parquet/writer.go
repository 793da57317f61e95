package parquet

import (
	"fmt"
	"io"
	"strings"

	"github.com/batchprep/batchprep/corpus"
	pq "github.com/parquet-go/parquet-go"
)

// Form is how a Writer stores one stream.
type Form int

const (
	// Dense: a list of lists of floats, one inner list of Dim values per sample.
	Dense Form = iota
	// OneHot: a list of int32, one index per sample, every value 1.
	OneHot
	// SparseSingle: a list of int32 indices and a list of float values
	// (column NAME_values), one entry per sample.
	SparseSingle
	// SparseLists: a list of lists of int32 indices and the same shape of
	// float values, one inner list per sample (any number of entries).
	SparseLists
)

func (f Form) String() string {
	return [...]string{"dense", "one-hot", "sparse, one entry per sample", "sparse lists"}[f]
}

// Forms returns the most compact form of each stream: Dense for dense
// streams, OneHot for sparse ones. Widen them with Widen over every chunk
// to be written.
func Forms(streams []corpus.Stream) []Form {
	f := make([]Form, len(streams))
	for i, s := range streams {
		if s.Sparse {
			f[i] = OneHot
		}
	}
	return f
}

// Widen widens forms so that they can hold chunk ch: a sparse stream with
// a value other than 1 needs a values column, one with a sample of other
// than one entry needs lists.
func Widen(forms []Form, streams []corpus.Stream, ch *corpus.Chunk) {
	for s, st := range streams {
		if !st.Sparse || forms[s] == SparseLists {
			continue
		}
		d := &ch.Streams[s]
		n := int(d.SeqStart[len(d.SeqStart)-1])
		if !corpus.SharedIota(d.RowStart) && !corpus.IsIota(d.RowStart[:n+1]) {
			forms[s] = SparseLists
			continue
		}
		if forms[s] == OneHot && !corpus.SharedOnes(d.Values) && !corpus.AllOnes(d.Values[:d.RowStart[n]]) {
			forms[s] = SparseSingle
		}
	}
}

// WriterOptions are a Writer's choices.
type WriterOptions struct {
	// Forms gives each stream's form (default: Forms(streams)).
	Forms []Form
	// RowGroupBytes ends a row group once its sequences' size in memory
	// (4 bytes per value or index) reaches it; default DefaultRowGroupBytes.
	RowGroupBytes int64
	// RowGroupRows, when > 0, also ends a row group after that many rows.
	RowGroupRows int
	// ChunkBytes ends the pages of every column where a Reader with this
	// Config.ChunkBytes (default DefaultChunkBytes) ends a chunk, so that a
	// chunk's load reads its own pages and none of its neighbours'
	// (docs/formats-parquet-corpus.md).
	ChunkBytes int64
}

// DefaultRowGroupBytes is the default row group size (of decoded data).
const DefaultRowGroupBytes = 64 << 20

// StreamsKey is the key-value metadata entry where a Writer records the
// streams, as --stream flags separated by spaces.
const StreamsKey = "batchprep.streams"

// Writer writes sequences as a Parquet corpus that Reader reads back.
type Writer struct {
	pw      *pq.Writer
	streams []corpus.Stream
	opt     WriterOptions
	cols    []writeCol // per stream
	idCol   int
	nCols   int
	rows    []pq.Row
	groupB  int64
	groupN  int
	chunkB  int64 // the chunk a Reader cuts with opt.ChunkBytes, as far as written
	chunkN  int
	values  []int // per column: the values of that chunk
	written int64
}

type writeCol struct{ main, vals int }

// NewWriter returns a Writer of streams to w. Close finishes the file (it
// does not close w).
func NewWriter(w io.Writer, streams []corpus.Stream, opt WriterOptions) (*Writer, error) {
	cfg := Config{Streams: streams}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opt.Forms == nil {
		opt.Forms = Forms(streams)
	}
	if len(opt.Forms) != len(streams) {
		return nil, fmt.Errorf("parquet: writer: %d forms for %d streams", len(opt.Forms), len(streams))
	}
	if opt.RowGroupBytes <= 0 {
		opt.RowGroupBytes = DefaultRowGroupBytes
	}
	g := pq.Group{IDColumn: pq.String()}
	var flags []string
	for s, st := range streams {
		f := opt.Forms[s]
		if f != Dense && !st.Sparse || f == Dense && st.Sparse {
			return nil, fmt.Errorf("parquet: writer: stream %q cannot be written %s", st.Name, f)
		}
		switch f {
		case Dense:
			g[st.Name] = pq.List(pq.List(pq.Leaf(pq.FloatType)))
		case OneHot:
			g[st.Name] = pq.List(pq.Leaf(pq.Int32Type))
		case SparseSingle:
			g[st.Name] = pq.List(pq.Leaf(pq.Int32Type))
			g[st.Name+ValuesSuffix] = pq.List(pq.Leaf(pq.FloatType))
		case SparseLists:
			g[st.Name] = pq.List(pq.List(pq.Leaf(pq.Int32Type)))
			g[st.Name+ValuesSuffix] = pq.List(pq.List(pq.Leaf(pq.FloatType)))
		}
		flags = append(flags, streamFlag(st))
	}
	schema := pq.NewSchema("sequences", g)
	wr := &Writer{streams: streams, opt: opt, nCols: len(schema.Columns()), values: make([]int, len(schema.Columns()))}
	lookup := func(name string) int {
		for i, p := range schema.Columns() {
			if p[0] == name {
				return i
			}
		}
		return -1
	}
	wr.idCol = lookup(IDColumn)
	for _, st := range streams {
		wr.cols = append(wr.cols, writeCol{main: lookup(st.Name), vals: lookup(st.Name + ValuesSuffix)})
	}
	wr.pw = pq.NewWriter(w, schema, pq.Compression(&pq.Zstd),
		pq.KeyValueMetadata(StreamsKey, strings.Join(flags, " ")),
		pq.CreatedBy("batchprep", "", ""))
	return wr, nil
}

func streamFlag(s corpus.Stream) string {
	if s.Sparse {
		return fmt.Sprintf("%s:%d:sparse", s.Name, s.Dim)
	}
	return fmt.Sprintf("%s:%d", s.Name, s.Dim)
}

// WriteChunk writes every sequence of ch (in its order). A sequence the
// chunk marks bad is an error: nothing is dropped silently.
func (w *Writer) WriteChunk(ch *corpus.Chunk) error {
	for i := range ch.Len() {
		if err := ch.BadAt(i); err != nil {
			return fmt.Errorf("parquet: writer: sequence %s: %w", ch.IDs[i], err)
		}
		if err := w.writeSeq(ch, i); err != nil {
			return err
		}
	}
	return w.flushRows()
}

// writeSeq adds sequence i of ch to the pending rows.
func (w *Writer) writeSeq(ch *corpus.Chunk, i int) error {
	cols := make([][]pq.Value, w.nCols)
	cols[w.idCol] = []pq.Value{pq.ByteArrayValue([]byte(ch.IDs[i])).Level(0, 0, w.idCol)}
	var size int64
	for s, st := range w.streams {
		d := &ch.Streams[s]
		a, b := int(d.SeqStart[i]), int(d.SeqStart[i+1])
		if a == b {
			return fmt.Errorf("parquet: writer: sequence %s: stream %q has no samples", ch.IDs[i], st.Name)
		}
		c := w.cols[s]
		var main, vals []pq.Value
		switch w.opt.Forms[s] {
		case Dense:
			for j := a; j < b; j++ {
				for k, v := range d.Dense[j*st.Dim : (j+1)*st.Dim] {
					main = append(main, pq.FloatValue(v).Level(level2(j-a, k), 2, c.main))
				}
			}
			size += int64(b-a) * int64(st.Dim) * 4
		case OneHot, SparseSingle:
			for j := a; j < b; j++ {
				e := d.RowStart[j]
				if d.RowStart[j+1]-e != 1 {
					return fmt.Errorf("parquet: writer: sequence %s: stream %q sample %d has %d entries; the stream's form holds one", ch.IDs[i], st.Name, j-a, d.RowStart[j+1]-e)
				}
				r := min(j-a, 1)
				main = append(main, pq.Int32Value(d.Indices[e]).Level(r, 1, c.main))
				if c.vals >= 0 {
					vals = append(vals, pq.FloatValue(d.Values[e]).Level(r, 1, c.vals))
				}
			}
			size += int64(b-a) * 8
		case SparseLists:
			for j := a; j < b; j++ {
				e0, e1 := int(d.RowStart[j]), int(d.RowStart[j+1])
				if e0 == e1 { // a sample without entries: an empty inner list
					r := min(j-a, 1)
					main = append(main, pq.Value{}.Level(r, 1, c.main))
					vals = append(vals, pq.Value{}.Level(r, 1, c.vals))
					continue
				}
				for e := e0; e < e1; e++ {
					r := level2(j-a, e-e0)
					main = append(main, pq.Int32Value(d.Indices[e]).Level(r, 2, c.main))
					vals = append(vals, pq.FloatValue(d.Values[e]).Level(r, 2, c.vals))
				}
				size += int64(e1-e0)*8 + 4
			}
		}
		cols[c.main] = main
		if c.vals >= 0 {
			cols[c.vals] = vals
		}
	}
	if err := w.endChunk(seqSize(w.streams, ch, i)); err != nil {
		return err
	}
	var row pq.Row
	for k, c := range cols {
		row = append(row, c...)
		w.values[k] += len(c)
	}
	w.rows = append(w.rows, row)
	w.groupB += size
	w.groupN++
	if w.groupB >= w.opt.RowGroupBytes || w.opt.RowGroupRows > 0 && w.groupN >= w.opt.RowGroupRows {
		if err := w.flushRows(); err != nil {
			return err
		}
		if err := w.pw.Flush(); err != nil {
			return fmt.Errorf("parquet: writer: %w", err)
		}
		w.groupB, w.groupN = 0, 0
	}
	return nil
}

// alignValues: a column with fewer values in a chunk has its pages cut by
// the library alone. Its pages are small per chunk, so a rank that reads
// them whole reads little, and smaller pages would compress worse (ATIS's
// label and id columns grow 3 to 6 times in pages of one chunk each).
const alignValues = 8192

// endChunk ends the page of every column with alignValues values or more
// in the chunk before a sequence of size bytes (as a Reader measures it),
// when a Reader with opt.ChunkBytes would start a new chunk with it
// (layoutBuilder.add).
func (w *Writer) endChunk(size int64) error {
	limit := w.opt.ChunkBytes
	if limit <= 0 {
		limit = DefaultChunkBytes
	}
	if w.chunkN > 0 && w.chunkB+size > limit {
		if err := w.flushRows(); err != nil {
			return err
		}
		for k, cw := range w.pw.ColumnWriters() {
			if w.values[k] < alignValues {
				continue
			}
			if err := cw.Flush(); err != nil {
				return fmt.Errorf("parquet: writer: %w", err)
			}
		}
		clear(w.values)
		w.chunkB, w.chunkN = 0, 0
	}
	w.chunkB += size
	w.chunkN++
	return nil
}

// level2 is the repetition level of value k of sample j in a list of lists.
func level2(j, k int) int {
	switch {
	case j == 0 && k == 0:
		return 0
	case k == 0:
		return 1
	}
	return 2
}

func (w *Writer) flushRows() error {
	if len(w.rows) == 0 {
		return nil
	}
	_, err := w.pw.WriteRows(w.rows)
	w.written += int64(len(w.rows))
	w.rows = w.rows[:0]
	if err != nil {
		return fmt.Errorf("parquet: writer: %w", err)
	}
	return nil
}

// Rows returns the number of sequences written.
func (w *Writer) Rows() int64 { return w.written + int64(len(w.rows)) }

// Close writes what is pending and the file's footer.
func (w *Writer) Close() error {
	if err := w.flushRows(); err != nil {
		return err
	}
	if err := w.pw.Close(); err != nil {
		return fmt.Errorf("parquet: writer: %w", err)
	}
	return nil
}
