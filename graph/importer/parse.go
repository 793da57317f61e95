package importer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
)

// fileEdges holds one input file's edges as columns: entity ids (first
// appearance order of their type's dictionary) and relation ids. 12 bytes
// per edge, 16 with weights. Ordinals are not stored: the k-th kept edge
// has ordinal k plus the number of skipped edge lines before it (bad).
type fileEdges struct {
	lhs, rhs, rel []uint32
	weight        []float32
	bad           []uint64 // ordinals of skipped edge lines, increasing

	lines, comments, edgeLines int64
	reserved                   bool // columns grown to the predicted size (reserve)
	parquet                    bool // read from a Parquet file: lines are its rows
}

func (f *fileEdges) len() int { return len(f.rel) }

// ordinal returns the ordinal of kept edge idx, given k = the number of
// skipped lines known to precede an earlier kept edge (0 to start); it
// returns the new k for the next, larger idx.
func (f *fileEdges) ordinal(idx uint32, k int) (uint64, int) {
	for k < len(f.bad) && f.bad[k]-uint64(k) <= uint64(idx) {
		k++
	}
	return uint64(idx) + uint64(k), k
}

// parser turns lines into edges, building the dictionaries shared by all
// files of an import.
type parser struct {
	opts     *Options
	needed   int
	relByCfg map[string]uint32
	dynamic  bool
	dynRel   map[string]uint32
	dynNames []string
	relDicts [][2]*dict // per config relation: lhs and rhs dictionaries
	dicts    map[string]*dict
	budget   budget
	block    int     // read size; blockSize unless a test sets it
	size     int64   // the file's size if known (for reserve)
	pq       *pqFile // the Parquet file being read; nil for text
	// Pass B's buffers for the decimal names of integer ids it has to look
	// up by name (dict_int.go).
	lname, rname []byte
}

// budget counts bad lines and keeps the first ones for the report.
type budget struct {
	max     int
	bad     int
	reasons map[Reason]int
	samples []*LineError
}

const maxSamples = 100

// add records a bad line; it returns a *BudgetError once the budget is
// exceeded.
func (b *budget) add(e *LineError) error {
	b.bad++
	if b.reasons == nil {
		b.reasons = map[Reason]int{}
	}
	b.reasons[e.Reason]++
	if len(b.samples) < maxSamples {
		b.samples = append(b.samples, e)
	}
	if b.bad > b.max {
		return &BudgetError{Bad: b.bad, MaxErrors: b.max, Last: e}
	}
	return nil
}

// blockSize is the read size: small enough that a block's pending lines
// (~150 bytes each) stay in the cache between the two passes.
const blockSize = 1 << 17

