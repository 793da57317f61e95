package ctf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"

	"github.com/batchprep/batchprep/corpus"
)

// chunkParser parses the sequences of one chunk. It is used by one
// goroutine at a time; the Reader makes one per LoadChunk call.
type chunkParser struct {
	cfg     *Config
	file    string
	x       *index
	ch      *corpus.Chunk
	scratch *corpus.Chunk // where the stream arrays are built, when set (see parse)
	counts  []int32       // samples per stream in the current sequence
	seenRow []int         // row serial in which each stream was last seen
	row     int
	warns   []Error
	unknown map[string]bool // unknown names already warned about in this chunk
	errs    []*Error        // diagnostics of the current sequence
	more    map[int][]Error // ordinal -> diagnostics after the first
	// seqLine is the 0-based line number of the current sequence's first
	// line (counted from the chunk's first line).
	seqLine int64
	// carried counts the rows carrying each stream (Summary.Samples): a good
	// sequence's sample counts, or, for a bad one, match run on its lines.
	carried []int64
	match   *matcher // the configured names, for parseRow and countCarried
	sparse  []bool   // whether each stream is sparse
	ids     []byte   // parse's scratch: the chunk's ids, end to end
	idEnd   []int32  // where each id ends in ids
	marks   []mark   // sequence's scratch: where each stream's arrays ended before it
}

// mark is where a stream's arrays ended before a sequence, to roll back to
// if it turns out bad.
type mark struct{ dense, rows, idx int }

func newChunkParser(cfg *Config, file string, x *index) *chunkParser {
	p := &chunkParser{cfg: cfg, file: file, x: x,
		counts: make([]int32, len(cfg.Streams)), seenRow: make([]int, len(cfg.Streams)),
		carried: make([]int64, len(cfg.Streams)), match: newMatcher(cfg.Streams)}
	for _, s := range cfg.Streams {
		p.sparse = append(p.sparse, s.Sparse)
	}
	return p
}

