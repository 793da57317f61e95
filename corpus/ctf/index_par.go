package ctf

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/ordered"
	"github.com/batchprep/batchprep/internal/procs"
)

// Parallel indexing. A large file is cut at line starts into pieces of at
// most maxPiece bytes. Workers, one per core, index the pieces into lists
// of sequences (rangeIndex), at most two per worker ahead of the join,
// which takes the lists in file order: a sequence that a cut split is put
// back together, and chunks are formed exactly as the serial indexer forms
// them, as the pieces arrive, so the pass holds a few pieces' lists, not
// the file's. The result equals the serial index (tests compare the two on
// arbitrary input). When a piece meets anything unusual (an error, or no
// data line near the start of the file) the whole file is indexed again
// serially, so errors are always the serial indexer's, at the same line.
// An object streams each piece over a connection of its own, which a
// store caps below its bandwidth: it runs as many pieces at once as it
// asks for (corpus.ParallelStreamer), cut smaller so that the lists held
// stay those of one piece per core (piecing), and cut at nominal offsets
// that each piece's reader moves to line starts itself, without a request
// per cut first (index_stream.go).

// indexPiece is the smallest piece worth a goroutine of its own; tests
// lower it.
var indexPiece int64 = 16 << 20

// maxPiece bounds a piece: the pass holds about 2 x cores pieces' lists of
// sequences (20 bytes per sequence) besides the index. Tests lower it.
var maxPiece int64 = 32 << 20

// maxIndexRange bounds a piece, so that a piece's line numbers fit in 32
// bits (maxPiece is far below it).
const maxIndexRange = 1 << 30

// seqRec is one sequence found in a piece: its offset and first line,
// both counted from the piece's start, its size in bytes and its sample
// and label counts (20 bytes).
type seqRec struct {
	off, line       uint32
	size            uint32
	samples, labels uint32
}

// rangeIndex is what indexing one piece found.
type rangeIndex struct {
	// seqs are the sequences in blocks of seqBlock (a growing slice would
	// copy them several times over).
	seqs [][]seqRec
	n    int // sequences in seqs
	// ids holds the ids the join may need: of the first two sequences, of
	// the last, and of any without samples (for its diagnostic).
	ids    map[int][]byte
	lastID []byte // the id of the last sequence
	// head: seqs[0] is the piece's leading lines without an id, which
	// continue the previous piece's last sequence. inHead is true until
	// the indexer ends that pseudo-sequence.
	head, inHead bool
	start        int64 // the piece's file offset
	lines        int64 // lines in the piece
	started      bool  // the piece has a data line (a non-blank line, or any line after one)
	x            *index
}

