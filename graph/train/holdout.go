package train

import (
	"sort"

	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/graph/train/model"
	"github.com/batchprep/batchprep/internal/mix"
)

// holdout ranks the bucket's held-out edges as PBG's per-bucket
// evaluation does (invariant 5): in chunks of eval_num_batch_negs, each
// edge against the chunk's other edges and eval_num_uniform_negs uniform
// negatives, on both sides (unless disabled); phase 0 is before training
// the bucket, 1 after. Edges are grouped by relation outside dynamic mode.
func (t *Trainer) holdout(pb *plan.Prepared, phase int) Metrics {
	rows := append([]uint32(nil), pb.Holdout()...)
	e := pb.Data()
	if !t.cfg.DynamicRelations {
		sort.SliceStable(rows, func(i, j int) bool { return e.Rel[rows[i]] < e.Rel[rows[j]] })
	}
	batchNegs, uniform := t.cfg.NumBatchNegs, t.cfg.NumUniformNegs
	if t.cfg.EvalNumBatchNegs != nil {
		batchNegs = *t.cfg.EvalNumBatchNegs
	}
	if t.cfg.EvalNumUniformNegs != nil {
		uniform = *t.cfg.EvalNumUniformNegs
	}
	w := t.workers[0]
	var ranks []float64
	var b model.Batch
	for i, start := 0, 0; start < len(rows); i++ {
		end := start + 1
		for end < len(rows) && end-start < max(t.cfg.BatchSize, 1) &&
			(t.cfg.DynamicRelations || e.Rel[rows[end]] == e.Rel[rows[start]]) {
			end++
		}
		L, R, _, _ := t.batchTables(pb, rows[start:end], &b)
		rng := mix.Rand(t.cfg.Seed, tagEval, uint64(pb.Epoch), uint64(pb.EdgeSet), uint64(pb.Chunk),
			uint64(pb.Bucket.Lhs), uint64(pb.Bucket.Rhs), uint64(phase), uint64(i))
		ranks = w.Ranks(b, L, R, batchNegs, uniform, rng, ranks)
		start = end
	}
	return MetricsOf(ranks)
}
