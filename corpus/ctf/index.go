package ctf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/mapped"
)

// index is the result of the indexing pass, kept compact: per chunk, the
// file offset and line number of its first sequence; per sequence, its
// offset from that chunk offset and its size (4 + 4 bytes) besides the
// layout's sample and label counts. Line numbers and ids are recovered when a
// chunk is parsed (by counting newlines from the chunk start and reading the
// leading digits), so they are not stored.
type index struct {
	lineMode   bool
	chunkOff   []int64  // file offset of each chunk's first sequence
	chunkLine  []int64  // 0-based line number of that sequence's first line
	rel        []uint32 // each sequence's offset from its chunk's chunkOff
	sizes      []uint32 // bytes, including the last line's '\n'
	samples    []uint32
	labels     []uint32 // nil when the label count equals the sample count
	chunkStart []int
	// dropped are sequences left out of the layout (no sample of the
	// defines_mb_size stream); skippedLines are line-mode lines without it.
	dropped      []Error
	skippedLines int64
	// skipped locates the first maxSkippedNamed skipped lines.
	skipped []position
	size    int64 // bytes indexed
	// lastLine and lastCol locate the end of an unterminated last line
	// (lastLine 0: the file ends with a newline or is empty).
	lastLine int64
	lastCol  int64

	// Per chunk, besides chunkOff and chunkLine: its sample and label
	// sums, the file offset where its last sequence ends, and the checksum
	// of its per-sequence tables (columns.go).
	chunkSamples, chunkLabels []uint64
	chunkEnd                  []int64
	chunkCRC                  []uint32
	n                         int  // sequences in the layout
	hasLabels                 bool // labels has its own counts
	pend                      pending
	// spill, during a pass over a large file, receives the closed chunks'
	// tables instead of the heap slices (columns.go).
	spill *mapped.Spill
	// hash is the layout's Hash when known ("": computed when asked).
	hash string
	// m, when set, is the index file the per-sequence tables are views of;
	// checked[c] is set once chunk c's tables matched their checksum.
	m       *mapped.File
	pages   *mapped.Tables // m's tables, paged by chunk (Off: where each starts)
	checked []atomic.Bool
}

func (x *index) layout() *corpus.Layout {
	l := &corpus.Layout{ChunkStart: x.chunkStart, Samples: x.samples, Labels: x.labels,
		ChunkSamples: x.chunkSamples, ChunkLabels: x.chunkLabels}
	if x.hash != "" {
		l.SetHash(x.hash)
	}
	if x.m != nil {
		l.Pager = x.pages
	}
	return l
}

// span returns the file offset and the byte length of chunk c, from its
// first sequence's start to its last sequence's end (dropped sequences and
// skipped lines in between included).
func (x *index) span(c int) (off, n int64) {
	return x.chunkOff[c], x.chunkEnd[c] - x.chunkOff[c]
}

// memBytes is the memory the index and its layout hold on the heap
// (capacities, so append's spare room counts); a mapped index's tables are
// not on the heap.
func (x *index) memBytes() int64 {
	n := int64(cap(x.chunkOff))*8 + int64(cap(x.chunkLine))*8 + int64(cap(x.chunkStart))*8 +
		int64(cap(x.chunkSamples))*8 + int64(cap(x.chunkLabels))*8 + int64(cap(x.chunkEnd))*8 + int64(cap(x.chunkCRC))*4
	if x.m == nil {
		n += int64(cap(x.rel))*4 + int64(cap(x.sizes))*4 + int64(cap(x.samples))*4 + int64(cap(x.labels))*4
	}
	return n
}

// position is a line's 0-based number and file offset.
type position struct{ line, off int64 }

// maxSkippedNamed is how many skipped lines (line mode, defines_mb_size)
// get a diagnostic of their own; the rest are reported as one count.
const maxSkippedNamed = 100

// maxChunkSpan is the largest offset of a sequence from its chunk's first
// sequence (offsets within a chunk are 32-bit); tests lower it.
var maxChunkSpan int64 = math.MaxUint32

// matcher recognizes the configured stream names after a '|'.
type matcher struct {
	names    [][]byte
	first    [256]bool // first bytes of the names
	word     []uint64  // names of < 8 bytes as little-endian words
	wordMask []uint64  // their masks (0 for longer names)
	key      []uint64  // nameKey of names of < 8 bytes (0 for longer names)
}

