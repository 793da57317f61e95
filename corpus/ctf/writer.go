package ctf

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/batchprep/batchprep/corpus"
)

// Sample is one sample of one stream. Dense samples have len(Values) ==
// Dim and no Indices; sparse samples have one index per value.
type Sample struct {
	Indices []int32
	Values  []float32
}

// Writer writes sequences in CTF. Floats are written in the shortest form
// that reads back to the same float32.
type Writer struct {
	w       *bufio.Writer
	streams []corpus.Stream
	prevID  string
	started bool
	buf     []byte
}

// NewWriter returns a Writer of the given streams to w. Call Flush at the end.
func NewWriter(w io.Writer, streams []corpus.Stream) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 1<<16), streams: append([]corpus.Stream(nil), streams...)}
}

// Write writes one sequence: samples[s] are stream s's samples. The
// sequence has max_s len(samples[s]) lines; stream s's samples go on its
// first len(samples[s]) lines. The id must be digits and differ from the
// previous sequence's id (else the two would merge); every stream needs at
// least one sample (the reader rejects an empty stream).
func (w *Writer) Write(id string, samples [][]Sample) error {
	if id == "" {
		return fmt.Errorf("ctf: writer: empty sequence id")
	}
	for i := 0; i < len(id); i++ {
		if !isDigit(id[i]) {
			return fmt.Errorf("ctf: writer: sequence id %q: want digits", id)
		}
	}
	if w.started && id == w.prevID {
		return fmt.Errorf("ctf: writer: sequence id %q repeats the previous id; the sequences would merge", id)
	}
	if len(samples) != len(w.streams) {
		return fmt.Errorf("ctf: writer: %d streams given, %d configured", len(samples), len(w.streams))
	}
	rows := 0
	for s, st := range w.streams {
		if len(samples[s]) == 0 {
			return fmt.Errorf("ctf: writer: sequence %s: stream %q has no samples", id, st.Name)
		}
		rows = max(rows, len(samples[s]))
		for j, smp := range samples[s] {
			if err := checkSample(st, smp); err != nil {
				return fmt.Errorf("ctf: writer: sequence %s: stream %q sample %d: %v", id, st.Name, j, err)
			}
		}
	}
	b := w.buf[:0]
	for r := 0; r < rows; r++ {
		b = append(b, id...)
		for s, st := range w.streams {
			if r >= len(samples[s]) {
				continue
			}
			b = append(b, " |"...)
			b = append(b, st.Name...)
			smp := samples[s][r]
			for k, v := range smp.Values {
				b = append(b, ' ')
				if st.Sparse {
					b = strconv.AppendInt(b, int64(smp.Indices[k]), 10)
					b = append(b, ':')
				}
				b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
			}
		}
		b = append(b, '\n')
	}
	w.buf = b
	w.prevID, w.started = id, true
	_, err := w.w.Write(b)
	return err
}

func checkSample(st corpus.Stream, smp Sample) error {
	if st.Sparse {
		if len(smp.Indices) != len(smp.Values) {
			return fmt.Errorf("%d indices for %d values", len(smp.Indices), len(smp.Values))
		}
		for _, i := range smp.Indices {
			if i < 0 || int(i) >= st.Dim {
				return fmt.Errorf("index %d outside [0, %d)", i, st.Dim)
			}
		}
	} else if len(smp.Values) != st.Dim || smp.Indices != nil {
		return fmt.Errorf("dense sample with %d values, want %d", len(smp.Values), st.Dim)
	}
	for _, v := range smp.Values {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("value %v cannot be written in CTF", v)
		}
	}
	return nil
}

// Flush writes buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

// ChunkSamples extracts sequence i (chunk-relative) of ch as per-stream
// samples, the shape Writer.Write takes.
func ChunkSamples(ch *corpus.Chunk, streams []corpus.Stream, i int) [][]Sample {
	out := make([][]Sample, len(streams))
	for s, st := range streams {
		d := &ch.Streams[s]
		for j := d.SeqStart[i]; j < d.SeqStart[i+1]; j++ {
			if st.Sparse {
				a, b := d.RowStart[j], d.RowStart[j+1]
				out[s] = append(out[s], Sample{Indices: d.Indices[a:b:b], Values: d.Values[a:b:b]})
			} else {
				a, b := int(j)*st.Dim, int(j+1)*st.Dim
				out[s] = append(out[s], Sample{Values: d.Dense[a:b:b]})
			}
		}
	}
	return out
}
