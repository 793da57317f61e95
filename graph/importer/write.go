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
// ones included. It replaces fe's entity ids by their offsets inside
// their partitions: fe is not to be used afterwards.
//
// Buckets are created in order on this goroutine (Writer.Bucket) and
// filled and closed by one goroutine per core, several files at once:
// filling is a copy of the rows into columns and into the page cache,
// which one core alone made a sixth of the import.
func writeSet(ctx context.Context, w *edgestore.Writer, p *parser, cfg *config.Config, set int, file string,
	fe *fileEdges, rep *EdgeSetReport, opts *Options, written *int64, buckets *int) error {
	L, R := cfg.BucketShape()
	cores := runtime.GOMAXPROCS(0)
	rows, starts := bucketize(p, fe, L*R, R, cores)
	weights := opts.hasWeight()
	if err := w.EdgeSet(set, file, weights); err != nil {
		return err
	}
	if c, ok := opts.sourceColumns(rep.Parquet); ok {
		if err := w.SetSourceColumns(set, c); err != nil {
			return err
		}
	}
	type job struct {
		bw     *edgestore.BucketWriter
		lo, hi int
	}
	jobs := make(chan job, cores)
	done := make(chan int, L*R) // edges of each bucket written, or -1 after an error
	var failed error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(cores, L*R) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var chunk graph.Edges
			for j := range jobs {
				err := fillBucket(j.bw, fe, rows, j.lo, j.hi, weights, &chunk)
				if cerr := j.bw.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					once.Do(func() { failed = err })
					done <- -1
					continue
				}
				done <- j.hi - j.lo
			}
		}()
	}
	report := func(n int) {
		if n < 0 {
			return
		}
		*written += int64(n)
		*buckets++
		if opts.Progress != nil {
			opts.Progress(Progress{Phase: "write", File: set, Path: file, Edges: *written, Buckets: *buckets})
		}
	}
	var err error
	sent, stop := 0, false
	for b := 0; b < L*R && !stop; b++ {
		for len(done) > 0 {
			n := <-done
			report(n)
			sent--
			stop = stop || n < 0 // a bucket failed: failed holds why
		}
		if err = ctx.Err(); stop || err != nil {
			break
		}
		lo, hi := starts[b], starts[b+1]
		if lo == hi {
			rep.EmptyBuckets++
		}
		rep.LargestBucket = max(rep.LargestBucket, int64(hi-lo))
		var bw *edgestore.BucketWriter
		if bw, err = w.Bucket(set, graph.Bucket{Lhs: b / R, Rhs: b % R}, int64(hi-lo)); err != nil {
			break
		}
		jobs <- job{bw, lo, hi}
		sent++
	}
	close(jobs)
	for ; sent > 0; sent-- {
		report(<-done)
	}
	wg.Wait()
	if failed != nil {
		return failed
	}
	return err
}

// fillBucket appends rows [lo, hi) (or, with one bucket and rows nil,
// fe's columns [lo, hi) in file order) to bw in chunks of writeChunk
// edges, through chunk (one per goroutine).
func fillBucket(bw *edgestore.BucketWriter, fe *fileEdges, rows []edgeRow, lo, hi int, weights bool, chunk *graph.Edges) error {
	if chunk.Lhs == nil {
		chunk.Lhs, chunk.Rhs, chunk.Rel = make([]uint32, 0, writeChunk), make([]uint32, 0, writeChunk), make([]uint32, 0, writeChunk)
		chunk.Ordinal = make([]uint64, 0, writeChunk)
	}
	k := 0 // skipped lines before the current edge
	for start := lo; start < hi; start += writeChunk {
		end := min(hi, start+writeChunk)
		e := chunk
		if rows == nil {
			// One bucket: fe's columns in file order, as they are
			// (capacity cut, so nothing appends into them).
			e = &graph.Edges{Lhs: fe.lhs[start:end:end], Rhs: fe.rhs[start:end:end], Rel: fe.rel[start:end:end],
				Ordinal: chunk.Ordinal[:0]}
			for idx := start; idx < end; idx++ {
				var ord uint64
				ord, k = fe.ordinal(uint32(idx), k)
				e.Ordinal = append(e.Ordinal, ord)
			}
		} else {
			chunk.Reset()
			for _, r := range rows[start:end] {
				chunk.Lhs = append(chunk.Lhs, r.lhs)
				chunk.Rhs = append(chunk.Rhs, r.rhs)
				chunk.Rel = append(chunk.Rel, r.rel)
				var ord uint64
				ord, k = fe.ordinal(r.idx, k)
				chunk.Ordinal = append(chunk.Ordinal, ord)
			}
		}
		if weights {
			e.Weight = fe.weight[start:end:end]
		}
		if err := bw.Append(e); err != nil {
			return err
		}
	}
	return nil
}

// minPerWorker is the fewest edges worth a goroutine in bucketize.
const minPerWorker = 1 << 16

// edgeRow is an edge in bucket order: entity offsets, relation and its
// index in the file.
type edgeRow struct {
	lhs, rhs, rel, idx uint32
}

// bucketize replaces fe's entity ids by their offsets in their partitions
// and sorts the edges by bucket: bucket b holds rows [starts[b],
// starts[b+1]), in file order (fe.weight is sorted alike). With one bucket
// nothing moves and rows is nil: fe's columns are in file order.
//
// The edges are cut into one contiguous range per core (at most cores
// ranges of at least minPerWorker edges). A first pass over each range
// replaces the ids (two random reads per edge), notes each edge's bucket
// and counts them; a second copies the edges into their rows (a stable
// counting sort; range w's edges of a bucket go after range w-1's, so the
// result is the same for any number of cores). Rows rather than columns
// make one write stream per bucket instead of four, and the writes then
// read memory sequentially. They cost 16 bytes per edge (20 with weights),
// plus 2 bytes (4 beyond 65536 buckets) for the bucket numbers, while fe's
// columns still exist.
func bucketize(p *parser, fe *fileEdges, nb, R, cores int) (rows []edgeRow, starts []int) {
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
	// The bucket of every edge: 2 bytes each, or 4 beyond 65536 buckets.
	var small []uint16
	var large []uint32
	if nb <= 1<<16 {
		small = make([]uint16, n)
	} else {
		large = make([]uint32, n)
	}
	counts := make([][]int, workers)
	parallel(func(w, lo, hi int) {
		c := make([]int, nb)
		for k := lo; k < hi; k++ {
			d := dictsOf(k)
			ll, rl := d[0].loc[fe.lhs[k]], d[1].loc[fe.rhs[k]]
			b := int(ll>>32)*R + int(rl>>32)
			fe.lhs[k], fe.rhs[k] = uint32(ll), uint32(rl)
			if small != nil {
				small[k] = uint16(b)
			} else {
				large[k] = uint32(b)
			}
			c[b]++
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
	rows = make([]edgeRow, n)
	var weight []float32
	if fe.weight != nil {
		weight = make([]float32, n)
	}
	parallel(func(w, lo, hi int) {
		next := counts[w]
		for k := lo; k < hi; k++ {
			var b int
			if small != nil {
				b = int(small[k])
			} else {
				b = int(large[k])
			}
			pos := next[b]
			next[b]++
			rows[pos] = edgeRow{lhs: fe.lhs[k], rhs: fe.rhs[k], rel: fe.rel[k], idx: uint32(k)}
			if weight != nil {
				weight[pos] = fe.weight[k]
			}
		}
	})
	fe.lhs, fe.rhs, fe.rel, fe.weight = nil, nil, nil, weight
	return rows, starts
}