// nameKey is the k < 8 bytes of a name, the low bytes of the little-endian
// word w, with k in the top byte: one comparison tells names of different
// lengths apart as well as different bytes.
func nameKey(w uint64, k int) uint64 {
	return w&(1<<(8*uint(k))-1) | uint64(k)<<56
}

func newMatcher(streams []corpus.Stream) *matcher {
	m := &matcher{}
	for _, s := range streams {
		m.names = append(m.names, []byte(s.Name))
		m.first[s.Name[0]] = true
		var w, k uint64
		if len(s.Name) < 8 {
			for j := len(s.Name) - 1; j >= 0; j-- {
				w = w<<8 | uint64(s.Name[j])
				k = k<<8 | 0xff
			}
		}
		m.word = append(m.word, w)
		m.wordMask = append(m.wordMask, k)
		var key uint64
		if len(s.Name) < 8 {
			key = nameKey(w, len(s.Name))
		}
		m.key = append(m.key, key)
	}
	return m
}

// indexer builds an index from a stream of bytes.
type indexer struct {
	// matcher knows only the defines_mb_size and label streams (the only
	// names the index looks at); mbBit and labBit are their bits in its
	// masks (0 when unset).
	*matcher
	mbBit, labBit uint64
	finders       []finder // the same streams, for scanLines
	cfg           *Config
	file          string
	x             *index
	curID         []byte
	inSeq         bool
	seqOff        int64
	seqLine       int64
	seqSamp       uint32
	seqLab        uint32
	chunkB        int64
	chunkN        int
	maxChunk      int64
	curEnd        int64
	// lineByLine disables the scanLines fast path (tests compare both).
	lineByLine bool
	// rec, when set, receives each sequence instead of the index: the
	// indexer is one range of a parallel index (index_par.go).
	rec *rangeIndex
	// pass, when set, stops the indexer between blocks and hears of them.
	pass *pass
}

func newIndexer(cfg *Config, file string) *indexer {
	ix := &indexer{cfg: cfg, file: file, x: &index{}}
	var sel []corpus.Stream
	if cfg.DefinesMBSize != "" {
		ix.mbBit = 1 << uint(len(sel))
		sel = append(sel, cfg.Streams[cfg.streamIndex(cfg.DefinesMBSize)])
	}
	if cfg.Label != "" && cfg.Label != cfg.DefinesMBSize {
		ix.labBit = 1 << uint(len(sel))
		sel = append(sel, cfg.Streams[cfg.streamIndex(cfg.Label)])
		ix.x.labels = []uint32{}
		ix.x.hasLabels = true
	}
	ix.matcher = newMatcher(sel)
	for k, st := range sel {
		ix.finders = append(ix.finders, newFinder(st.Name, 1<<uint(k)))
	}
	ix.x.chunkStart = []int{0}
	ix.maxChunk = cfg.chunkBytes()
	return ix
}

// buildIndex indexes r (the whole file, from offset 0).
func buildIndex(r io.Reader, cfg *Config, file string) (*index, error) {
	ix := newIndexer(cfg, file)
	if err := ix.run(r); err != nil {
		return nil, err
	}
	return ix.x, nil
}

const indexBufSize = 1 << 20

// run indexes a whole file read from r.
func (ix *indexer) run(r io.Reader) error {
	ix.x.lineMode = ix.cfg.LineMode
	return ix.runFrom(r, 0, true, indexBufSize)
}

