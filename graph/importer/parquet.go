package importer

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Parquet input. Each row is an edge line: its ordinal is its row number in
// the file. The chosen columns are decoded page by page from the pages'
// buffers. An integer id 42 is the entity named "42", as in a text file,
// but is looked up by its value in the dictionaries' integer index
// (dict_int.go), so that its digits are formatted only for a new entity;
// an integer relation column is mapped to relation ids once per distinct
// value (parquet_int.go). A dictionary-encoded entity column reaches
// pass B as dictionary indexes, resolved once per value and row group
// (parquet_dict.go), most of them by the decoders themselves, which look
// the values up in the entity dictionaries while pass B adds names
// (dict_shared.go). Row groups are decoded in parallel
// (pass A: one goroutine per row group, at most GOMAXPROCS at once), in
// batches of pqBatchRows rows; the calling goroutine runs pass B on the
// batches in row order, with the same code as for text (a batch without
// bad rows in a short form first: parquet_fast.go). A row group's batches
// queue at most two deep, so memory stays bounded whatever the row group
// size.

// Column roles: stored where text lines keep byte columns (pending.lcol,
// rcol, relCol and fault.col) so that errors can name the column.
const (
	roleLhs = 1 + iota
	roleRhs
	roleRel
	roleWeight
	roles
)

var roleNames = [roles]string{"", "lhs", "rhs", "rel", "weight"}

// roleWhat says what a role's column holds, for messages.
var roleWhat = [roles]string{"", "lhs entity", "rhs entity", "relation", "weight"}

// pqBatchRows is the rows of one batch between the passes (as a text
// block of 128 KiB holds about 8000 lines).
const pqBatchRows = 8192

// pqFile is what pass B needs to know of the Parquet file being read.
type pqFile struct {
	colNames [roles]string
	rgStart  []int64 // first row of each row group
	file     io.ReaderAt
	size     int64
	meta     *format.FileMetaData
	flushed  atomic.Int64 // row groups pass B is done with
}

// pos returns the Parquet position of row (0-based) and role's column.
func (q *pqFile) pos(row int64, role int) *ParquetPos {
	g, found := slices.BinarySearch(q.rgStart, row)
	if !found {
		g--
	}
	name := ""
	if role > 0 && role < roles {
		name = q.colNames[role]
	}
	return &ParquetPos{RowGroup: g, Row: row, Column: name}
}

// pqBatch is a batch of rows after pass A.
type pqBatch struct {
	batch    []pending
	names    arena // the names the batch's rows point to
	rows     int64 // rows of the file read so far, this batch included
	err      error
	fastRows // or the rows in short form (parquet_fast.go)
}

// batchPool recycles batches (their rows and names) between the passes.
type batchPool chan *pqBatch

func (bp batchPool) get() *pqBatch {
	select {
	case b := <-bp:
		return b
	default:
		return &pqBatch{}
	}
}

// put returns a batch pass B is done with: nothing points into it any
// more (the dictionaries copy the names they keep).
func (bp batchPool) put(b *pqBatch) {
	b.batch, b.rows, b.err = b.batch[:0], 0, nil
	b.fast, b.kind, b.ld, b.rd = b.fast[:0], 0, nil, nil
	b.names.reset()
	select {
	case bp <- b:
	default:
	}
}

