package ctf

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
)

// Parallel indexing. A large file is cut at line starts into one range per
// core. Each range is indexed on a goroutine of its own into a list of
// sequences (rangeIndex), and the lists are then joined in file order:
// a sequence that a cut split is put back together, and chunks are formed
// exactly as the serial indexer forms them. The result equals the serial
// index (tests compare the two on arbitrary input). When a range meets
// anything unusual (an error, or no data line near the start of the file)
// the whole file is indexed again serially, so errors are always the
// serial indexer's, at the same line.

// indexPiece is the smallest range worth a goroutine of its own; tests
// lower it.
var indexPiece int64 = 16 << 20

// maxIndexRange bounds a range, so that a range's line numbers fit in 32
// bits.
const maxIndexRange = 1 << 30

// seqRec is one sequence found in a range: its offset and first line,
// both counted from the range's start, its size in bytes and its sample
// and label counts (20 bytes).
type seqRec struct {
	off, line       uint32
	size            uint32
	samples, labels uint32
}

// rangeIndex is what indexing one range found.
type rangeIndex struct {
	// seqs are the sequences in blocks of seqBlock (a growing slice would
	// copy them several times over).
	seqs [][]seqRec
	n    int // sequences in seqs
	// ids holds the ids the join may need: of the first two sequences, of
	// the last, and of any without samples (for its diagnostic).
	ids    map[int][]byte
	lastID []byte // the id of the last sequence
	// head: seqs[0] is the range's leading lines without an id, which
	// continue the previous range's last sequence. inHead is true until
	// the indexer ends that pseudo-sequence.
	head, inHead bool
	start        int64 // the range's file offset
	lines        int64 // lines in the range
	started      bool  // the range has a data line (a non-blank line, or any line after one)
	x            *index
}

func (r *rangeIndex) add(ix *indexer) {
	if r.inHead {
		r.inHead = false
		if ix.curEnd == ix.seqOff {
			return // the range starts with an id: no leading lines
		}
		r.head = true
	}
	if k := len(r.seqs) - 1; k < 0 || len(r.seqs[k]) == cap(r.seqs[k]) {
		r.seqs = append(r.seqs, make([]seqRec, 0, seqBlock))
	}
	b := &r.seqs[len(r.seqs)-1]
	*b = append(*b, seqRec{off: uint32(ix.seqOff - r.start), line: uint32(ix.seqLine), size: uint32(ix.curEnd - ix.seqOff),
		samples: ix.seqSamp, labels: ix.seqLab})
	if r.n < 2 || ix.seqSamp == 0 {
		r.ids[r.n] = bytes.Clone(ix.curID)
	}
	r.n++
}

// seqBlock is the number of sequences in a block of rangeIndex.seqs.
const seqBlock = 4096

// buildIndexFile indexes the file f, in parallel when it is a regular file
// large enough for two ranges, else serially; ps stops the pass.
func buildIndexFile(ps *pass, f *os.File, cfg *Config, file string) (*index, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ctf: %w", err)
	}
	if info.Mode().IsRegular() {
		n := indexRanges(info.Size(), runtime.GOMAXPROCS(0))
		if n >= 2 {
			if x, ok := parallelIndex(ps, f, info.Size(), n, cfg, file); ok {
				return x, nil
			}
			if err := ps.err(); err != nil {
				return nil, err // stopped: no serial pass
			}
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("ctf: %w", err)
	}
	ix := newIndexer(cfg, file)
	ix.pass = ps
	if err := ix.run(f); err != nil {
		return nil, err
	}
	return ix.x, nil
}

// indexRanges is how many ranges a file of size bytes is indexed in on
// procs cores (below 2: serially).
func indexRanges(size int64, procs int) int {
	n := min(int64(procs), size/indexPiece)
	if n >= 2 {
		n = max(n, (size+maxIndexRange-1)/maxIndexRange)
	}
	return int(n)
}

