package train

import (
	"fmt"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/internal/plural"
)

// weightCheck counts the negative edge weights of the buckets a run
// trains in its first epoch (every stored edge of the epoch's training
// edge sets, held-out ones included), so that the run can say how many
// there are once that epoch ends. A negative weight multiplies the
// edge's loss by a negative number: training then pushes the edge's
// entities apart, which is rarely what a weight column meant.
type weightCheck struct {
	epoch         int // the epoch counted: the run's first
	neg, weighted int64
	noted         bool
}

// add counts the weights of one prepared bucket of epoch.
func (c *weightCheck) add(epoch int, e *graph.Edges) {
	if epoch != c.epoch || e.Weight == nil {
		return
	}
	c.weighted += int64(len(e.Weight))
	for _, w := range e.Weight {
		if w < 0 {
			c.neg++
		}
	}
}

// note returns the warning, once, when the counted epoch held negative
// weights, and "" otherwise.
func (c *weightCheck) note(partial bool) string {
	if c.noted || c.neg == 0 {
		return ""
	}
	c.noted = true
	what := fmt.Sprintf("epoch %d", c.epoch)
	if partial {
		what = fmt.Sprintf("the buckets of epoch %d this run trained", c.epoch)
	}
	return fmt.Sprintf("warning: %d of the %d weighted edges in %s %s a negative weight: the loss of such an edge is multiplied by its weight, so training pushes its entities apart; check the weight column given to import (--weight-col)",
		c.neg, c.weighted, what, plural.Noun(c.neg, "has", "have"))
}