// parseParquet reads one Parquet file (see the comment at the top).
func (p *parser) parseParquet(ctx context.Context, f io.ReaderAt, size int64, name string, out *fileEdges, progress func(int64)) error {
	pf, err := openParquet(f, size, name)
	if err != nil {
		return err
	}
	cols, err := p.parquetColumns(pf, name)
	if err != nil {
		return err
	}
	rgs := pf.RowGroups()
	q := &pqFile{rgStart: make([]int64, len(rgs)), file: f, size: size, meta: pf.Metadata()}
	if len(q.meta.RowGroups) != len(rgs) {
		return fmt.Errorf("importer: %s: %d row groups in the footer, %d read: %w", name, len(q.meta.RowGroups), len(rgs), errCorrupt)
	}
	for r, c := range cols {
		if c != nil {
			q.colNames[r] = c.name
		}
	}
	var total int64
	for g, rg := range rgs {
		q.rgStart[g] = total
		total += rg.NumRows()
	}
	p.pq = q
	defer func() { p.pq = nil }()
	// The footer's row count may be a lie (a corrupt file): reserve no
	// more than a few rows per byte, the columns grow past that if needed.
	p.reserveRows(out, min(total, 4*size))

	results := make([]chan *pqBatch, len(rgs))
	for g := range results {
		results[g] = make(chan *pqBatch, 2)
	}
	stop := make(chan struct{})
	next := make(chan int, len(rgs))
	for g := range rgs {
		next <- g
	}
	close(next)
	workers := runtime.GOMAXPROCS(0)
	if p.opts.pqWorkers > 0 {
		workers = p.opts.pqWorkers
	}
	workers = min(workers, len(rgs))
	pool := make(batchPool, 3*workers+1)
	done := make(chan struct{}, workers)
	var failed atomic.Bool
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for g := range next {
				select {
				case <-stop:
					return
				default:
				}
				if failed.Load() { // a corrupt file: the rest need not be read
					close(results[g])
					continue
				}
				if !p.decodeRowGroup(q, g, rgs[g], &cols, pool, results[g], stop) {
					failed.Store(true)
				}
				close(results[g])
			}
		}()
	}
	defer func() {
		close(stop)
		for range workers {
			<-done
		}
	}()
	expected := 0
	dictsReserved := false
	for g := range rgs {
		for b := range results[g] {
			if b.err != nil {
				return fmt.Errorf("importer: %s: row group %d: %w", name, g, b.err)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if g == 0 && !dictsReserved {
				p.reserveFromDicts(b)
			}
			var err error
			if len(b.fast) > 0 {
				err = p.flushFast(b, name, &expected, out)
			} else {
				err = p.flush(b.batch, name, &expected, out)
			}
			if err != nil {
				return err
			}
			rows := b.rows
			out.lines = rows
			pool.put(b) // a decoder may take b at once: nothing below reads it
			if !dictsReserved && out.len() >= reserveSample {
				// The file's row count says how many edges come (as the
				// text import predicts it from its first block).
				p.reserveDicts(int(min(total, 4*size)))
				dictsReserved = true
			}
			if progress != nil && total > 0 {
				progress(int64(float64(size) * float64(rows) / float64(total)))
			}
		}
		q.flushed.Store(int64(g + 1))
		p.hook(g, "flushed")
	}
	return nil
}

// hook calls the tests' hook, if any (Options.pqHook).
func (p *parser) hook(g int, step string) {
	if p.opts.pqHook != nil {
		p.opts.pqHook(g, step)
	}
}

// reserveRows grows out's columns to the file's row count.
func (p *parser) reserveRows(out *fileEdges, rows int64) {
	if rows <= 0 {
		return
	}
	n := int(rows)
	out.lhs = slices.Grow(out.lhs, n)
	out.rhs = slices.Grow(out.rhs, n)
	out.rel = slices.Grow(out.rel, n)
	if p.opts.hasWeight() {
		out.weight = slices.Grow(out.weight, n)
	}
	out.reserved = true
}

// decodeRowGroup is pass A for one row group: it sends the row group's
// rows in batches to res, stopping early when stop closes. It returns
// false when it sent an error.
func (p *parser) decodeRowGroup(q *pqFile, g int, rg parquet.RowGroup, cols *[roles]*pqCol, pool batchPool, res chan<- *pqBatch, stop <-chan struct{}) (ok bool) {
	first := q.rgStart[g]
	p.hook(g, "start")
	filled := false
	send := func(b *pqBatch) bool {
		if !filled {
			filled = true
			p.hook(g, "filled")
		}
		select {
		case res <- b:
			return true
		case <-stop:
			return false
		}
	}
	var curs [roles]*cursor
	defer func() {
		for _, c := range curs {
			if c != nil {
				c.pages.Close()
			}
		}
		if r := recover(); r != nil {
			send(&pqBatch{err: fmt.Errorf("its pages cannot be decoded: %w", errCorrupt)})
			ok = false
		}
	}()
	chunks := rg.ColumnChunks()
	for r, c := range cols {
		if c == nil {
			continue
		}
		if c.leaf >= len(chunks) || c.leaf >= len(q.meta.RowGroups[g].Columns) {
			send(&pqBatch{err: fmt.Errorf("column %q has no data: %w", c.name, errCorrupt)})
			return false
		}
		if err := checkPages(q.file, q.size, &q.meta.RowGroups[g].Columns[c.leaf].MetaData, c.name); err != nil {
			send(&pqBatch{err: err})
			return false
		}
		curs[r] = &cursor{col: c, pages: chunks[c.leaf].Pages()}
	}
	// With one pair of entity dictionaries, the values of each column
	// chunk's dictionary are looked up in theirs here, on this core, and
	// pass B is left the values not found (dict_shared.go).
	if !p.dynamic && p.oneTypePair() {
		for r, side := range [...]int{roleLhs, roleRhs} {
			if curs[side] != nil {
				curs[side].resolveIn = p.relDicts[0][r]
			}
		}
	}
	var vals [roles]colVals
	var have [roles]bool
	for r, c := range curs {
		have[r] = c != nil
	}
	seed := &p.relDicts[0][0].seed // the same for every dictionary
	iseed := p.relDicts[0][0].iseed
	n := rg.NumRows()
	again := false
	for at := int64(0); at < n; {
		m := int(min(n-at, pqBatchRows))
		if !again && q.flushed.Load() >= int64(g) {
			// Pass B is done with the row group before: the dictionary
			// values not found as the row group started may be known now.
			again = true
			for _, c := range curs {
				if c != nil && c.pd != nil && c.pd.pre != nil {
					c.pd.resolveAgain()
				}
			}
		}
		// Grown as rows are read (once per pooled batch): a corrupt footer
		// may claim rows that are not there.
		b := pool.get()
		// Column by column first: each column's loop is short, so the
		// dictionary reads of many rows overlap.
		for r, c := range curs {
			if c == nil {
				continue
			}
			var rel func([]byte) int32
			if r == roleRel && !p.dynamic {
				rel = p.relID
			}
			if err := c.fill(&vals[r], m, &b.names, seed, iseed, rel); err != nil {
				send(&pqBatch{err: err})
				return false
			}
		}
		if !p.fastBatch(b, &vals, &have, m, first+at) {
			for i := range m {
				if len(b.batch) < cap(b.batch) {
					b.batch = b.batch[:i+1] // buildRow sets every field
				} else {
					b.batch = append(b.batch, pending{})
				}
				p.buildRow(&b.batch[i], &vals, &have, i, first+at+int64(i))
			}
		}
		at += int64(m)
		b.rows = first + at
		if !send(b) {
			return true
		}
	}
	return true
}

