package plan

import "fmt"

// String writes p as messages show it: epochs counted from 1, as the
// progress lines count them; edge sets, chunks, places in a pass's bucket
// order, workers and batches from 0.
func (p Position) String() string {
	return fmt.Sprintf("(epoch %d, edge set %d, chunk %d, bucket %d of the pass, worker %d, batch %d)",
		p.Epoch+1, p.EdgeSet, p.Chunk, p.Index, p.Worker, p.Batch)
}
