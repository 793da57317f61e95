package ctf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/batchprep/batchprep/corpus"
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
	return inferStreams(f)
}

type inferred struct {
	sparse   bool
	maxCount int
	maxIndex int64
}

func inferStreams(r io.Reader) ([]corpus.Stream, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var order []string
	seen := map[string]*inferred{}
	var long []byte
	first := true
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
		inferLine(line, seen, &order)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ctf: %w", err)
		}
	}
	var out []corpus.Stream
	for _, name := range order {
		s := seen[name]
		st := corpus.Stream{Name: name, Dim: max(1, s.maxCount), Sparse: s.sparse}
		if s.sparse {
			st.Dim = int(max(1, s.maxIndex+1))
		}
		out = append(out, st)
	}
	return out, nil
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
		name := string(line[:e])
		s := seen[name]
		if s == nil {
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
		for _, tok := range bytes.FieldsFunc(vals, func(r rune) bool { return r <= ' ' }) {
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