// relID returns the config's id of relation name, or -1.
func (p *parser) relID(name []byte) int32 {
	if id, ok := p.relByCfg[string(name)]; ok {
		return int32(id)
	}
	return -1
}

// buildRow is pass A for one row, from its columns' values: it runs the
// checks a text line gets in scan.
func (p *parser) buildRow(e *pending, cols *[roles]colVals, have *[roles]bool, i int, row int64) {
	*e = pending{lineNo: row + 1, nf: 1, lcol: roleLhs, rcol: roleRhs, relCol: roleRel, dicts: p.relDicts[0]}
	fail := func(stage, role int, r Reason, msg string) {
		e.fault = &fault{stage: stage, col: role, why: r, msg: msg}
	}
	for r := roleLhs; r <= roleRel; r++ {
		if !have[r] {
			continue
		}
		if cols[r].null[i] {
			fail(stageField, r, ReasonNull, "the "+roleWhat[r]+" is null")
			return
		}
		if !cols[r].isInt && cols[r].emptyName(i) {
			fail(stageField, r, ReasonEmpty, "the "+roleWhat[r]+" is an empty string")
			return
		}
	}
	if have[roleWeight] && cols[roleWeight].null[i] {
		fail(stageField, roleWeight, ReasonNull, "the weight is null")
		return
	}
	if have[roleRel] {
		rc := &cols[roleRel]
		if !rc.isInt { // an integer column is typed (fillInts): no name needed
			e.relF = rc.name[i]
		}
		if !p.dynamic {
			id := rc.rel[i]
			if id < 0 {
				f := string(e.relF)
				if rc.isInt {
					f = strconv.FormatInt(rc.ints[i], 10)
				}
				fail(stageRelation, roleRel, ReasonRelation, fmt.Sprintf("relation %q is not in the config's relations", f))
				return
			}
			e.rel, e.dicts = uint32(id), p.relDicts[id]
		}
	}
	l, r := &cols[roleLhs], &cols[roleRhs]
	switch {
	case l.isInt:
		e.lint, e.li, e.hl = true, l.ints[i], l.hash[i].h
	case l.pd != nil && l.dx[i] >= 0:
		e.ld, e.lx = l.pd, l.dx[i]
	default:
		e.lf, e.pl, e.hl = l.name[i], l.hash[i].pre, l.hash[i].h
	}
	switch {
	case r.isInt:
		e.rint, e.ri, e.hr = true, r.ints[i], r.hash[i].h
	case r.pd != nil && r.dx[i] >= 0:
		e.rd, e.rx = r.pd, r.dx[i]
	default:
		e.rf, e.pr, e.hr = r.name[i], r.hash[i].pre, r.hash[i].h
	}
	if have[roleWeight] {
		w := &cols[roleWeight]
		if w.wbad[i] != "" {
			fail(stageWeight, roleWeight, ReasonWeight, fmt.Sprintf("weight %s is not a finite float32", w.wbad[i]))
			return
		}
		e.w = w.w[i]
	}
}
