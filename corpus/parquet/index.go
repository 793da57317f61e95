package parquet

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/mapped"
	"github.com/batchprep/batchprep/internal/ordered"
	"github.com/batchprep/batchprep/internal/procs"
)

// indexBatch is how many rows the index pass decodes at a time.
const indexBatch = 4096

// groupCounts is what the index pass learns from one row group: each
// row's sample count, label count and size in memory, and the group's
// samples per stream.
type groupCounts struct {
	samples, labels []uint32
	sizes           []int64
	totals          []int64
	err             error
}

// index reads every row once, recording sample counts and cutting chunks.
// Row groups are decoded in parallel (one per core, at most two per core
// ahead of the layout), and laid out in row order as they come, so the
// pass holds a few groups' counts, not the file's; an error is that of the
// first bad row group, so the result does not depend on timing. A file of
// spillAbove bytes or more keeps its counts in a mapped file
// (internal/mapped), not on the heap.
func (r *Reader) index(ctx context.Context, size int64) error {
	n := r.first[len(r.first)-1]
	if n > 1<<31-1 {
		return &Error{File: r.path, RowGroup: -1, Row: -1, Msg: fmt.Sprintf("%d rows; at most 2^31-1 sequences are supported", n), Err: ErrTooLarge}
	}
	b := &layoutBuilder{r: r, l: &corpus.Layout{ChunkStart: []int{0}}, labels: r.cfg.Label != ""}
	if size >= spillAbove {
		sp, err := mapped.NewSpill(os.TempDir(), b.tables())
		if err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
		b.spill = sp
		defer sp.Remove()
	}
	r.totals = make([]int64, len(r.cfg.Streams))
	var err error
	ordered.Run(len(r.first)-1, procs.Compute(), func(g int) groupCounts {
		return r.countGroup(ctx, g)
	}, func(g int, gc groupCounts) bool {
		if err = gc.err; err != nil {
			return false
		}
		for s, t := range gc.totals {
			r.totals[s] += t
		}
		err = b.add(g, &gc)
		return err == nil
	})
	if err != nil {
		return err
	}
	return b.finish()
}

// spillAbove is the file size from which the counts go to a mapped file;
// tests lower it.
var spillAbove int64 = 256 << 20

// layoutBuilder cuts chunks and records the counts chunk by chunk.
type layoutBuilder struct {
	r             *Reader
	l             *corpus.Layout
	labels        bool
	samples, labs []uint32 // the chunk being built
	chunkB        int64
	n             int
	spill         *mapped.Spill
}

func (b *layoutBuilder) tables() int {
	if b.labels {
		return 2
	}
	return 1
}

// add lays out row group g's rows.
func (b *layoutBuilder) add(g int, gc *groupCounts) error {
	cfg := &b.r.cfg
	for i, size := range gc.sizes {
		if k := len(b.samples); k > 0 && (cfg.ChunkSequences > 0 && k >= cfg.ChunkSequences ||
			cfg.ChunkSequences == 0 && b.chunkB+size > cfg.chunkBytes()) {
			b.closeChunk()
		}
		if gc.samples[i] == 0 {
			row := b.r.first[g] + int64(i)
			return &Error{File: b.r.path, RowGroup: g, Row: row, Msg: fmt.Sprintf("row %d has no samples", row), Err: ErrEmptyStream}
		}
		b.chunkB += size
		b.r.maxSeqB = max(b.r.maxSeqB, size)
		b.samples = append(b.samples, gc.samples[i])
		if b.labels {
			b.labs = append(b.labs, gc.labels[i])
		}
	}
	return nil
}

// closeChunk ends the chunk being built.
func (b *layoutBuilder) closeChunk() {
	if len(b.samples) == 0 {
		return
	}
	l := b.l
	var labs []uint32
	if b.labels {
		labs = b.labs
	}
	s, lab := corpus.CountSums(b.samples, labs)
	l.ChunkSamples, l.ChunkLabels = append(l.ChunkSamples, s), append(l.ChunkLabels, lab)
	if b.spill != nil {
		b.spill.Write(b.samples, b.labs)
	} else {
		l.Samples = append(l.Samples, b.samples...)
		if b.labels {
			l.Labels = append(l.Labels, b.labs...)
		}
	}
	b.n += len(b.samples)
	l.ChunkStart = append(l.ChunkStart, b.n)
	b.samples, b.labs, b.chunkB = b.samples[:0], b.labs[:0], 0
}