func (r *rangeIndex) add(ix *indexer) {
	if r.inHead {
		r.inHead = false
		if ix.curEnd == ix.seqOff {
			return // the piece starts with an id: no leading lines
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
// large enough for two pieces, else serially; ps stops the pass. With
// spillDir set, the per-sequence tables go to spill files there (see
// columns.go), which the caller seals.
func buildIndexFile(ps *pass, f corpus.Blob, cfg *Config, file, spillDir string) (*index, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ctf: %w", err)
	}
	if info.Mode().IsRegular() {
		atOnce, largest := piecing(f)
		n := indexRanges(info.Size(), atOnce, largest)
		if n >= 2 {
			x, ok, err := parallelIndexTo(ps, f, info.Size(), n, cfg, file, spillDir)
			if err != nil {
				return nil, err
			}
			if ok {
				return x, nil
			}
			if err := ps.err(); err != nil {
				return nil, err // stopped: no serial pass
			}
		}
	}
	ix := newIndexer(cfg, file)
	ix.pass = ps
	if err := ix.x.spillTo(spillDir); err != nil {
		return nil, err
	}
	var whole io.Reader = io.NewSectionReader(f, 0, info.Size())
	if s, ok := f.(corpus.Streamer); ok {
		rc := s.NewReader(0)
		defer rc.Close()
		whole = rc
	}
	if s, ok := f.(io.ReadSeeker); ok && !info.Mode().IsRegular() {
		// A device or pipe: read as it comes, from its start.
		if _, err := s.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("ctf: %w", err)
		}
		whole = s
	}
	if err := ix.run(whole); err != nil {
		ix.x.dropSpill()
		return nil, err
	}
	return ix.x, nil
}

// indexRanges is how many pieces a file of size bytes is indexed in with
// procs pieces at once (below 2: serially): procs, more when a piece would
// exceed largest.
func indexRanges(size int64, procs int, largest int64) int {
	n := min(int64(procs), size/indexPiece)
	if n >= 2 {
		n = max(n, (size+largest-1)/largest)
	}
	return int(n)
}

// piecing is how many pieces of f an index pass reads at once and how
// large a piece may be: one per core and maxPiece for a file. An object
// whose streams are capped one by one (corpus.ParallelStreamer) asking for
// more streams than there are cores gets them, with pieces smaller in
// proportion, so that the lists the pass holds stay those of one piece per
// core; pieces of minStreamPiece bound how many.
func piecing(f io.ReaderAt) (atOnce int, largest int64) {
	cores := max(2, procs.Compute())
	if s, ok := f.(corpus.ParallelStreamer); ok && s.Streams() > cores {
		held := maxPiece * int64(cores)
		k := max(min(int64(s.Streams()), held/minStreamPiece), int64(cores))
		return int(k), held / k
	}
	return procs.Compute(), maxPiece
}

// minStreamPiece is the smallest piece an object is cut into for streams
// at once: below it a stream's start (a round trip) weighs on its bytes.
// Tests lower it.
var minStreamPiece int64 = 4 << 20

// parallelIndex indexes f (size bytes) in n pieces onto the heap. ok is
// false when the caller must index serially: an error (reported serially,
// at its line), or a start of file it does not handle, or ps stopped the
// pass.
func parallelIndex(ps *pass, f io.ReaderAt, size int64, n int, cfg *Config, file string) (x *index, ok bool) {
	x, ok, _ = parallelIndexTo(ps, f, size, n, cfg, file, "")
	return x, ok
}

// parallelIndexTo is parallelIndex with the tables spilled to spillDir
// (when set); err is a spill that failed.
func parallelIndexTo(ps *pass, f io.ReaderAt, size int64, n int, cfg *Config, file, spillDir string) (x *index, ok bool, err error) {
	lineMode, ok := startsInLineMode(f, size, cfg)
	if !ok {
		return nil, false, nil
	}
	streamer, streamed := f.(corpus.ParallelStreamer)
	var bounds []int64
	var streams []io.ReadCloser
	if streamed {
		// Cut at nominal offsets; each piece finds its line starts in its
		// own stream (index_stream.go).
		bounds = nominalBounds(size, n)
		streams = pieceStreams(streamer, bounds, size)
		defer func() {
			for _, rc := range streams {
				rc.Close()
			}
		}()
	} else {
		if h, ok := f.(corpus.Hinter); ok {
			// The reads that find the pieces' first lines below each
			// wait for the hinted range; started together, they wait
			// about once.
			for i := 1; i < n; i++ {
				h.Hint(size*int64(i)/int64(n)-1, lineProbe)
			}
		}
		bounds = []int64{0}
		for i := 1; i < n; i++ {
			b, err := lineStartAtOrAfter(f, size*int64(i)/int64(n), size)
			if err != nil {
				return nil, false, nil
			}
			bounds = append(bounds, max(b, bounds[len(bounds)-1]))
		}
		bounds = append(bounds, size)
	}
	j := newJoiner(lineMode, cfg, file)
	if err := j.out.x.spillTo(spillDir); err != nil {
		return nil, false, err
	}
	ok = true
	atOnce, _ := piecing(f)
	workers := max(2, atOnce)
	ordered.Run(n, workers, func(i int) *rangeIndex {
		lo, hi := bounds[i], bounds[i+1]
		if !streamed {
			var body io.Reader = io.NewSectionReader(f, lo, hi-lo)
			if s, ok := f.(corpus.Streamer); ok {
				rc := s.NewReader(lo)
				defer rc.Close()
				body = io.LimitReader(rc, hi-lo)
			}
			return indexPieceAt(ps, i, lo, body, int(min(hi-lo+1, indexBufSize)), lineMode, cfg, file)
		}
		defer streams[i].Close() // its connection is free for the next
		start, body, err := newPieceReader(f, size, lo, hi, streams[i])
		if err != nil {
			return nil
		}
		return indexPieceAt(ps, i, start, body, indexBufSize, lineMode, cfg, file)
	}, func(i int, r *rangeIndex) bool {
		// A failed piece, or the first data line in a later piece, which
		// does not know the start of the file, or a joined sequence of
		// 4 GiB: the serial pass reports it.
		ok = r != nil && (i > 0 || r.started) && j.add(r)
		return ok
	})
	if !ok {
		j.out.x.dropSpill()
		return nil, false, nil
	}
	return j.finish(), true, nil
}

// indexPieceAt indexes piece i, the bytes of body from file offset start,
// with a buffer of bufSize; nil when it fails.
func indexPieceAt(ps *pass, i int, start int64, body io.Reader, bufSize int, lineMode bool, cfg *Config, file string) *rangeIndex {
	ix := newIndexer(cfg, file)
	ix.pass = ps
	r := &rangeIndex{ids: map[int][]byte{}, x: ix.x, start: start}
	ix.rec = r
	first := i == 0
	if first {
		ix.x.lineMode = cfg.LineMode
	} else {
		ix.x.lineMode = lineMode
		// Lines before the piece's first id continue a sequence of an
		// earlier piece.
		ix.inSeq, r.inHead = !lineMode, !lineMode
		ix.seqOff, ix.curEnd = start, start
	}
	if err := ix.runFrom(body, start, first, bufSize); err != nil || ix.x.lineMode != lineMode {
		return nil
	}
	r.lastID = bytes.Clone(ix.curID)
	return r
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

// joiner joins the pieces' sequences, in file order, into the index the
// serial indexer builds.
type joiner struct {
	out      *indexer
	lineMode bool
	cur      seqRec
	curOff   int64
	curLine  int64
	curID    []byte
	have     bool
	lineBase int64
	pieces   int
}

func newJoiner(lineMode bool, cfg *Config, file string) *joiner {
	out := newIndexer(cfg, file)
	out.x.lineMode = lineMode
	return &joiner{out: out, lineMode: lineMode}
}

func (j *joiner) flush() {
	if j.have {
		j.out.emit(j.curOff, j.curLine, int64(j.cur.size), j.cur.samples, j.cur.labels, j.curID)
	}
}

// add joins the next piece. It is false when a joined sequence is 4 GiB or
// larger (the serial indexer reports it).
func (j *joiner) add(r *rangeIndex) bool {
	x := j.out.x
	joining := j.pieces > 0 && !j.lineMode && j.have
	j.pieces++
	k := -1
	for _, blk := range r.seqs {
		for _, s := range blk {
			k++
			var id []byte
			if k < 2 || s.samples == 0 {
				id = r.ids[k]
			}
			if joining && (k == 0 && r.head || bytes.Equal(id, j.curID)) {
				end := r.start + int64(s.off) + int64(s.size)
				if end-j.curOff > math.MaxUint32 {
					return false
				}
				j.cur.size = uint32(end - j.curOff)
				j.cur.samples += s.samples
				j.cur.labels += s.labels
				continue
			}
			joining = false
			j.flush()
			j.cur, j.curOff, j.curLine, j.curID, j.have = s, r.start+int64(s.off), j.lineBase+int64(s.line), id, true
		}
	}
	if r.n >= 3 {
		// The last sequence began a sequence of its own (only the first
		// two can join an earlier one).
		j.curID = r.lastID
	}
	x.skippedLines += r.x.skippedLines
	for _, p := range r.x.skipped {
		if len(x.skipped) < maxSkippedNamed {
			x.skipped = append(x.skipped, position{j.lineBase + p.line, p.off})
		}
	}
	if r.x.lastLine != 0 {
		x.lastLine, x.lastCol = j.lineBase+r.x.lastLine, r.x.lastCol
	}
	x.size = r.x.size
	j.lineBase += r.lines
	return true
}

// finish emits the last sequence and closes the index.
func (j *joiner) finish() *index {
	j.flush()
	j.out.x.finish()
	return j.out.x
}
