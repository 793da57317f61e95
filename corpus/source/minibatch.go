package source

import "github.com/batchprep/batchprep/corpus"

// Minibatch is one step's data for this rank. It and every slice in it are
// owned by the Source and valid only until the next call of Next, NextK,
// Seek or Restore, which reuse the buffers; copy what must outlive that.
type Minibatch struct {
	// Step counts global steps from position 0 (or from the Seek position).
	Step uint64
	// Epoch is the epoch of the minibatch's first sequence.
	Epoch int
	// Sweep is the sweep of the minibatch's first sequence.
	Sweep uint64
	// Start and End are the nominal positions of the global minibatch (all
	// ranks): it covers samples [Start, End).
	Start, End uint64
	// EndOfSweep: the global minibatch ended at or crossed a sweep end.
	EndOfSweep bool
	// EndOfEpoch: the global minibatch ended an epoch.
	EndOfEpoch bool
	// Sequences are the file-order ordinals of this rank's sequences whose
	// data were delivered, in timeline order; IDs their ids as written.
	Sequences []int
	IDs       []string
	// Streams holds this rank's data, one entry per corpus stream.
	Streams []StreamBatch
	// Skipped lists this rank's sequences whose positions passed in this
	// minibatch but whose data could not be parsed (never silently dropped).
	Skipped []Skipped
}

// StreamBatch is one stream's data in a minibatch. Sequence i of the
// minibatch owns samples [SeqStart[i], SeqStart[i+1]); a dense sample j is
// Dense[j*Dim:(j+1)*Dim]; a sparse sample j is CSR: entries
// Indices/Values[RowStart[j]:RowStart[j+1]], in file order.
type StreamBatch struct {
	corpus.Stream
	SeqStart []int32
	Dense    []float32
	RowStart []int32
	Indices  []int32
	Values   []float32
}

// Samples is the stream's total sample count in the minibatch.
func (b *StreamBatch) Samples() int { return int(b.SeqStart[len(b.SeqStart)-1]) }

// SequenceSamples returns sequence i's sample count in this stream.
func (b *StreamBatch) SequenceSamples(i int) int { return int(b.SeqStart[i+1] - b.SeqStart[i]) }

// Skipped is a sequence whose data were dropped, with the parse error
// (which names file, line and column when the corpus is a file).
type Skipped struct {
	Sequence int
	Err      error
}

// reset empties the minibatch, keeping capacity.
func (m *Minibatch) reset(streams []corpus.Stream) {
	m.Sequences = m.Sequences[:0]
	m.IDs = m.IDs[:0]
	m.Skipped = m.Skipped[:0]
	if len(m.Streams) != len(streams) {
		m.Streams = make([]StreamBatch, len(streams))
	}
	for i := range m.Streams {
		b := &m.Streams[i]
		b.Stream = streams[i]
		b.SeqStart = append(b.SeqStart[:0], 0)
		b.Dense = b.Dense[:0]
		b.RowStart = b.RowStart[:0]
		if streams[i].Sparse {
			b.RowStart = append(b.RowStart, 0)
		}
		b.Indices = b.Indices[:0]
		b.Values = b.Values[:0]
	}
}
