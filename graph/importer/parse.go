package importer

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
	fields   [][]byte
	budget   budget
	block    int // read size; blockSize unless a test sets it
	batch    []pending
	sink     uint32 // keeps the prefetch loads alive
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

const blockSize = 4 << 20

// parse reads one file. It calls progress about every block.
func (p *parser) parse(ctx context.Context, r io.Reader, name string, out *fileEdges, progress func(bytes int64)) error {
	block := p.block
	if block <= 0 {
		block = blockSize
	}
	buf := make([]byte, block)
	var (
		fill     int   // bytes of buf in use
		consumed int64 // bytes of the file fully processed
		eof      bool
		expected int // field count of the first good line; 0 until then
		lineNo   int64
	)
	for !eof || fill > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !eof {
			n, err := io.ReadFull(r, buf[fill:])
			fill += n
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				eof = true
			} else if err != nil {
				return fmt.Errorf("importer: %s: %w", name, err)
			}
		}
		data := buf[:fill]
		start := 0
		for {
			nl := bytes.IndexByte(data[start:], '\n')
			var line []byte
			if nl < 0 {
				if !eof {
					break // incomplete line: read more
				}
				if start == len(data) {
					break
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
			if p.scan(line, lineNo, out) && len(p.batch) == batchLines {
				if err := p.flush(name, &expected, out); err != nil {
					return err
				}
			}
		}
		if err := p.flush(name, &expected, out); err != nil {
			return err
		}
		consumed += int64(start)
		if progress != nil {
			progress(consumed)
		}
		rest := copy(buf, data[start:])
		fill = rest
		if eof && start == 0 && fill > 0 {
			return fmt.Errorf("importer: %s: internal: unterminated data", name) // cannot happen
		}
		if fill == len(buf) {
			// One line fills the whole buffer: grow it.
			if len(buf) >= 1<<30 {
				return &LineError{File: name, Line: lineNo + 1, Reason: ReasonLongLine, Msg: "a line longer than 1 GiB"}
			}
			nb := make([]byte, 2*len(buf))
			copy(nb, buf)
			buf = nb
		}
	}
	out.lines = lineNo
	return nil
}

// split cuts line into fields, keeping the first len(p.fields) of them in
// p.fields and returning the total count. It returns the byte column of
// each kept field through cols.
func (p *parser) split(line []byte, cols []int) int {
	n := 0
	keep := len(p.fields)
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
				p.fields[n], cols[n] = line[i:j], i+1
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
				p.fields[n], cols[n] = line[i:end], i+1
			}
			n++
			if j < 0 {
				return n
			}
			i = end + 1
		}
	}
}