// parse parses chunk c, whose bytes (see index.span) are data, and
// returns it with what the Reader's accounting needs (report).
// A recycled chunk old (nil when there is none) lends its arrays: each is
// reused when its capacity suffices. With p.scratch set, the stream arrays
// are built in the scratch chunk's arrays, which stay in the processor's
// cache from one parse to the next, and copied once, at their final sizes,
// into the chunk's: appending straight into a recycled chunk's arrays,
// untouched since a window ago, pays a cache miss per line written. Row
// starts of one entry per sample and values that are all 1 are not copied:
// the chunk shares corpus.Iota and corpus.Ones instead.
//
// With order non-nil, that copy lays the chunk out in order
// (corpus.Arrange): the ids, parse errors and stream arrays are built in
// the scratch chunk, in file order, and arranged into old's arrays, so an
// arranged chunk costs what a plain parse does. Either way the shared
// arrays stand for the ones they can (shareView).
func (p *chunkParser) parse(c int, data []byte, old *corpus.Chunk, order []int32) (*corpus.Chunk, parseReport) {
	first, end := p.x.chunkStart[c], p.x.chunkStart[c+1]
	base := p.x.chunkOff[c]
	n := end - first
	ch := old
	if order != nil {
		if p.scratch == nil {
			p.scratch = &corpus.Chunk{}
		}
		ch = p.scratch
	}
	if ch == nil {
		ch = &corpus.Chunk{}
	}
	if len(ch.Streams) != len(p.cfg.Streams) {
		ch.Streams = make([]corpus.StreamData, len(p.cfg.Streams))
	}
	ch.First, ch.Bad, ch.IDs = first, nil, reuse(ch.IDs, n, n)
	for s := range ch.Streams {
		// Shared read-only arrays (see corpus.Iota) are never written.
		d := &ch.Streams[s]
		if corpus.SharedIota(d.RowStart) {
			d.RowStart = nil
		}
		if corpus.SharedOnes(d.Values) {
			d.Values = nil
		}
	}
	work := ch
	if sc := p.scratch; sc != nil {
		if len(sc.Streams) != len(p.cfg.Streams) {
			sc.Streams = make([]corpus.StreamData, len(p.cfg.Streams))
		}
		work = sc
	}
	var totalSamples int
	for i := first; i < end; i++ {
		totalSamples += int(p.x.samples[i])
	}
	for s, st := range p.cfg.Streams {
		d := &work.Streams[s]
		d.SeqStart = reuse(d.SeqStart, 1, n+1)
		d.SeqStart[0] = 0
		if st.Sparse {
			// Guess one entry per sample; append grows past it.
			d.RowStart = reuse(d.RowStart, 1, totalSamples+1)
			d.RowStart[0] = 0
			d.Indices = reuse(d.Indices, 0, totalSamples)
			d.Values = reuse(d.Values, 0, totalSamples)
			d.Dense = nil
		} else {
			d.Dense = reuse(d.Dense, 0, totalSamples*st.Dim)
			d.RowStart, d.Indices, d.Values = nil, nil, nil
		}
	}
	p.ch = work
	p.seqLine = p.x.chunkLine[c]
	// The ids are gathered in one buffer and become one string, which the
	// chunk's ids are slices of: one allocation per chunk, not per sequence.
	ids, idEnd := p.ids[:0], p.idEnd[:0]
	var at uint32 // where p.seqLine was counted to
	for i := first; i < end; i++ {
		rel := p.x.rel[i]
		p.seqLine += int64(bytes.Count(data[at:rel], nl))
		at = rel
		seq := data[rel : int64(rel)+int64(p.x.sizes[i])]
		if p.x.lineMode {
			ids = strconv.AppendInt(ids, p.seqLine, 10)
		} else {
			ids = append(ids, seq[:idLen(seq)]...)
		}
		idEnd = append(idEnd, int32(len(ids)))
		if err := p.sequence(i, seq, base+int64(rel)); err != nil {
			if ch.Bad == nil {
				ch.Bad = make([]error, n)
			}
			ch.Bad[i-first] = err
		}
		for s := range work.Streams {
			d := &work.Streams[s]
			d.SeqStart = append(d.SeqStart, d.SeqStart[len(d.SeqStart)-1]+p.counts[s])
		}
	}
	all, at0 := string(ids), int32(0)
	for k, e := range idEnd {
		ch.IDs[k] = all[at0:e]
		at0 = e
	}
	p.ids, p.idEnd = ids, idEnd
	a := report(p, ch.Bad)
	streams := p.shareView(work)
	if order != nil {
		src := *ch // the ids and parse errors, in file order (ch is work)
		src.Streams = streams
		return corpus.Arrange(old, &src, order), a
	}
	if work != ch {
		for s := range streams {
			copyOut(&ch.Streams[s], &streams[s])
		}
		p.ch = ch
	}
	return ch, a
}

var nl = []byte{'\n'}

// idLen returns the length of the id (leading digits) of a sequence.
func idLen(seq []byte) int {
	d := 0
	for d < len(seq) && isDigit(seq[d]) {
		d++
	}
	return d
}

// countCarried adds the rows of a bad sequence carrying each stream, found
// by name as the indexer would (a row that failed to parse may not have
// reached all its streams).
func (p *chunkParser) countCarried(seq []byte) {
	for len(seq) > 0 {
		line := seq
		if k := bytes.IndexByte(seq, '\n'); k >= 0 {
			line, seq = seq[:k], seq[k+1:]
		} else {
			seq = nil
		}
		for m := p.match.carried(line); m != 0; m &= m - 1 {
			p.carried[bits.TrailingZeros64(m)]++
		}
	}
}

