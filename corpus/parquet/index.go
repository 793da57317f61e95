package parquet

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/batchprep/batchprep/corpus"
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
// Row groups are decoded in parallel (up to GOMAXPROCS at once); the
// counts are then laid out in row order, and an error is that of the
// first bad row group, so the result does not depend on timing.
func (r *Reader) index(ctx context.Context) error {
	n := r.first[len(r.first)-1]
	if n > 1<<31-1 {
		return &Error{File: r.path, RowGroup: -1, Row: -1, Msg: fmt.Sprintf("%d rows; at most 2^31-1 sequences are supported", n), Err: ErrTooLarge}
	}
	groups := make([]groupCounts, len(r.first)-1)
	var next, failed atomic.Int64
	failed.Store(int64(len(groups)))
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(groups)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				g := int(next.Add(1) - 1)
				if g >= len(groups) || int64(g) > failed.Load() {
					return // past a bad group: the layout loop stops there
				}
				groups[g] = r.countGroup(ctx, g)
				for groups[g].err != nil {
					f := failed.Load()
					if int64(g) >= f || failed.CompareAndSwap(f, int64(g)) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	// The footer's row count sizes the arrays only up to a bound: a damaged
	// footer may claim any count.
	l := &corpus.Layout{ChunkStart: []int{0}, Samples: make([]uint32, 0, min(n, 1<<20))}
	if r.cfg.Label != "" {
		l.Labels = make([]uint32, 0, min(n, 1<<20))
	}
	r.totals = make([]int64, len(r.cfg.Streams))
	var chunkB int64
	chunkN := 0
	for g := range groups {
		gc := &groups[g]
		if gc.err != nil {
			return gc.err
		}
		for s, t := range gc.totals {
			r.totals[s] += t
		}
		for i, size := range gc.sizes {
			if chunkN > 0 && (r.cfg.ChunkSequences > 0 && chunkN >= r.cfg.ChunkSequences ||
				r.cfg.ChunkSequences == 0 && chunkB+size > r.cfg.chunkBytes()) {
				l.ChunkStart = append(l.ChunkStart, len(l.Samples))
				chunkB, chunkN = 0, 0
			}
			chunkB += size
			chunkN++
			r.maxSeqB = max(r.maxSeqB, size)
			l.Samples = append(l.Samples, gc.samples[i])
			if l.Labels != nil {
				l.Labels = append(l.Labels, gc.labels[i])
			}
		}
	}
	if len(l.Samples) > 0 {
		l.ChunkStart = append(l.ChunkStart, len(l.Samples))
	}
	r.layout = l
	return nil
}

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
	rd, err := r.openGroup(r.pf.RowGroups()[g], g, r.first[g])
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
		a, b := d.SeqStart[i], d.SeqStart[i+1]
		n := uint32(b - a)
		totals[s] += int64(n)
		if r.cfg.DefinesMBSize == "" {
			samples = max(samples, n)
		} else if st.Name == r.cfg.DefinesMBSize {
			samples = n
		}
		if st.Name == r.cfg.Label {
			labels = n
		}
		if st.Sparse {
			size += int64(d.RowStart[b]-d.RowStart[a])*8 + int64(n)*4
		} else {
			size += int64(n) * int64(st.Dim) * 4
		}
	}
	return samples, labels, size
}
