package mixture

import (
	"fmt"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/source"
)

// Minibatch is one step's data for this rank: a source.Minibatch (the same
// fields, read the same way; Sequences and Skipped hold ordinals within
// their corpus) with each sequence's corpus beside it. It and its slices
// are owned by the Mixture and valid only until its next call.
type Minibatch struct {
	source.Minibatch
	// Corpus[i] is the corpus (its index in the list given to New) of
	// Sequences[i]; SkippedCorpus[i] that of Skipped[i].
	Corpus        []int
	SkippedCorpus []int
	// CorpusSamples[k] is corpus k's samples in the global minibatch (all
	// ranks): they sum to End - Start.
	CorpusSamples []uint64
}

func (m *Minibatch) reset(streams []corpus.Stream, corpora int) {
	m.Sequences, m.IDs, m.Skipped = m.Sequences[:0], m.IDs[:0], m.Skipped[:0]
	m.Corpus, m.SkippedCorpus = m.Corpus[:0], m.SkippedCorpus[:0]
	if len(m.CorpusSamples) != corpora {
		m.CorpusSamples = make([]uint64, corpora)
	}
	clear(m.CorpusSamples)
	if len(m.Streams) != len(streams) {
		m.Streams = make([]source.StreamBatch, len(streams))
	}
	for i := range m.Streams {
		b := &m.Streams[i]
		b.Stream = streams[i]
		b.SeqStart = append(b.SeqStart[:0], 0)
		b.Dense, b.RowStart, b.Indices, b.Values = b.Dense[:0], b.RowStart[:0], b.Indices[:0], b.Values[:0]
		if streams[i].Sparse {
			b.RowStart = append(b.RowStart, 0)
		}
	}
}

// fetch asks every corpus's Source for its sequences of the planned global
// minibatch, those of this rank's group [lo, hi) with their data and the
// others passed over unloaded, and interleaves this rank's into mb in the
// mixture's order.
func (m *Mixture) fetch(mb *Minibatch, lo, hi int) error {
	mb.reset(m.streams, len(m.lanes))
	clear(m.split)
	for j, p := range m.plan {
		part := 1
		if j < lo {
			part = 0
		} else if j >= hi {
			part = 2
		}
		m.split[p.corpus][part] += uint64(p.samples)
		mb.CorpusSamples[p.corpus] += uint64(p.samples)
	}
	for k, ln := range m.lanes {
		sp := m.split[k]
		m.batches[k] = nil
		if err := ln.src.Advance(sp[0]); err != nil {
			return &CorpusError{k, m.names[k], err}
		}
		if sp[1] > 0 {
			b, err := ln.src.NextK(int(sp[1]))
			if err != nil {
				return &CorpusError{k, m.names[k], err}
			}
			if b.End-b.Start != sp[1] {
				return &CorpusError{k, m.names[k], fmt.Errorf("its source gave %d samples where the mixture planned %d", b.End-b.Start, sp[1])}
			}
			m.batches[k] = b
		}
		if err := ln.src.Advance(sp[2]); err != nil {
			return &CorpusError{k, m.names[k], err}
		}
	}
	if m.splitsChunks() {
		return m.interleave(mb, m.owned())
	}
	return m.interleave(mb, m.plan[lo:hi])
}

// splitsChunks tells whether ranks split each step by chunk owner
// (source.Config.SplitChunks).
func (m *Mixture) splitsChunks() bool { return m.cfg.SplitsChunks() }

// ownsChunks tells whether this rank owns a chunk of one of the corpora
// (corpus k's chunks are turned by k).
func (m *Mixture) ownsChunks(corpora []Corpus) bool {
	for k, c := range corpora {
		sc := m.cfg
		sc.ChunkShift = k
		if sc.OwnsChunks(c.Source.Layout().NumChunks()) {
			return true
		}
	}
	return false
}

// owned returns the planned sequences whose chunks this rank owns: chunk c
// of corpus k is rank (c+k) mod W's, as each corpus's source decides.
func (m *Mixture) owned() []planned {
	w := max(m.cfg.Workers, 1)
	own := m.own[:0]
	for _, p := range m.plan {
		if (m.lanes[p.corpus].layout.ChunkOf(p.ord)+p.corpus)%w == m.cfg.Rank {
			own = append(own, p)
		}
	}
	m.own = own
	return own
}

// interleave copies the planned sequences, in order, from their corpora's
// minibatches into mb. Each corpus's minibatch lists its sequences in its
// own timeline order, which is their order in the plan.
func (m *Mixture) interleave(mb *Minibatch, plan []planned) error {
	// Per corpus: its next delivered and its next skipped entry.
	nx, sk := m.cursor[:len(m.lanes)], m.cursor[len(m.lanes):]
	clear(m.cursor)
	for _, p := range plan {
		b := m.batches[p.corpus]
		c := nx[p.corpus]
		if c < len(b.Sequences) && b.Sequences[c] == p.ord {
			copySequence(mb, b, c)
			mb.Sequences = append(mb.Sequences, p.ord)
			mb.IDs = append(mb.IDs, b.IDs[c])
			mb.Corpus = append(mb.Corpus, p.corpus)
			nx[p.corpus]++
			continue
		}
		s := sk[p.corpus]
		if s < len(b.Skipped) && b.Skipped[s].Sequence == p.ord {
			mb.Skipped = append(mb.Skipped, b.Skipped[s])
			mb.SkippedCorpus = append(mb.SkippedCorpus, p.corpus)
			sk[p.corpus]++
			continue
		}
		return fmt.Errorf("corpus %d (%s): its source's order differs from the mixture's plan at sequence %d", p.corpus, m.names[p.corpus], p.ord)
	}
	return nil
}

// copySequence appends sequence c of b to mb, every stream.
func copySequence(mb *Minibatch, b *source.Minibatch, c int) {
	for s := range mb.Streams {
		out, in := &mb.Streams[s], &b.Streams[s]
		r0, r1 := in.SeqStart[c], in.SeqStart[c+1]
		out.SeqStart = append(out.SeqStart, out.SeqStart[len(out.SeqStart)-1]+(r1-r0))
		if !in.Sparse {
			d := int32(in.Dim)
			out.Dense = append(out.Dense, in.Dense[r0*d:r1*d]...)
			continue
		}
		e0, e1 := in.RowStart[r0], in.RowStart[r1]
		shift := int32(len(out.Indices)) - e0
		out.Indices = append(out.Indices, in.Indices[e0:e1]...)
		out.Values = append(out.Values, in.Values[e0:e1]...)
		for _, r := range in.RowStart[r0+1 : r1+1] {
			out.RowStart = append(out.RowStart, r+shift)
		}
	}
}