// sequence parses one sequence; on error its data is rolled back and counts
// are zeroed, so the sequence is empty in every stream. It returns the first
// diagnostic; every further one (the parser goes on with the next row after
// a bad row) is kept in p.more.
func (p *chunkParser) sequence(i int, seq []byte, off int64) *Error {
	if len(p.marks) != len(p.ch.Streams) {
		p.marks = make([]mark, len(p.ch.Streams))
	}
	marks := p.marks
	for s := range p.ch.Streams {
		d := &p.ch.Streams[s]
		marks[s] = mark{len(d.Dense), len(d.RowStart), len(d.Indices)}
		p.counts[s] = 0
	}
	p.errs = p.errs[:0]
	p.rows(i, seq, off)
	if len(p.errs) == 0 {
		// Every row parsed, so a stream's samples are the rows carrying it.
		for s, n := range p.counts {
			p.carried[s] += int64(n)
		}
		return nil
	}
	p.countCarried(seq)
	for s := range p.ch.Streams {
		d := &p.ch.Streams[s]
		d.Dense = d.Dense[:marks[s].dense]
		d.RowStart = d.RowStart[:marks[s].rows]
		d.Indices = d.Indices[:marks[s].idx]
		d.Values = d.Values[:marks[s].idx]
		p.counts[s] = 0
	}
	if len(p.errs) > 1 {
		if p.more == nil {
			p.more = map[int][]Error{}
		}
		for _, e := range p.errs[1:] {
			p.more[i] = append(p.more[i], *e)
		}
	}
	return p.errs[0]
}

func (p *chunkParser) rows(i int, seq []byte, off int64) {
	lineNo := p.seqLine
	rows := 0
	pos := 0
	for pos < len(seq) {
		nl := bytes.IndexByte(seq[pos:], '\n')
		var line []byte
		next := len(seq)
		if nl < 0 {
			line = seq[pos:]
		} else {
			line = seq[pos : pos+nl]
			next = pos + nl + 1
		}
		if err := p.parseRow(line, off+int64(pos), lineNo); err != nil {
			p.errs = append(p.errs, err)
		}
		rows++
		pos = next
		lineNo++
	}
	if len(p.errs) > 0 {
		return
	}
	// Sequence-level checks, only when every row parsed (else they would
	// repeat the row errors). The sequence's name and the error are built
	// only when a check fails: this runs once per sequence.
	fail := func(err error, format string, a ...any) {
		p.errs = append(p.errs, &Error{File: p.file, Line: p.seqLine + 1, Col: 1, Offset: off,
			Msg: fmt.Sprintf(format, a...), Err: err})
	}
	for s, st := range p.cfg.Streams {
		if p.counts[s] == 0 {
			fail(ErrEmptyStream, "stream %q has no sample in sequence %s (lines %d-%d); expected at least one", st.Name, p.seqName(i, seq), p.seqLine+1, lineNo)
			return
		}
	}
	if mb := p.cfg.streamIndex(p.cfg.DefinesMBSize); mb >= 0 {
		if want := int32(p.x.samples[i]); p.counts[mb] != want {
			fail(ErrSampleCount, "sequence %s: stream %q (defines_mb_size) has %d samples, the index counted %d", p.seqName(i, seq), p.cfg.DefinesMBSize, p.counts[mb], want)
		}
		return
	}
	var longest int32
	for s := range p.counts {
		longest = max(longest, p.counts[s])
	}
	if longest != int32(rows) {
		fail(ErrSampleCount, "sequence %s has %d rows (lines %d-%d) but its longest stream has %d samples; expected some stream to have a sample on every row (or set defines_mb_size)", p.seqName(i, seq), rows, p.seqLine+1, lineNo, longest)
	}
}

func (p *chunkParser) seqName(i int, seq []byte) string {
	if p.x.lineMode {
		return fmt.Sprintf("(line %d)", p.seqLine)
	}
	return fmt.Sprintf("(id %s)", seq[:idLen(seq)])
}

// isDelim reports whether c separates values: space, tab or any other
// control byte (so '\r' of CRLF is ignored).
func isDelim(c byte) bool { return c <= ' ' }

