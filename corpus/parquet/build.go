package parquet

import (
	"fmt"
	"strconv"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/plural"
	pq "github.com/parquet-go/parquet-go"
)

// groupReader decodes the configured columns of one row group together.
// data holds one colData per column: for each stream its main column, then
// its values column when it has one; the id column last.
type groupReader struct {
	r     *Reader
	first int64 // the file row of data's first row
	crs   []*colReader
	data  []colData
}

func (r *Reader) openGroup(rg pq.RowGroup, g int, from int64, ld *load) (*groupReader, error) {
	gr := &groupReader{r: r, first: from}
	add := func(sh *shape, role role) error {
		cr, err := newColReader(r.path, rg, g, r.first[g], from, sh, role, ld)
		if err != nil {
			return err
		}
		gr.crs = append(gr.crs, cr)
		return nil
	}
	for s, c := range r.cols {
		role := asFloats
		if r.cfg.Streams[s].Sparse {
			role = asInts
		}
		err := add(c.main, role)
		if err == nil && c.vals != nil {
			err = add(c.vals, asFloats)
		}
		if err != nil {
			gr.close()
			return nil, err
		}
	}
	if r.id != nil {
		if err := add(r.id, asStrings); err != nil {
			gr.close()
			return nil, err
		}
	}
	gr.data = make([]colData, len(gr.crs))
	return gr, nil
}

func (gr *groupReader) close() {
	for _, cr := range gr.crs {
		cr.close()
	}
}

// decode appends the next k rows of every column to data.
func (gr *groupReader) decode(k int) error {
	for i, cr := range gr.crs {
		if err := cr.next(k, &gr.data[i]); err != nil {
			return err
		}
	}
	return nil
}

// next decodes the next k rows into a chunk (the index pass).
func (gr *groupReader) next(k int) (*corpus.Chunk, error) {
	first := gr.crs[0].row
	for i := range gr.data {
		gr.data[i].reset()
	}
	if err := gr.decode(k); err != nil {
		return nil, err
	}
	return gr.r.build(gr.data, first)
}

// fail reports a problem with file row row of column col.
func (r *Reader) fail(row int64, col, msg string, err error) *Error {
	return &Error{File: r.path, RowGroup: r.groupOf(row), Row: row, Column: col, Msg: msg, Err: err}
}

// build checks decoded rows (invariant 3) and makes them a chunk whose
// first sequence is file row first.
func (r *Reader) build(data []colData, first int64) (*corpus.Chunk, error) {
	n := len(data[0].rowItems)
	ch := &corpus.Chunk{First: int(first), IDs: make([]string, n), Streams: make([]corpus.StreamData, len(r.cfg.Streams))}
	k := 0
	for s, st := range r.cfg.Streams {
		c := r.cols[s]
		main := &data[k]
		k++
		var vals *colData
		if c.vals != nil {
			vals = &data[k]
			k++
		}
		var err error
		if st.Sparse {
			err = r.sparse(&ch.Streams[s], st, c, main, vals, first)
		} else {
			err = r.dense(&ch.Streams[s], st, c.main, main, first)
		}
		if err != nil {
			return nil, err
		}
	}
	if r.id != nil {
		copy(ch.IDs, data[k].strs)
	} else {
		for i := range ch.IDs {
			ch.IDs[i] = strconv.FormatInt(first+int64(i), 10)
		}
	}
	return ch, nil
}

