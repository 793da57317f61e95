package ctf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/batchprep/batchprep/corpus"
)

// InferStreams scans a CTF file and guesses its streams, in order of first
// appearance: a stream is sparse when any of its values has the form i:v;
// a dense stream's dimension is the largest number of values in one
// sample, a sparse one's the largest index plus one. Comments are skipped;
// malformed tokens are ignored (Open reports them).
func InferStreams(path string) ([]corpus.Stream, error) {
	return inferFile(path, runtime.GOMAXPROCS(0), inferPiece)
}

// inferPiece is the smallest file range worth a goroutine of its own.
const inferPiece = 8 << 20

// inferFile scans path in up to n ranges of at least piece bytes at once,
// each starting at a line start, and merges their findings; the result does
// not depend on n or piece.
func inferFile(path string, n int, piece int64) ([]corpus.Stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ctf: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ctf: %w", err)
	}
	size := info.Size()
	n = int(max(1, min(int64(n), size/max(piece, 1))))
	bounds := []int64{0}
	for i := 1; i < n; i++ {
		b, err := lineStartAtOrAfter(f, size*int64(i)/int64(n), size)
		if err != nil {
			return nil, fmt.Errorf("ctf: %s: %w", path, err)
		}
		bounds = append(bounds, max(b, bounds[len(bounds)-1]))
	}
	bounds = append(bounds, size)
	parts := make([]inferState, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sec := io.NewSectionReader(f, bounds[i], bounds[i+1]-bounds[i])
			parts[i].seen = map[string]*inferred{}
			errs[i] = parts[i].scan(sec, i == 0)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("ctf: %s: %w", path, err)
	}
	all := inferState{seen: map[string]*inferred{}}
	for i := range parts {
		all.merge(&parts[i])
	}
	return all.streams(), nil
}

// lineStartAtOrAfter returns the offset of the first line that starts at
// or after off (size when there is none).
func lineStartAtOrAfter(f io.ReaderAt, off, size int64) (int64, error) {
	if off <= 0 {
		return 0, nil
	}
	buf := make([]byte, 64<<10)
	for p := off - 1; p < size; p += int64(len(buf)) {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), size-p)], p)
		if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
			return p + int64(i) + 1, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
	}
	return size, nil
}

type inferred struct {
	sparse   bool
	maxCount int
	maxIndex int64
}

// inferState is what a scan found: the streams in order of first
// appearance and their statistics.
type inferState struct {
	order []string
	seen  map[string]*inferred
}

// merge adds the findings of a later part of the file.
func (st *inferState) merge(o *inferState) {
	for _, name := range o.order {
		x := o.seen[name]
		s := st.seen[name]
		if s == nil {
			s = &inferred{maxIndex: -1}
			st.seen[name] = s
			st.order = append(st.order, name)
		}
		s.sparse = s.sparse || x.sparse
		s.maxCount = max(s.maxCount, x.maxCount)
		s.maxIndex = max(s.maxIndex, x.maxIndex)
	}
}

func (st *inferState) streams() []corpus.Stream {
	var out []corpus.Stream
	for _, name := range st.order {
		s := st.seen[name]
		c := corpus.Stream{Name: name, Dim: max(1, s.maxCount), Sparse: s.sparse}
		if s.sparse {
			c.Dim = int(max(1, s.maxIndex+1))
		}
		out = append(out, c)
	}
	return out
}

func inferStreams(r io.Reader) ([]corpus.Stream, error) {
	st := inferState{seen: map[string]*inferred{}}
	if err := st.scan(r, true); err != nil {
		return nil, fmt.Errorf("ctf: %w", err)
	}
	return st.streams(), nil
}

// scan reads r line by line; atStart strips a UTF-8 byte order mark from
// the first line.
func (st *inferState) scan(r io.Reader, atStart bool) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	first := atStart
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if first {
			line = bytes.TrimPrefix(line, []byte{0xEF, 0xBB, 0xBF})
			first = false
		}
		inferLine(line, st.seen, &st.order)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func inferLine(line []byte, seen map[string]*inferred, order *[]string) {
	for {
		p := bytes.IndexByte(line, '|')
		if p < 0 {
			return
		}
		line = line[p+1:]
		if len(line) > 0 && line[0] == '#' {
			continue
		}
		e := 0
		for e < len(line) && !isNameEnd(line[e]) {
			e++
		}
		if e == 0 {
			continue
		}
		s := seen[string(line[:e])] // no allocation for a known name
		if s == nil {
			name := string(line[:e])
			s = &inferred{maxIndex: -1}
			seen[name] = s
			*order = append(*order, name)
		}
		line = line[e:]
		end := bytes.IndexByte(line, '|')
		vals := line
		if end >= 0 {
			vals = line[:end]
		}
		count := 0
		for i := 0; i < len(vals); {
			if vals[i] <= ' ' {
				i++
				continue
			}
			j := i
			for j < len(vals) && vals[j] > ' ' {
				j++
			}
			tok := vals[i:j]
			i = j
			count++
			if c := bytes.IndexByte(tok, ':'); c >= 0 {
				s.sparse = true
				if idx, j, err := parseUint(tok, 0); err == nil && j == c {
					s.maxIndex = max(s.maxIndex, idx)
				}
			}
		}
		s.maxCount = max(s.maxCount, count)
	}
}