func (p *chunkParser) errAt(line []byte, lineOff, lineNo int64, col int, err error, format string, a ...any) *Error {
	return &Error{File: p.file, Line: lineNo + 1, Col: col + 1, Offset: lineOff + int64(col), Msg: fmt.Sprintf(format, a...), Err: err}
}

func (p *chunkParser) warnAt(lineOff, lineNo int64, col int, err error, format string, a ...any) {
	p.warns = append(p.warns, Error{File: p.file, Line: lineNo + 1, Col: col + 1, Offset: lineOff + int64(col), Msg: fmt.Sprintf(format, a...), Err: err})
}

// quote renders the byte at line[i] for a message ("end of line" past the end).
func quote(line []byte, i int) string {
	if i >= len(line) {
		return "end of line"
	}
	return strconv.QuoteRune(rune(line[i]))
}

// parseRow parses one line: [id] then samples "|name values" and comments.
func (p *chunkParser) parseRow(line []byte, lineOff, lineNo int64) *Error {
	p.row++
	n := len(line)
	i := 0
	for i < n && isDigit(line[i]) {
		i++
	}
	got := false
	for {
		for i < n && isDelim(line[i]) {
			i++
		}
		if i == n {
			break
		}
		if line[i] != '|' {
			return p.errAt(line, lineOff, lineNo, i, ErrSyntax, "unexpected %s; expected '|' and a stream name", quote(line, i))
		}
		bar := i
		i++
		if i < n && line[i] == '#' {
			i = nextBar(line, i+1)
			continue
		}
		e := i
		for e < n && !isNameEnd(line[e]) {
			e++
		}
		if e == i {
			return p.errAt(line, lineOff, lineNo, i, ErrStreamName, "'|' followed by %s; expected a stream name or '#'", quote(line, i))
		}
		s := p.match.stream(line, i, e)
		if s < 0 {
			name := string(line[i:e])
			if !p.unknown[name] {
				if p.unknown == nil {
					p.unknown = map[string]bool{}
				}
				p.unknown[name] = true
				p.warnAt(lineOff, lineNo, bar, ErrUnknownStream, "stream %q is not configured; its values are skipped", name)
			}
			j := bytes.IndexByte(line[e:], '|')
			if j < 0 {
				i = n
			} else {
				i = e + j
			}
			continue
		}
		if p.seenRow[s] == p.row {
			return p.errAt(line, lineOff, lineNo, bar, ErrDuplicateInput, "stream %q appears a second time on this row; expected at most one sample per stream and row", p.cfg.Streams[s].Name)
		}
		p.seenRow[s] = p.row
		got = true
		var err *Error
		if p.sparse[s] {
			i, err = p.sparseValues(s, line, e, lineOff, lineNo)
		} else {
			i, err = p.dense(s, line, e, bar, lineOff, lineNo)
		}
		if err != nil {
			return err
		}
		p.counts[s]++
	}
	if !got {
		return p.errAt(line, lineOff, lineNo, 0, ErrEmptyRow, "row has no sample of a configured stream; expected at least one \"|name values\"")
	}
	return nil
}

// nextBar returns the index of the first '|' in line at or after i, or
// len(line). Comments are mostly a few words, so it compares eight bytes
// at a time in a word (SWAR), which costs less than bytes.IndexByte's
// setup for such short spans.
func nextBar(line []byte, i int) int {
	for ; i+8 <= len(line); i += 8 {
		if bars := zeroBytes(binary.LittleEndian.Uint64(line[i:]) ^ barBytes); bars != 0 {
			return i + bits.TrailingZeros64(bars)>>3
		}
	}
	for ; i < len(line); i++ {
		if line[i] == '|' {
			return i
		}
	}
	return i
}

// endOfValue reports whether line[j] may follow a value.
func endOfValue(line []byte, j int) bool { return j == len(line) || isDelim(line[j]) || line[j] == '|' }

