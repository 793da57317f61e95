package model

import (
	"fmt"
	"math"

	"github.com/batchprep/batchprep/internal/kern"
)

// Masked is the score given to a negative that must not count (a batch
// negative that is the edge's own positive, or the true entity under
// all_negs): every loss gives it zero loss and zero gradient (invariant 3).
const Masked = -1e9

// Loss turns the scores of n positives and their m negatives each into a
// loss and its gradient.
type Loss struct {
	kind   int
	margin float32
}

const (
	lossRanking = iota
	lossLogistic
	lossSoftmax
)

// Losses lists the loss names.
var Losses = []string{"ranking", "logistic", "softmax"}

// NewLoss returns the loss called name; margin is used by ranking.
func NewLoss(name string, margin float64) (Loss, error) {
	for k, n := range Losses {
		if n == name {
			return Loss{kind: k, margin: float32(margin)}, nil
		}
	}
	return Loss{}, fmt.Errorf("unknown loss_fn %q (want one of %v)", name, Losses)
}

// Name is the config's loss name.
func (l Loss) Name() string { return Losses[l.kind] }

// Eval returns the loss of pos (n) against neg (n×m), row i weighted by
// w[i] (w nil: all 1), and writes its gradient to dpos and dneg. numNeg is
// the number of negatives per positive as PyTorch-BigGraph counts them for
// the logistic loss's 1/numNeg weight: masked and padding negatives
// included, 0 when the side's negatives are disabled (see the batch step):
//
//	ranking   Σ_i w_i Σ_j max(0, margin - pos_i + neg_ij)
//	logistic  Σ_i w_i (softplus(-pos_i) + (1/numNeg) Σ_j softplus(neg_ij))
//	softmax   Σ_i w_i (logsumexp(pos_i, neg_i1..im) - pos_i)
//
// Masked negatives add nothing to any sum (invariant 3).
func (l Loss) Eval(pos, neg, w []float32, n, m, numNeg int, dpos, dneg []float32) float64 {
	var total float64
	negW := 0.0
	if numNeg > 0 {
		negW = 1 / float64(numNeg)
	}
	for i := 0; i < n; i++ {
		wi := float32(1)
		if w != nil {
			wi = w[i]
		}
		row, drow := neg[i*m:(i+1)*m], dneg[i*m:(i+1)*m]
		var li float64
		var dp float32
		switch l.kind {
		case lossRanking:
			for j, s := range row {
				v := l.margin - pos[i] + s
				if v > 0 && s > Masked/2 {
					li += float64(v)
					drow[j] = wi
					dp -= wi
				} else {
					drow[j] = 0
				}
			}
		case lossLogistic:
			li += softplus(-float64(pos[i]))
			dp = -wi * float32(sigmoid(-float64(pos[i])))
			var ln float64
			for j, s := range row {
				if s <= Masked/2 {
					drow[j] = 0
					continue
				}
				ln += softplus(float64(s))
				drow[j] = wi * float32(negW*sigmoid(float64(s)))
			}
			li += negW * ln
		case lossSoftmax:
			li, dp = softmaxRow(pos[i], row, drow, wi)
		}
		dpos[i] = dp
		total += float64(wi) * li
	}
	return total
}

// softmaxRow is one row of the softmax loss, logsumexp(pos, row) - pos,
// weighted by wi; it writes the row's gradient to drow and returns the
// loss and the positive's gradient. The exponentials are kern.Softmax's
// (vectorized): the negatives' softmax p_j and their log-sum-exp ln, then
// the share of the negatives s = e^(ln-lse) with lse = logaddexp(pos, ln),
// so that d/dneg_j = wi·s·p_j and d/dpos = wi·(e^(pos-lse) - 1). A Masked
// score lies more than 87.3 below any real one, so kern gives it exactly 0
// (and when every negative is masked, s is 0): invariant 3.
func softmaxRow(pos float32, row, drow []float32, wi float32) (float64, float32) {
	copy(drow, row)
	ln := float64(kern.Softmax(drow))
	p := float64(pos)
	mx := max(p, ln)
	lse := mx + math.Log(math.Exp(p-mx)+math.Exp(ln-mx))
	kern.Scale(wi*float32(math.Exp(ln-lse)), drow)
	return lse - p, wi * (float32(math.Exp(p-lse)) - 1)
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