// runFrom indexes r, whose first byte is at file offset start. At the
// start of the file (first) it checks the encoding, skips leading blank
// lines and decides line mode; otherwise r starts at a line start and the
// caller has set the indexer's state. bufSize is the read buffer's
// initial size (it grows for longer lines).
func (ix *indexer) runFrom(r io.Reader, start int64, first bool, bufSize int) error {
	buf := make([]byte, max(bufSize, 1))
	base := start // file offset of buf[0]
	var lineNo int64
	if err := ix.pass.err(); err != nil {
		return err
	}
	n, err := io.ReadFull(r, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return fmt.Errorf("ctf: %s: %w", ix.file, err)
	}
	if err := ix.pass.block(n); err != nil {
		return err
	}
	eof := err != nil
	data := buf[:n]
	pos := 0
	started := !first // a data byte was seen
	if first {
		// Encoding.
		if len(data) >= 2 && (data[0] == 0xFF && data[1] == 0xFE || data[0] == 0xFE && data[1] == 0xFF) {
			return &Error{File: ix.file, Line: 1, Col: 1, Msg: "UTF-16 byte order mark: only UTF-8 is supported", Err: ErrEncoding}
		}
		if bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) {
			pos = 3
		}
	}
	for {
		if started && !ix.lineByLine {
			// Fast path: every complete line left in the buffer at once.
			if last := bytes.LastIndexByte(data[pos:], '\n'); last > 0 {
				end := pos + last + 1
				if err := ix.scanLines(data[:end], pos, base, &lineNo); err != nil {
					return err
				}
				pos = end
			}
		}
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 && !eof {
			// Move the partial line to the front and read more.
			rest := copy(buf, data[pos:])
			if rest == len(buf) {
				nb := make([]byte, 2*len(buf))
				copy(nb, buf)
				buf = nb
			}
			base += int64(pos)
			pos = 0
			m, err := io.ReadFull(r, buf[rest:])
			if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
				return fmt.Errorf("ctf: %s: %w", ix.file, err)
			}
			if err := ix.pass.block(m); err != nil {
				return err
			}
			eof = err != nil
			data = buf[:rest+m]
			continue
		}
		var line []byte
		var next int
		if nl < 0 {
			if pos == len(data) {
				break
			}
			line = data[pos:]
			next = len(data)
			ix.x.lastLine, ix.x.lastCol = lineNo+1, int64(len(line))+1
		} else {
			line = data[pos : pos+nl]
			next = pos + nl + 1
		}
		off := base + int64(pos)
		if !started {
			k := 0
			for k < len(line) && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r') {
				k++
			}
			if k == len(line) { // leading blank line: skipped
				pos = next
				lineNo++
				continue
			}
			started = true
			if line[k] == '|' {
				ix.x.lineMode = true
			}
		}
		if err := ix.line(line, off, lineNo, int64(next-pos)); err != nil {
			return err
		}
		pos = next
		lineNo++
	}
	ix.x.size = base + int64(pos)
	if ix.rec != nil {
		ix.rec.lines, ix.rec.started = lineNo, started
	}
	if err := ix.endSeq(); err != nil {
		return err
	}
	ix.x.finish()
	return nil
}

func isNameEnd(c byte) bool { return c <= ' ' || c == '|' }

// carried returns the mask of configured streams that line carries. It
// finds the '|' bytes eight at a time (SWAR, nextBar) and compares the bytes after
// each one directly against the configured names (a name matches when
// followed by a delimiter, '|' or the end of the line), so comments and
// unknown names cost almost nothing.
func (m *matcher) carried(line []byte) uint64 {
	var mask uint64
	for p := nextBar(line, 0); p < len(line); p = nextBar(line, p+1) {
		mask |= m.nameAt(line, p+1)
	}
	return mask
}