func (p *chunkParser) dense(s int, line []byte, i, bar int, lineOff, lineNo int64) (int, *Error) {
	d := &p.ch.Streams[s]
	dim := p.cfg.Streams[s].Dim
	// A local, so that appends stay in registers. It is stored back only
	// on success: after an error the sequence is rolled back (see
	// sequence), and its later rows append after the entry length.
	out := d.Dense
	start := len(out)
	n := len(line)
	for {
		for i < n && isDelim(line[i]) {
			i++
		}
		if i == n || line[i] == '|' {
			break
		}
		var v float32
		var j int
		if line[i] == '0' && (i+1 == n || isDelim(line[i+1]) || line[i+1] == '|') {
			j = i + 1 // a lone "0", the commonest dense value
		} else {
			var ne *numErr
			v, j, ne = parseReal(line, i)
			if ne != nil {
				return i, p.numberErr(line, lineOff, lineNo, ne)
			}
			if !endOfValue(line, j) {
				return i, p.errAt(line, lineOff, lineNo, j, ErrNumber, "unexpected %s after a number; expected a digit, space, '|' or end of line", quote(line, j))
			}
		}
		if len(out)-start == dim {
			return i, p.errAt(line, lineOff, lineNo, i, ErrDenseTooLong, "stream %q: more than %d values; expected at most the dimension", p.cfg.Streams[s].Name, dim)
		}
		out = append(out, v)
		i = j
	}
	if got := len(out) - start; got < dim {
		p.warnAt(lineOff, lineNo, bar, ErrDenseShort, "stream %q: %d of %d values; zero-padded", p.cfg.Streams[s].Name, got, dim)
		for k := got; k < dim; k++ {
			out = append(out, 0)
		}
	}
	storeBack(&d.Dense, out)
	return i, nil
}

func (p *chunkParser) sparseValues(s int, line []byte, i int, lineOff, lineNo int64) (int, *Error) {
	d := &p.ch.Streams[s]
	dim := int64(p.cfg.Streams[s].Dim)
	// Locals, stored back only on success, as in dense.
	idxs, vals := d.Indices, d.Values
	n := len(line)
	for {
		for i < n && isDelim(line[i]) {
			i++
		}
		if i == n || line[i] == '|' {
			break
		}
		idx, j, ne := parseUint(line, i)
		if ne != nil {
			return i, p.errAt(line, lineOff, lineNo, ne.at, ErrSparseEntry, "unexpected %s; expected %s", quote(line, ne.at), ne.want)
		}
		if j == n || line[j] != ':' {
			return i, p.errAt(line, lineOff, lineNo, j, ErrSparseEntry, "unexpected %s after sparse index %d; expected ':'", quote(line, j), idx)
		}
		var v float32
		k := j + 2
		if k <= n && line[j+1] == '1' && endOfValue(line, k) {
			v = 1 // one-hot entries, the commonest sparse value
		} else {
			v, k, ne = parseReal(line, j+1)
			if ne != nil {
				return i, p.numberErr(line, lineOff, lineNo, ne)
			}
			if !endOfValue(line, k) {
				return i, p.errAt(line, lineOff, lineNo, k, ErrNumber, "unexpected %s after a number; expected a digit, space, '|' or end of line", quote(line, k))
			}
		}
		if idx >= dim {
			return i, p.errAt(line, lineOff, lineNo, i, ErrIndexRange, "sparse index %d of stream %q; expected an index below the dimension %d", idx, p.cfg.Streams[s].Name, dim)
		}
		idxs = append(idxs, int32(idx))
		vals = append(vals, v)
		i = k
	}
	storeBack(&d.Indices, idxs)
	storeBack(&d.Values, vals)
	d.RowStart = append(d.RowStart, int32(len(idxs)))
	return i, nil
}

func (p *chunkParser) numberErr(line []byte, lineOff, lineNo int64, ne *numErr) *Error {
	if ne.rng {
		return p.errAt(line, lineOff, lineNo, ne.at, ErrNumber, "number out of range; expected %s", ne.want)
	}
	return p.errAt(line, lineOff, lineNo, ne.at, ErrNumber, "unexpected %s in a number; expected %s", quote(line, ne.at), ne.want)
}
