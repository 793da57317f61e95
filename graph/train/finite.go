package train

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/batchprep/batchprep/graph"
)

// ErrNotFinite marks a run stopped because its loss or one of its
// parameters became NaN or infinite (invariant 10).
var ErrNotFinite = errors.New("train: the model diverged")

// checkFinite returns ErrNotFinite, naming the bucket and the loss or the
// first parameter that is not finite, when the bucket just trained at pos
// (summed loss) left anything non-finite; nil otherwise. It runs before the
// bucket's checkpoint, so the last good checkpoint stays the latest.
func (t *Trainer) checkFinite(pos Position, b graph.Bucket, loss float64) error {
	what := ""
	switch {
	case math.IsNaN(loss) || math.IsInf(loss, 0):
		what = fmt.Sprintf("the loss is %v", loss)
	default:
		what = t.firstNonFinite(b)
	}
	if what == "" {
		return nil
	}
	kept := "the checkpoint, if any, holds the last good state"
	switch n := t.man.Buckets; {
	case n == 1:
		kept = "the checkpoint holds the last good state (1 bucket trained)"
	case n > 1:
		kept = fmt.Sprintf("the checkpoint holds the last good state (%d buckets trained)", n)
	}
	return fmt.Errorf("%w in epoch %d of %d, edge set %d, chunk %d, bucket (%d, %d): %s. "+
		"Nothing of this bucket was written; %s. Lower lr (now %g) or init_scale, or check the edge weights, then run again",
		ErrNotFinite, pos.Epoch+1, t.cfg.NumEpochs, pos.EdgeSet, pos.Chunk, b.Lhs, b.Rhs, what, kept, t.cfg.Lr)
}

// firstNonFinite names the first non-finite parameter the bucket can have
// changed: an entity embedding of its partitions, a relation operator's
// parameters or a global embedding; "" when all are finite.
func (t *Trainer) firstNonFinite(b graph.Bucket) string {
	for _, k := range t.changes(b) {
		tab := t.tables[k]
		if tab == nil {
			continue
		}
		if i := firstBad(tab.Emb); i >= 0 {
			return fmt.Sprintf("the embedding of entity type %q, partition %d, row %d holds %v", t.types[k.typ], k.part, i/tab.Dim, tab.Emb[i])
		}
	}
	for r, sides := range t.m.Params {
		for side, p := range sides {
			if p == nil {
				continue
			}
			if i := firstBad(p.P); i >= 0 {
				name := fmt.Sprintf("relations[%d] (%s)", r, t.cfg.Relations[r].Name)
				if t.cfg.DynamicRelations {
					name = fmt.Sprintf("dynamic relation %d", r)
				}
				return fmt.Sprintf("the %s operator of %s holds %v at parameter %d", [2]string{"rhs", "lhs"}[side], name, p.P[i], i)
			}
		}
	}
	for ty, g := range t.m.Global {
		if i := firstBad(g.P); i >= 0 {
			return fmt.Sprintf("the global embedding of entity type %q holds %v", t.types[ty], g.P[i])
		}
	}
	return ""
}

// firstBad is the index of the first NaN or infinite value of v, or -1.
// Every bucket scans its partitions whole (2 x tables x P bytes an epoch:
// 47 GB at P = 16 on LiveJournal's entity count) while the workers wait,
// so the scan tests exponent bits rather than converting each value, and
// splits a large slice over the cores; the first bad index is the same.
func firstBad(v []float32) int {
	n := runtime.GOMAXPROCS(0)
	if n == 1 || len(v) < finiteSplit {
		return firstBadSerial(v, 0)
	}
	part := (len(v) + n - 1) / n
	found := make([]int, n)
	var wg sync.WaitGroup
	for w := range n {
		lo, hi := min(w*part, len(v)), min((w+1)*part, len(v))
		wg.Go(func() { found[w] = firstBadSerial(v[lo:hi], lo) })
	}
	wg.Wait()
	for _, i := range found {
		if i >= 0 {
			return i
		}
	}
	return -1
}

// finiteSplit is the length from which firstBad splits its scan.
const finiteSplit = 1 << 20

// firstBadSerial is firstBad on one goroutine, its result offset by off.
// A float32 is NaN or infinite exactly when its 8 exponent bits are all
// set; blocks of 8 values are tested together first.
func firstBadSerial(v []float32, off int) int {
	const exp = 0x7f800000
	i := 0
	for ; i+8 <= len(v); i += 8 {
		b := v[i : i+8 : i+8]
		x0, x1 := math.Float32bits(b[0])&exp, math.Float32bits(b[1])&exp
		x2, x3 := math.Float32bits(b[2])&exp, math.Float32bits(b[3])&exp
		x4, x5 := math.Float32bits(b[4])&exp, math.Float32bits(b[5])&exp
		x6, x7 := math.Float32bits(b[6])&exp, math.Float32bits(b[7])&exp
		if x0 == exp || x1 == exp || x2 == exp || x3 == exp || x4 == exp || x5 == exp || x6 == exp || x7 == exp {
			break
		}
	}
	for ; i < len(v); i++ {
		if math.Float32bits(v[i])&exp == exp {
			return off + i
		}
	}
	return -1
}