func (r *Reader) dense(d *corpus.StreamData, st corpus.Stream, sh *shape, c *colData, first int64) error {
	d.SeqStart = make([]int32, len(c.rowItems)+1)
	item := 0
	var samples int64
	for i, m := range c.rowItems {
		row := first + int64(i)
		if m == 0 {
			return r.fail(row, st.Name, "an empty list: every stream needs at least one sample in every sequence", ErrEmptyStream)
		}
		if sh.depth == 2 {
			for j := item; j < item+int(m); j++ {
				if int(c.itemLen[j]) != st.Dim {
					return r.fail(row, st.Name, fmt.Sprintf("sample %d has %s; the stream's dimension is %d", j-item, plural.Count(c.itemLen[j], "value"), st.Dim), ErrDenseLength)
				}
			}
			item += int(m)
			samples += int64(m)
		} else {
			if int(m)%st.Dim != 0 {
				return r.fail(row, st.Name, fmt.Sprintf("a list of %s, not a multiple of the stream's dimension %d", plural.Count(m, "value"), st.Dim), ErrDenseLength)
			}
			samples += int64(int(m) / st.Dim)
		}
		if samples > 1<<31-1 {
			return r.fail(row, st.Name, "more than 2^31-1 samples in one chunk", ErrTooLarge)
		}
		d.SeqStart[i+1] = int32(samples)
	}
	d.Dense = c.floats
	c.floats = nil
	return nil
}

func (r *Reader) sparse(d *corpus.StreamData, st corpus.Stream, cols streamCols, c, v *colData, first int64) error {
	d.SeqStart = make([]int32, len(c.rowItems)+1)
	depth := cols.main.depth
	var samples int64
	for i, m := range c.rowItems {
		if m == 0 {
			return r.fail(first+int64(i), st.Name, "an empty list: every stream needs at least one sample in every sequence", ErrEmptyStream)
		}
		samples += int64(m)
		if samples > 1<<31-1 {
			return r.fail(first+int64(i), st.Name, "more than 2^31-1 samples in one chunk", ErrTooLarge)
		}
		d.SeqStart[i+1] = int32(samples)
	}
	if len(c.ints) > 1<<31-1 {
		return r.fail(first, st.Name, "more than 2^31-1 entries in one chunk", ErrTooLarge)
	}
	d.Indices = make([]int32, len(c.ints))
	for j, x := range c.ints {
		if x < 0 || x >= int64(st.Dim) {
			row := r.rowOfSample(d.SeqStart, c, depth, j)
			return r.fail(first+int64(row), st.Name, fmt.Sprintf("index %d outside [0, %d), the stream's dimension", x, st.Dim), ErrIndexRange)
		}
		d.Indices[j] = int32(x)
	}
	if depth == 2 {
		d.RowStart = make([]int32, len(c.itemLen)+1)
		for j, n := range c.itemLen {
			d.RowStart[j+1] = d.RowStart[j] + n
		}
	} else {
		d.RowStart = corpus.Iota(len(c.ints) + 1)
	}
	if v == nil {
		d.Values = corpus.Ones(len(c.ints))
		return nil
	}
	for i := range c.rowItems {
		if v.rowItems[i] != c.rowItems[i] {
			return r.fail(first+int64(i), cols.vals.name, fmt.Sprintf("%s, but the column %q has %d", plural.Count(v.rowItems[i], "sample"), st.Name, c.rowItems[i]), ErrShape)
		}
	}
	if depth == 2 {
		for j := range c.itemLen {
			if v.itemLen[j] != c.itemLen[j] {
				i := r.rowOfItem(d.SeqStart, j)
				return r.fail(first+int64(i), cols.vals.name, fmt.Sprintf("sample %d has %s, but %d indices in the column %q", j-int(d.SeqStart[i]), plural.Count(v.itemLen[j], "value"), c.itemLen[j], st.Name), ErrShape)
			}
		}
	}
	d.Values = v.floats
	v.floats = nil
	return nil
}

// rowOfItem returns the chunk row holding sample j.
func (r *Reader) rowOfItem(seqStart []int32, j int) int {
	i := 0
	for int(seqStart[i+1]) <= j {
		i++
	}
	return i
}

// rowOfSample returns the chunk row holding leaf entry e.
func (r *Reader) rowOfSample(seqStart []int32, c *colData, depth, e int) int {
	if depth != 2 {
		return r.rowOfItem(seqStart, e)
	}
	acc := 0
	for j, n := range c.itemLen {
		acc += int(n)
		if acc > e {
			return r.rowOfItem(seqStart, j)
		}
	}
	return len(seqStart) - 2
}