// parallelIndex indexes f (size bytes) in n ranges. ok is false when the
// caller must index serially: an error (reported serially, at its line),
// or a start of file it does not handle, or ps stopped the pass.
func parallelIndex(ps *pass, f io.ReaderAt, size int64, n int, cfg *Config, file string) (x *index, ok bool) {
	lineMode, ok := startsInLineMode(f, size, cfg)
	if !ok {
		return nil, false
	}
	bounds := []int64{0}
	for i := 1; i < n; i++ {
		b, err := lineStartAtOrAfter(f, size*int64(i)/int64(n), size)
		if err != nil {
			return nil, false
		}
		bounds = append(bounds, max(b, bounds[len(bounds)-1]))
	}
	bounds = append(bounds, size)
	rs := make([]*rangeIndex, n)
	fail := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ix := newIndexer(cfg, file)
			ix.pass = ps
			r := &rangeIndex{ids: map[int][]byte{}, x: ix.x, start: bounds[i]}
			ix.rec = r
			first := i == 0
			if first {
				ix.x.lineMode = cfg.LineMode
			} else {
				ix.x.lineMode = lineMode
				// Lines before the range's first id continue a sequence
				// of an earlier range.
				ix.inSeq, r.inHead = !lineMode, !lineMode
				ix.seqOff, ix.curEnd = bounds[i], bounds[i]
			}
			n := bounds[i+1] - bounds[i]
			sec := io.NewSectionReader(f, bounds[i], n)
			if err := ix.runFrom(sec, bounds[i], first, int(min(n+1, indexBufSize))); err != nil || ix.x.lineMode != lineMode {
				fail[i] = true
				return
			}
			r.lastID = bytes.Clone(ix.curID)
			rs[i] = r
		})
	}
	wg.Wait()
	for _, bad := range fail {
		if bad {
			return nil, false
		}
	}
	if !rs[0].started {
		// The first data line is in a later range, which does not know
		// the start of the file.
		return nil, false
	}
	return joinRanges(rs, lineMode, cfg, file)
}

// startsInLineMode reads the start of the file as the serial indexer
// does: the UTF-8 byte order mark and leading blank lines skipped, the
// first data line decides line mode. ok is false for a UTF-16 byte order
// mark or when no complete data line is in the first MiB.
func startsInLineMode(f io.ReaderAt, size int64, cfg *Config) (lineMode, ok bool) {
	buf := make([]byte, min(size, indexBufSize))
	if k, _ := f.ReadAt(buf, 0); k < len(buf) {
		return false, false
	}
	if len(buf) >= 2 && (buf[0] == 0xFF && buf[1] == 0xFE || buf[0] == 0xFE && buf[1] == 0xFF) {
		return false, false
	}
	data := bytes.TrimPrefix(buf, []byte{0xEF, 0xBB, 0xBF})
	for {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return false, false
		}
		line := data[:nl]
		k := 0
		for k < len(line) && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r') {
			k++
		}
		if k < len(line) {
			return cfg.LineMode || line[k] == '|', true
		}
		data = data[nl+1:]
	}
}

// joinRanges joins the ranges' sequences in file order into the index the
// serial indexer builds. ok is false when a joined sequence is 4 GiB or
// larger (the serial indexer reports it).
func joinRanges(rs []*rangeIndex, lineMode bool, cfg *Config, file string) (*index, bool) {
	out := newIndexer(cfg, file)
	x := out.x
	x.lineMode = lineMode
	// The index's per-sequence tables at their final size at most, so that
	// they are not copied as they grow next to the ranges' sequences.
	total := 0
	for _, r := range rs {
		total += r.n
	}
	if total > 0 {
		x.rel, x.sizes, x.samples = make([]uint32, 0, total), make([]uint32, 0, total), make([]uint32, 0, total)
		if x.labels != nil {
			x.labels = make([]uint32, 0, total)
		}
	}
	var cur seqRec
	var curOff int64
	var curLine int64
	var curID []byte
	have := false
	flush := func() {
		if have {
			out.emit(curOff, curLine, int64(cur.size), cur.samples, cur.labels, curID)
		}
	}
	var lineBase int64
	for ri, r := range rs {
		joining := ri > 0 && !lineMode && have
		j := -1
		for _, blk := range r.seqs {
			for _, s := range blk {
				j++
				var id []byte
				if j < 2 || s.samples == 0 {
					id = r.ids[j]
				}
				if joining && (j == 0 && r.head || bytes.Equal(id, curID)) {
					end := r.start + int64(s.off) + int64(s.size)
					if end-curOff > math.MaxUint32 {
						return nil, false
					}
					cur.size = uint32(end - curOff)
					cur.samples += s.samples
					cur.labels += s.labels
					continue
				}
				joining = false
				flush()
				cur, curOff, curLine, curID, have = s, r.start+int64(s.off), lineBase+int64(s.line), id, true
			}
		}
		if r.n >= 3 {
			// The last sequence began a sequence of its own (only the
			// first two can join an earlier one).
			curID = r.lastID
		}
		x.skippedLines += r.x.skippedLines
		for _, p := range r.x.skipped {
			if len(x.skipped) < maxSkippedNamed {
				x.skipped = append(x.skipped, position{lineBase + p.line, p.off})
			}
		}
		if r.x.lastLine != 0 {
			x.lastLine, x.lastCol = lineBase+r.x.lastLine, r.x.lastCol
		}
		x.size = r.x.size
		lineBase += r.lines
	}
	flush()
	if len(x.samples) == 0 {
		// Every sequence dropped: the tables stay as the serial indexer
		// leaves them.
		x.rel, x.sizes, x.samples = nil, nil, nil
		if x.labels != nil {
			x.labels = []uint32{}
		}
	}
	x.finish()
	return x, true
}
