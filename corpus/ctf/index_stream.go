package ctf

import (
	"bufio"
	"fmt"
	"io"

	"github.com/batchprep/batchprep/corpus"
)

// Pieces of a blob read in streams at once (corpus.ParallelStreamer, an
// object) are cut at nominal offsets, not at line starts: finding each
// line start first would cost a request per piece, a round trip each,
// before any piece could start (and, through an object's block cache, a
// whole block each). Piece i's stream starts a byte before its nominal
// start lo and runs past its nominal end hi by streamSlack; its worker
// skips to the first line that starts at or after lo and reads on to the
// first line start at or after hi. Both ends follow the rule
// lineStartAtOrAfter follows, so the pieces tile the file as probed
// bounds would: the next piece's worker finds the same line start from
// the same bytes. A line longer than the slack is finished with ReadAt.

// streamSlack is how far a piece's stream runs past its nominal end to
// finish the line it ends in. Tests lower it.
var streamSlack int64 = 64 << 10

// pieceAligns are the alignments of nominal offsets, tried in turn: an
// object's cache segment (4 MiB, objstore.SegmentBytes), so that each lies
// whole in one piece's stream and is cached as one file, then its block
// (1 MiB), so that each block is cached by one stream at least.
var pieceAligns = [...]int64{4 << 20, 1 << 20}

// nominalBounds cuts size bytes into n pieces at offsets aligned to the
// first of pieceAligns no larger than a piece, which keeps the pieces
// distinct (each between a piece less and more one alignment).
func nominalBounds(size int64, n int) []int64 {
	align := int64(1)
	for _, a := range pieceAligns {
		if size/int64(n) >= a {
			align = a
			break
		}
	}
	b := make([]int64, n+1)
	for i := 1; i < n; i++ {
		b[i] = size * int64(i) / int64(n) / align * align
	}
	b[n] = size
	return b
}

// pieceStreams opens a stream of each piece cut at the nominal bounds,
// from a byte before its start to streamSlack past its end. The caller
// closes them.
func pieceStreams(s corpus.ParallelStreamer, bounds []int64, size int64) []io.ReadCloser {
	streams := make([]io.ReadCloser, len(bounds)-1)
	for i := range streams {
		from := max(bounds[i]-1, 0)
		to := size
		if i < len(streams)-1 {
			to = min(bounds[i+1]-1+streamSlack, size)
		}
		streams[i] = s.NewRangeReader(from, to-from)
	}
	return streams
}

// pieceReader yields the bytes of one piece: from start, the first line
// start at or after lo (found by newPieceReader), to the first line start
// at or after hi.
type pieceReader struct {
	br   *bufio.Reader
	f    io.ReaderAt
	size int64
	pos  int64 // file offset of the next byte
	hi   int64
	line []byte    // the rest of the last line, read past hi - 1
	tail io.Reader // that line's rest from f, when the stream ran out
	done bool
}

// newPieceReader reads piece [lo, hi) from rc, a stream of f from lo - 1
// (0 when lo is 0) to past hi. start is where the piece begins; a piece
// in which no line starts is empty.
func newPieceReader(f io.ReaderAt, size, lo, hi int64, rc io.Reader) (start int64, r *pieceReader, err error) {
	r = &pieceReader{br: bufio.NewReaderSize(rc, 64<<10), f: f, size: size, hi: hi}
	if lo == 0 {
		r.done = hi == 0 // the first line starts at 0, at or after hi
		return 0, r, nil
	}
	r.pos = lo - 1
	for {
		line, err := r.br.ReadSlice('\n')
		r.pos += int64(len(line))
		if err == nil {
			break
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != io.EOF {
			return 0, nil, err
		}
		// No line starts before the stream's end, past hi: the piece is
		// empty, and the next begins where this one would.
		start, err := lineStartAtOrAfter(f, r.pos+1, size)
		r.pos, r.done = start, true
		return start, r, err
	}
	if r.pos >= hi {
		r.done = true // the first line start is past the piece: empty
	}
	return r.pos, r, nil
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(r.line) > 0 {
			k := copy(p, r.line)
			r.line = r.line[k:]
			r.pos += int64(k)
			return k, nil
		}
		switch {
		case r.done:
			return 0, io.EOF
		case r.tail != nil:
			k, err := r.tail.Read(p)
			r.pos += int64(k)
			if err == io.EOF {
				r.done = true
				if k > 0 {
					err = nil
				}
			}
			return k, err
		case r.hi == r.size: // the last piece: to the end
			k, err := r.br.Read(p)
			r.pos += int64(k)
			return k, err
		case r.pos < r.hi-1:
			k, err := r.br.Read(p[:min(int64(len(p)), r.hi-1-r.pos)])
			r.pos += int64(k)
			if err == io.EOF {
				err = fmt.Errorf("ctf: a piece's stream ended at byte %d, before byte %d: %w", r.pos, r.hi-1, io.ErrUnexpectedEOF)
			}
			return k, err
		default: // at or past hi - 1: the rest of the line that holds it
			line, err := r.br.ReadSlice('\n')
			r.line = line
			switch err {
			case nil:
				r.done = true // once line is read
			case bufio.ErrBufferFull:
			case io.EOF: // the line runs past the slack: its rest from f
				from := r.pos + int64(len(line))
				end, err := lineStartAtOrAfter(r.f, from+1, r.size)
				if err != nil {
					return 0, err
				}
				r.tail = io.NewSectionReader(r.f, from, end-from)
			default:
				return 0, err
			}
		}
	}
}