const (
	barBytes = 0x7c7c7c7c7c7c7c7c // '|' in every byte
	low7     = 0x7f7f7f7f7f7f7f7f
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// zeroBytes returns a word with the high bit set in exactly the bytes of x
// that are zero.
func zeroBytes(x uint64) uint64 { return ^(((x & low7) + low7) | x | low7) }

// stream returns the configured stream named line[i:e], or -1. A name of
// up to 7 bytes is compared as one 64-bit key (see nameKey) when 8 bytes of
// line are readable at i, instead of a byte comparison per configured name.
func (m *matcher) stream(line []byte, i, e int) int {
	if k := e - i; k < 8 && i+8 <= len(line) {
		key := nameKey(binary.LittleEndian.Uint64(line[i:]), k)
		for s, nk := range m.key {
			if nk == key {
				return s
			}
		}
		return -1
	}
	for s, nm := range m.names {
		if string(nm) == string(line[i:e]) {
			return s
		}
	}
	return -1
}

// nameAt returns the mask bit of the configured stream whose name starts at
// line[p] and is complete there, or 0. Names of up to 7 bytes are compared
// as one masked 64-bit word together with the byte that must end them.
func (m *matcher) nameAt(line []byte, p int) uint64 {
	if p >= len(line) || !m.first[line[p]] {
		return 0 // comment, end of line or unknown name
	}
	rest := line[p:]
	if len(rest) >= 8 {
		w := binary.LittleEndian.Uint64(rest)
		for s := range m.names {
			if m.wordMask[s] != 0 && w&m.wordMask[s] == m.word[s] {
				if isNameEnd(byte(w >> (8 * uint(len(m.names[s]))))) {
					return 1 << uint(s)
				}
			}
		}
	}
	for s, nm := range m.names {
		if len(nm) < 8 && len(rest) >= 8 {
			continue // decided above
		}
		if len(rest) >= len(nm) && string(rest[:len(nm)]) == string(nm) && (len(rest) == len(nm) || isNameEnd(rest[len(nm)])) {
			return 1 << uint(s)
		}
	}
	return 0
}

// scanLines indexes the lines of data[start:], which ends with '\n'
// (data[0] is at file offset base), all at once. It looks only at newlines,
// ids and, when defines_mb_size or label is set, at the next occurrence of
// "|name" of those streams (found with bytes.Index over the whole buffer,
// not line by line); per-stream totals are counted later (Reader.Summary).
// Lines that continue the current sequence, the common case, are handled
// inline; the rest go through lineMask.
func (ix *indexer) scanLines(data []byte, start int, base int64, lineNo *int64) error {
	p, end := start, len(data)
	ln := *lineNo
	defer func() { *lineNo = ln }()
	for k := range ix.finders {
		ix.finders[k].next = -1
	}
	id := ix.curID
	for p < end {
		q := p + bytes.IndexByte(data[p:end], '\n')
		var mask uint64
		for k := range ix.finders {
			f := &ix.finders[k]
			if f.next < p {
				f.next = f.find(data, p)
			}
			if f.next < q {
				mask |= f.bit
			}
		}
		d := p
		for d < q && isDigit(data[d]) {
			d++
		}
		if !ix.inSeq || ix.x.lineMode || d > p && string(data[p:d]) != string(id) {
			if err := ix.lineMask(data[p:q], base+int64(p), ln, int64(q+1-p), mask); err != nil {
				return err
			}
			id = ix.curID
		} else {
			if ix.mbBit == 0 || mask&ix.mbBit != 0 {
				ix.seqSamp++
			}
			if mask&ix.labBit != 0 {
				ix.seqLab++
			}
			e := base + int64(q+1)
			if e-ix.seqOff > math.MaxUint32 {
				return ix.tooLarge(base+int64(p), ln)
			}
			ix.curEnd = e
		}
		p = q + 1
		ln++
	}
	return nil
}

// finder finds "|name" followed by a delimiter, '|' or the end of the line.
type finder struct {
	pat        []byte // "|name"
	b0, b1, b2 uint64 // its first three bytes in every byte of a word (b2: 0 when len(pat) is 2)
	bit        uint64
	next       int // position of the next match at or after the current line
}

func newFinder(name string, bit uint64) finder {
	f := finder{pat: []byte("|" + name), bit: bit}
	f.b0, f.b1 = lowBits*uint64(f.pat[0]), lowBits*uint64(f.pat[1])
	if len(f.pat) > 2 {
		f.b2 = lowBits * uint64(f.pat[2])
	}
	return f
}

// find returns the position of the first match at or after from in data,
// or len(data). It tests eight positions at a time for the pattern's first
// two or three bytes (SWAR), so a '|' before another name costs nothing.
// Matches are checked in increasing position, so the first one is returned.
func (f *finder) find(data []byte, from int) int {
	n := len(data)
	three := len(f.pat) > 2
	le := binary.LittleEndian
	i := from
	for ; i+10 <= n; i += 8 {
		// A zero byte of x is a position where the first bytes match. The
		// cheap zero test below may also flag a byte above a true zero
		// (borrow), which matchAt then rejects.
		x := le.Uint64(data[i:]) ^ f.b0 | le.Uint64(data[i+1:]) ^ f.b1
		if three {
			x |= le.Uint64(data[i+2:]) ^ f.b2
		}
		h := (x - lowBits) &^ x & highBits
		for h != 0 {
			at := i + bits.TrailingZeros64(h)>>3
			h &= h - 1
			if f.matchAt(data, at) {
				return at
			}
		}
	}
	for ; i < n; i++ {
		if data[i] == '|' && f.matchAt(data, i) {
			return i
		}
	}
	return n
}

func (f *finder) matchAt(data []byte, at int) bool {
	after := at + len(f.pat)
	return after <= len(data) && string(data[at:after]) == string(f.pat) && (after == len(data) || isNameEnd(data[after]))
}

func (ix *indexer) line(line []byte, off, lineNo, size int64) error {
	return ix.lineMask(line, off, lineNo, size, ix.carried(line))
}

// lineMask indexes one line; mask tells whether it carries the
// defines_mb_size and label streams (mbBit, labBit).
func (ix *indexer) lineMask(line []byte, off, lineNo, size int64, mask uint64) error {
	lab := uint32(0)
	if mask&ix.labBit != 0 {
		lab = 1
	}
	samp := uint32(1)
	if ix.mbBit != 0 && mask&ix.mbBit == 0 {
		samp = 0
	}
	if ix.x.lineMode {
		if samp == 0 {
			ix.x.skippedLines++
			if len(ix.x.skipped) < maxSkippedNamed {
				ix.x.skipped = append(ix.x.skipped, position{lineNo, off})
			}
			return nil
		}
		if err := ix.endSeq(); err != nil {
			return err
		}
		ix.inSeq, ix.seqOff, ix.seqLine = true, off, lineNo
		ix.seqSamp, ix.seqLab = 1, lab
		return ix.grow(size, off, lineNo)
	}
	d := 0
	for d < len(line) && isDigit(line[d]) {
		d++
	}
	if d > 0 && (!ix.inSeq || !bytes.Equal(line[:d], ix.curID)) {
		if err := ix.endSeq(); err != nil {
			return err
		}
		ix.curID = append(ix.curID[:0], line[:d]...)
		ix.inSeq, ix.seqOff, ix.seqLine = true, off, lineNo
		ix.seqSamp, ix.seqLab = samp, lab
		return ix.grow(size, off, lineNo)
	}
	if !ix.inSeq {
		return &Error{File: ix.file, Line: lineNo + 1, Col: 1, Offset: off,
			Msg: "expected a sequence id (digits) at the start of the first line", Err: ErrNoID}
	}
	ix.seqSamp += samp
	ix.seqLab += lab
	return ix.grow(size, off, lineNo)
}

// grow adds a line's bytes to the current sequence.
func (ix *indexer) grow(size, off, lineNo int64) error {
	end := off + size
	if end-ix.seqOff > math.MaxUint32 {
		return ix.tooLarge(off, lineNo)
	}
	ix.curEnd = end
	return nil
}

func (ix *indexer) tooLarge(off, lineNo int64) error {
	return &Error{File: ix.file, Line: lineNo + 1, Col: 1, Offset: off,
		Msg: "sequence longer than 4 GiB", Err: ErrTooLarge}
}

func (ix *indexer) endSeq() error {
	if !ix.inSeq {
		return nil
	}
	ix.inSeq = false
	if ix.rec != nil {
		ix.rec.add(ix)
		return nil
	}
	ix.emit(ix.seqOff, ix.seqLine, ix.curEnd-ix.seqOff, ix.seqSamp, ix.seqLab, ix.curID)
	return nil
}

// emit adds a finished sequence to the index (or to its dropped ones).
func (ix *indexer) emit(off, line, size int64, samp, lab uint32, id []byte) {
	x := ix.x
	if samp == 0 {
		x.dropped = append(x.dropped, Error{File: ix.file, Line: line + 1, Col: 1, Offset: off,
			Msg: fmt.Sprintf("sequence %q has no line with stream %q (defines_mb_size); expected at least one", id, ix.cfg.DefinesMBSize),
			Err: ErrNoMBSizeStream})
		return
	}
	// Chunking: a new chunk when this sequence would overflow the current
	// one, or lie 4 GiB or more past the chunk's start (offsets within a
	// chunk are 32-bit).
	if ix.chunkN > 0 {
		if ix.cfg.ChunkSequences > 0 && ix.chunkN >= ix.cfg.ChunkSequences ||
			ix.cfg.ChunkSequences == 0 && ix.chunkB+size > ix.maxChunk ||
			off-x.chunkOff[len(x.chunkOff)-1] > maxChunkSpan {
			x.closeChunk()
			ix.chunkB, ix.chunkN = 0, 0
		}
	}
	if ix.chunkN == 0 {
		x.chunkOff = append(x.chunkOff, off)
		x.chunkLine = append(x.chunkLine, line)
	}
	ix.chunkB += size
	ix.chunkN++
	p := &x.pend
	p.rel = append(p.rel, uint32(off-x.chunkOff[len(x.chunkOff)-1]))
	p.sizes = append(p.sizes, uint32(size))
	p.samples = append(p.samples, samp)
	if x.hasLabels {
		p.labels = append(p.labels, lab)
	}
}

// finish closes the last chunk and so the chunk list.
func (x *index) finish() {
	x.closeChunk()
	x.pend = pending{}
}
