package ctf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/procs"
)

// InferStreams scans a CTF file and guesses its streams, in order of first
// appearance: a stream is sparse when any of its values has the form i:v;
// a dense stream's dimension is the largest number of values in one
// sample, a sparse one's the largest index plus one. Comments are skipped;
// malformed tokens are ignored (Open reports them).
func InferStreams(path string) ([]corpus.Stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ctf: %w", err)
	}
	defer f.Close()
	return InferStreamsBlob(f, path)
}

// InferStreamsBlob is InferStreams of the CTF data in f (a local file or
// an object); name names it in messages.
func InferStreamsBlob(f corpus.Blob, name string) ([]corpus.Stream, error) {
	return inferFile(f, name, procs.Compute(), inferPiece)
}

// InferPrefix is InferStreams over the whole lines in the first limit
// bytes of path: a guess that costs a fraction of a full scan of a large
// file. It may miss a stream first named later, or take a dimension or a
// kind that a later line would change; whole reports whether it read the
// whole file (its answer is then InferStreams's). With no line end in the
// first limit bytes it returns no streams.
func InferPrefix(path string, limit int64) (streams []corpus.Stream, whole bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("ctf: %w", err)
	}
	defer f.Close()
	return InferPrefixBlob(f, path, limit)
}

// InferPrefixBlob is InferPrefix of the CTF data in f; name names it in
// messages.
func InferPrefixBlob(f corpus.Blob, name string, limit int64) (streams []corpus.Stream, whole bool, err error) {
	info, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("ctf: %s: %w", name, err)
	}
	if info.Size() <= limit {
		streams, err = InferStreamsBlob(f, name)
		return streams, true, err
	}
	buf := make([]byte, limit)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, false, fmt.Errorf("ctf: %s: %w", name, err)
	}
	streams, err = inferStreams(bytes.NewReader(buf[:bytes.LastIndexByte(buf, '\n')+1]))
	if err != nil {
		return nil, false, fmt.Errorf("ctf: %s: %w", name, err)
	}
	return streams, false, nil
}

// inferPiece is the smallest file range worth a goroutine of its own.
const inferPiece = 8 << 20

// inferFile scans f in up to n ranges of at least piece bytes at once,
// each starting at a line start, and merges their findings; the result does
// not depend on n or piece.
func inferFile(f corpus.Blob, name string, n int, piece int64) ([]corpus.Stream, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ctf: %s: %w", name, err)
	}
	size := info.Size()
	n = int(max(1, min(int64(n), size/max(piece, 1))))
	bounds := []int64{0}
	for i := 1; i < n; i++ {
		b, err := lineStartAtOrAfter(f, size*int64(i)/int64(n), size)
		if err != nil {
			return nil, fmt.Errorf("ctf: %s: %w", name, err)
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
		return nil, fmt.Errorf("ctf: %s: %w", name, err)
	}
	all := inferState{seen: map[string]*inferred{}}
	for i := range parts {
		all.merge(&parts[i])
	}
	return all.streams(), nil
}

// lineProbe is how many bytes lineStartAtOrAfter reads at a time.
const lineProbe = 64 << 10

// lineStartAtOrAfter returns the offset of the first line that starts at
// or after off (size when there is none).
func lineStartAtOrAfter(f io.ReaderAt, off, size int64) (int64, error) {
	if off <= 0 {
		return 0, nil
	}
	buf := make([]byte, lineProbe)
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
	stats []*inferred // stats[k] is seen[order[k]]
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
			st.stats = append(st.stats, s)
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

// scan reads r in blocks of whole lines; atStart strips a UTF-8 byte order
// mark from the first line.
func (st *inferState) scan(r io.Reader, atStart bool) error {
	return st.scanBlocks(r, atStart, 1<<20)
}

// scanBlocks is scan with blocks of size bytes (at least 4, so that the
// first holds a whole byte order mark; more for a longer line).
func (st *inferState) scanBlocks(r io.Reader, atStart bool, size int) error {
	buf := make([]byte, max(size, 4))
	have := 0 // bytes at the start of buf: a line not finished in the last block
	first := atStart
	for {
		k, err := io.ReadFull(r, buf[have:])
		end := have + k
		done := err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !done {
			return err
		}
		if first {
			if bytes.HasPrefix(buf[:end], byteOrderMark) {
				end = copy(buf, buf[len(byteOrderMark):end])
			}
			first = false
		}
		data := buf[:end]
		cut := end // whole lines only, unless the input has ended
		if !done {
			cut = bytes.LastIndexByte(data, '\n') + 1
		}
		for pos := 0; pos < cut; {
			pos += st.line(data[pos:cut])
		}
		switch {
		case done:
			return nil
		case cut == 0: // a line longer than the buffer
			buf = append(buf[:end], make([]byte, len(buf))...)
			buf = buf[:cap(buf)]
			have = end
		default:
			have = copy(buf, data[cut:])
		}
	}
}

var byteOrderMark = []byte{0xEF, 0xBB, 0xBF}

// line adds the findings of the first line of b and returns its length
// with its newline. The line's end and each next '|' are found with
// bytes.IndexByte (vectorized; a comment such as "|# word" is skipped in
// one call); the values are walked byte by byte, since their tokens are a
// few bytes long, too short for a search call per token to pay. Inference
// reads the whole file, so this is most of inspect's first pass.
func (st *inferState) line(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	if n < 0 {
		n = len(b)
	}
	line := b[:n]
	used := min(n+1, len(b))
	i := 0
	for {
		// After a stream's values i is at the next '|' already; only a
		// comment or the line's start needs a search.
		if i >= n || line[i] != '|' {
			k := bytes.IndexByte(line[i:], '|')
			if k < 0 {
				return used
			}
			i += k
		}
		i++
		if i < n && line[i] == '#' {
			continue
		}
		e := i
		for e < n && !isNameEnd(line[e]) {
			e++
		}
		if e == i {
			continue
		}
		s := st.known(line[i:e])
		if s == nil {
			name := string(line[i:e])
			s = &inferred{maxIndex: -1}
			st.seen[name] = s
			st.order = append(st.order, name)
			st.stats = append(st.stats, s)
		}
		// The values: whitespace-separated tokens up to the next '|'.
		count := 0
		for i = e; i < n && line[i] != '|'; {
			if line[i] <= ' ' {
				i++
				continue
			}
			j, colon := i, -1
			for ; j < n && line[j] > ' ' && line[j] != '|'; j++ {
				if line[j] == ':' && colon < 0 {
					colon = j - i
				}
			}
			count++
			if colon >= 0 {
				s.sparse = true
				if idx, k, err := parseUint(line[i:i+colon], 0); err == nil && k == colon {
					s.maxIndex = max(s.maxIndex, idx)
				}
			}
			i = j
		}
		s.maxCount = max(s.maxCount, count)
	}
}

// known returns the statistics of stream name, or nil when it has not been
// seen. A corpus has a few streams, named on every line: comparing the name
// with each of the first few seen costs less than hashing it.
func (st *inferState) known(name []byte) *inferred {
	if len(st.order) <= 8 {
		for k, o := range st.order {
			if string(name) == o {
				return st.stats[k]
			}
		}
		return nil
	}
	return st.seen[string(name)] // no allocation for a known name
}