// parse reads one file. A reader goroutine cuts the file into blocks of
// whole lines and runs pass A (scan) on them; this goroutine runs pass B
// (flush) on each block in order, so the two passes use both cores. It
// calls progress after each block.
func (p *parser) parse(ctx context.Context, r io.Reader, name string, out *fileEdges, progress func(bytes int64)) error {
	block := p.block
	if block <= 0 {
		block = blockSize
	}
	chunks := make(chan *chunk, 1)
	free := make(chan *chunk, 3)
	for i := 0; i < cap(free); i++ {
		free <- &chunk{buf: make([]byte, block)}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(chunks)
		p.produce(r, name, free, chunks, stop)
	}()
	defer func() {
		close(stop)
		for range chunks { // let the reader finish before the file is closed
		}
		<-done
	}()
	expected := 0 // field count of the first good line; 0 until then
	for c := range chunks {
		if c.err != nil {
			return c.err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := p.flush(c.batch, name, &expected, out); err != nil {
			return err
		}
		out.comments += c.comments
		out.lines = c.lines
		p.reserve(out, c.consumed)
		if progress != nil {
			progress(c.consumed)
		}
		free <- c
	}
	return nil
}

// reserve runs after the first block with edges: it grows out's columns to the edge
// count the block's density predicts for the whole file (plus 5 %), so
// that they are not copied again and again as they grow, and the
// dictionaries' tables to one entity per reservePerEntity predicted edges
// (shared by the types in the proportion of their names in the block),
// which saves the early doublings.
func (p *parser) reserve(out *fileEdges, consumed int64) {
	if out.reserved || p.size <= 0 || consumed <= 0 || len(out.rel) < reserveSample {
		return // wait for a block with enough edges to predict from
	}
	out.reserved = true
	want := int(min(float64(len(out.rel))*float64(p.size)/float64(consumed)*1.05, float64(p.size)/minLine))
	if want > cap(out.rel) {
		out.lhs = slices.Grow(out.lhs, want-len(out.lhs))
		out.rhs = slices.Grow(out.rhs, want-len(out.rhs))
		out.rel = slices.Grow(out.rel, want-len(out.rel))
		if p.opts.hasWeight() {
			out.weight = slices.Grow(out.weight, want-len(out.weight))
		}
	}
	p.reserveDicts(want)
}

// reserveDicts grows the dictionaries' tables for edges predicted edges,
// shared by the types in the proportion of the names they hold so far.
func (p *parser) reserveDicts(edges int) {
	total := 0
	for _, d := range p.dicts {
		total += len(d.names)
	}
	for _, d := range p.dicts {
		if len(d.names) > 0 {
			d.reserve(int(int64(edges) / reservePerEntity * int64(len(d.names)) / int64(total)))
		}
	}
}

// reserveSample is the fewest edges reserve predicts from; minLine bounds
// its prediction (a line "a\tb\n" has 4 bytes), should the first lines be
// much shorter than the rest.
const (
	reserveSample = 256
	minLine       = 4
)

// reservePerEntity is the edges per entity that reserve assumes (social
// graphs have 10-30, FB15k-237 19).
const reservePerEntity = 16

// chunk is a block of whole lines after pass A.
type chunk struct {
	buf      []byte
	batch    []pending
	comments int64 // comment and empty lines in the block
	lines    int64 // lines read so far, this block included
	consumed int64 // bytes read so far, this block included
	err      error
}

// produce reads blocks, scans their complete lines and sends them in
// order; the bytes of an incomplete last line move to the next block.
func (p *parser) produce(r io.Reader, name string, free <-chan *chunk, chunks chan<- *chunk, stop <-chan struct{}) {
	st := &scanState{fields: make([][]byte, p.needed)}
	var (
		tail     []byte // incomplete line carried from the previous block
		eof      bool
		lineNo   int64
		consumed int64
	)
	send := func(c *chunk) bool {
		select {
		case chunks <- c:
			return true
		case <-stop:
			return false
		}
	}
	for !eof {
		var c *chunk
		select {
		case c = <-free:
		case <-stop:
			return
		}
		if len(tail) >= len(c.buf) {
			// One line fills a whole block: grow.
			if len(c.buf) >= 1<<30 {
				c.err = &LineError{File: name, Line: lineNo + 1, Reason: ReasonLongLine, Msg: "a line longer than 1 GiB"}
				send(c)
				return
			}
			c.buf = make([]byte, 2*len(tail))
		}
		fill := copy(c.buf, tail)
		n, err := io.ReadFull(r, c.buf[fill:])
		fill += n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			eof = true
		} else if err != nil {
			c.err = fmt.Errorf("importer: %s: %w", name, err)
			send(c)
			return
		}
		data := c.buf[:fill]
		st.batch, st.comments = c.batch[:0], 0
		start := 0
		for {
			nl := bytes.IndexByte(data[start:], '\n')
			var line []byte
			if nl < 0 {
				if !eof || start == len(data) {
					break // incomplete line: next block
				}
				line = data[start:] // last line without a newline
				start = len(data)
			} else {
				line = data[start : start+nl]
				start += nl + 1
			}
			lineNo++
			if lineNo == 1 {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			}
			p.scan(st, line, lineNo)
		}
		// The tail stays valid: this goroutine copies it into the next
		// block before that buffer can be reused.
		tail = data[start:]
		consumed += int64(start)
		c.batch, c.comments, c.lines, c.consumed = st.batch, st.comments, lineNo, consumed
		if !send(c) {
			return
		}
	}
}

// split cuts line into fields, keeping the first len(fields) of them in
// fields and returning the total count. It returns the byte column of each
// kept field through cols.
func (p *parser) split(fields [][]byte, line []byte, cols []int) int {
	n := 0
	keep := len(fields)
	switch p.opts.Delimiter {
	case Space:
		i := 0
		for {
			for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
				i++
			}
			if i == len(line) {
				return n
			}
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\t' {
				j++
			}
			if n < keep {
				fields[n], cols[n] = line[i:j], i+1
			}
			n++
			i = j
		}
	default:
		sep := byte('\t')
		if p.opts.Delimiter == Comma {
			sep = ','
		}
		i := 0
		for {
			j := bytes.IndexByte(line[i:], sep)
			end := len(line)
			if j >= 0 {
				end = i + j
			}
			if n < keep {
				fields[n], cols[n] = line[i:end], i+1
			}
			n++
			if j < 0 {
				return n
			}
			i = end + 1
		}
	}
}