// finish closes the last chunk and, with a spill, maps the counts.
func (b *layoutBuilder) finish() error {
	b.closeChunk()
	l := b.l
	if l.Samples == nil {
		l.Samples = []uint32{}
	}
	if b.labels && l.Labels == nil {
		l.Labels = []uint32{}
	}
	b.r.layout = l
	if b.spill == nil {
		return nil
	}
	m, err := b.seal()
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	step := 4*b.n + mapped.Pad(4*b.n)
	l.Samples = mapped.U32s(m.Bytes(), b.n)
	off := []int{0}
	if b.labels {
		l.Labels = mapped.U32s(m.Bytes()[step:], b.n)
		off = append(off, step)
	}
	l.Pager = &mapped.Tables{File: m, Off: off, ChunkStart: l.ChunkStart}
	b.r.counts = m
	return nil
}

// seal writes the spilled counts to a temporary file, maps it and removes
// its name; the layout's hash is computed on the way.
func (b *layoutBuilder) seal() (*mapped.File, error) {
	sp := b.spill
	if err := sp.Flush(); err != nil {
		return nil, err
	}
	samples, err := sp.Table(0)
	if err != nil {
		return nil, err
	}
	var labels io.Reader
	if b.labels {
		if labels, err = sp.Table(1); err != nil {
			return nil, err
		}
	}
	h, err := corpus.HashCounts(b.l.ChunkStart, b.n, samples, labels)
	if err != nil {
		return nil, err
	}
	b.l.SetHash(h)
	f, err := os.CreateTemp(sp.Dir, ".batchprep-counts-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	err = sp.WriteTables(f, b.n)
	if err == nil {
		err = f.Sync() // so that its cached pages can be dropped when mapped
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return mapped.Open(f.Name(), keepResident)
}

// keepResident: a counts file up to this size stays mapped whole.
const keepResident = 32 << 20

// countGroup decodes and checks row group g in batches of indexBatch rows.
func (r *Reader) countGroup(ctx context.Context, g int) (gc groupCounts) {
	defer func() {
		if p := recover(); p != nil { // the library's checks of a damaged file
			gc = groupCounts{err: damaged(r.path, g, r.first[g])}
		}
	}()
	rows := r.first[g+1] - r.first[g]
	gc.samples = make([]uint32, 0, min(rows, 1<<20))
	gc.sizes = make([]int64, 0, min(rows, 1<<20))
	if r.cfg.Label != "" {
		gc.labels = make([]uint32, 0, min(rows, 1<<20))
	}
	gc.totals = make([]int64, len(r.cfg.Streams))
	rd, err := r.openGroup(r.pf.RowGroups()[g], g, r.first[g], nil)
	if err != nil {
		return groupCounts{err: err}
	}
	defer rd.close()
	for row := r.first[g]; row < r.first[g+1]; row += indexBatch {
		if ctx != nil && ctx.Err() != nil {
			return groupCounts{err: fmt.Errorf("parquet: indexing stopped: %w", ctx.Err())}
		}
		k := int(min(indexBatch, r.first[g+1]-row))
		ch, err := rd.next(k)
		if err != nil {
			return groupCounts{err: err}
		}
		for i := range k {
			samp, lab, size := r.count(ch, i, gc.totals)
			gc.samples = append(gc.samples, samp)
			gc.sizes = append(gc.sizes, size)
			if gc.labels != nil {
				gc.labels = append(gc.labels, lab)
			}
		}
	}
	return gc
}

// count returns row i's sample count (invariant 2), its label count and
// its size in memory, and adds its samples to totals.
func (r *Reader) count(ch *corpus.Chunk, i int, totals []int64) (samples, labels uint32, size int64) {
	for s, st := range r.cfg.Streams {
		d := &ch.Streams[s]
		n := uint32(d.SeqStart[i+1] - d.SeqStart[i])
		totals[s] += int64(n)
		if r.cfg.DefinesMBSize == "" {
			samples = max(samples, n)
		} else if st.Name == r.cfg.DefinesMBSize {
			samples = n
		}
		if st.Name == r.cfg.Label {
			labels = n
		}
	}
	return samples, labels, seqSize(r.cfg.Streams, ch, i)
}

// seqSize is sequence i's size in memory, the measure of invariant 4: 4
// bytes per dense value, 8 per sparse entry and 4 per sparse sample.
func seqSize(streams []corpus.Stream, ch *corpus.Chunk, i int) int64 {
	var size int64
	for s, st := range streams {
		d := &ch.Streams[s]
		a, b := d.SeqStart[i], d.SeqStart[i+1]
		if st.Sparse {
			size += int64(d.RowStart[b]-d.RowStart[a])*8 + int64(b-a)*4
		} else {
			size += int64(b-a) * int64(st.Dim) * 4
		}
	}
	return size
}
