package importer

import (
	"context"
	"runtime"
	"sync"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
)

const writeChunk = 1 << 16

// writeSet sorts one file's edges into buckets (a stable counting sort, so
// file order is kept inside each bucket) and writes every bucket, empty
// ones included. It replaces fe's columns by their bucket order, with
// entity offsets inside partitions for the ids: fe is not to be used
// afterwards.
func writeSet(ctx context.Context, w *edgestore.Writer, p *parser, cfg *config.Config, set int, file string,
	fe *fileEdges, rep *EdgeSetReport, opts *Options, written *int64, buckets *int) error {
	L, R := cfg.BucketShape()
	order, starts := bucketize(p, fe, L*R, R, runtime.GOMAXPROCS(0))
	weights := opts.WeightCol >= 0
	if err := w.EdgeSet(set, file, weights); err != nil {
		return err
	}
	ordinals := make([]uint64, 0, writeChunk)
	for b := 0; b < L*R; b++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		lo, hi := starts[b], starts[b+1]
		if lo == hi {
			rep.EmptyBuckets++
		}
		rep.LargestBucket = max(rep.LargestBucket, int64(hi-lo))
		bw, err := w.Bucket(set, graph.Bucket{Lhs: b / R, Rhs: b % R}, int64(hi-lo))
		if err != nil {
			return err
		}
		k := 0 // skipped lines before the current edge
		for start := lo; start < hi; start += writeChunk {
			end := min(hi, start+writeChunk)
			// fe's columns are in bucket order: the chunk takes them as
			// they are (capacity cut, so nothing appends into them).
			e := &graph.Edges{Lhs: fe.lhs[start:end:end], Rhs: fe.rhs[start:end:end], Rel: fe.rel[start:end:end],
				Ordinal: ordinals[:0]}
			if weights {
				e.Weight = fe.weight[start:end:end]
			}
			for pos := start; pos < end; pos++ {
				idx := uint32(pos)
				if order != nil {
					idx = order[pos]
				}
				var ord uint64
				ord, k = fe.ordinal(idx, k)
				e.Ordinal = append(e.Ordinal, ord)
			}
			if err := bw.Append(e); err != nil {
				bw.Close()
				return err
			}
		}
		if err := bw.Close(); err != nil {
			return err
		}
		*written += int64(hi - lo)
		*buckets++
		if opts.Progress != nil {
			opts.Progress(Progress{Phase: "write", File: set, Path: file, Edges: *written, Buckets: *buckets})
		}
	}
	return nil
}

// minPerWorker is the fewest edges worth a goroutine in bucketize.
const minPerWorker = 1 << 16

// bucketize replaces fe's entity ids by their offsets in their partitions
// and sorts fe's columns by bucket: bucket b holds positions
// [starts[b], starts[b+1]), in file order, and order[pos] is the file
// index of the edge at pos. With one bucket nothing moves and order is nil.
// Sorting into new columns makes the writes sequential (reading the edges
// of a bucket from the file-order columns would miss the cache three
// times per edge) at the cost of 12 bytes per edge (16 with weights)
// while both exist. The edges are cut into one contiguous range per core (at most
// cores ranges of at least minPerWorker edges); the ranges
// are counted, then placed, in parallel, and range w's edges of a bucket go
// after range w-1's, so the order is the same for any number of cores.
func bucketize(p *parser, fe *fileEdges, nb, R, cores int) (order []uint32, starts []int) {
	n := fe.len()
	workers := max(1, min(cores, n/minPerWorker))
	bound := func(w int) int { return int(int64(w) * int64(n) / int64(workers)) }
	// dictsOf gives edge k's lhs and rhs dictionaries; same is set when
	// every edge has the same two.
	same := p.dynamic
	if !same {
		same = true
		for _, d := range p.relDicts {
			same = same && d == p.relDicts[0]
		}
	}
	dictsOf := func(k int) [2]*dict {
		if same {
			return p.relDicts[0]
		}
		return p.relDicts[fe.rel[k]]
	}
	bucketOf := func(d [2]*dict, k int) int {
		return int(d[0].loc[fe.lhs[k]]>>32)*R + int(d[1].loc[fe.rhs[k]]>>32)
	}
	parallel := func(f func(w, lo, hi int)) {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(w, bound(w), bound(w+1))
			}()
		}
		wg.Wait()
	}
	if nb == 1 {
		parallel(func(_, lo, hi int) {
			for k := lo; k < hi; k++ {
				d := dictsOf(k)
				fe.lhs[k], fe.rhs[k] = uint32(d[0].loc[fe.lhs[k]]), uint32(d[1].loc[fe.rhs[k]])
			}
		})
		return nil, []int{0, n}
	}
	counts := make([][]int, workers)
	parallel(func(w, lo, hi int) {
		c := make([]int, nb)
		for k := lo; k < hi; k++ {
			c[bucketOf(dictsOf(k), k)]++
		}
		counts[w] = c
	})
	// starts[b]: the first position of bucket b; counts[w][b] becomes the
	// next position of range w's edges of bucket b.
	starts = make([]int, nb+1)
	pos := 0
	for b := 0; b < nb; b++ {
		starts[b] = pos
		for w := range counts {
			c := counts[w][b]
			counts[w][b] = pos
			pos += c
		}
	}
	starts[nb] = pos
	order = make([]uint32, n)
	lhs, rhs, rel := make([]uint32, n), make([]uint32, n), make([]uint32, n)
	var weight []float32
	if fe.weight != nil {
		weight = make([]float32, n)
	}
	parallel(func(w, lo, hi int) {
		next := counts[w]
		for k := lo; k < hi; k++ {
			d := dictsOf(k)
			ll, rl := d[0].loc[fe.lhs[k]], d[1].loc[fe.rhs[k]]
			b := int(ll>>32)*R + int(rl>>32)
			pos := next[b]
			next[b]++
			order[pos] = uint32(k)
			lhs[pos], rhs[pos], rel[pos] = uint32(ll), uint32(rl), fe.rel[k]
			if weight != nil {
				weight[pos] = fe.weight[k]
			}
		}
	})
	fe.lhs, fe.rhs, fe.rel, fe.weight = lhs, rhs, rel, weight
	return order, starts
}
