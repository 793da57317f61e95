package model

import "github.com/batchprep/batchprep/internal/kern"

// rowGrads accumulates a batch's gradient per row of one table, so that a
// row drawn several times gets one Adagrad step with the summed gradient.
type rowGrads struct {
	tab  *Table
	typ  int
	slot []int32 // row -> index in rows, -1 when untouched
	rows []uint32
	g    []float32
	// mapped: slot and g are views of slotMem and gMem, mappings outside
	// the Go heap (NewMappedWorker, gradmem.go).
	mapped        bool
	slotMem, gMem []byte
	census        rowCensus // the batch's rows, with early updates (early.go)
}

func (rg *rowGrads) reset(t *Table, typ int) {
	// Forget the previous batch's rows first: they index the slots as
	// they were, whatever table comes now. Afterwards every slot is -1.
	for _, r := range rg.rows {
		rg.slot[r] = -1
	}
	rg.rows, rg.g = rg.rows[:0], rg.g[:0]
	if len(rg.slot) != t.Rows {
		// Another partition (or a new table of another size): resize.
		if cap(rg.slot) < t.Rows {
			rg.slot = rg.makeSlots(t.Rows)
		}
		rg.slot = rg.slot[:t.Rows]
		for i := range rg.slot {
			rg.slot[i] = -1
		}
	}
	rg.tab, rg.typ = t, typ
	if cap(rg.g) == 0 {
		rg.g = rg.makeGrads(4096 * t.Dim)
	}
}

// add adds g (one row of d floats) to row's gradient.
func (rg *rowGrads) add(row uint32, g []float32) {
	d := rg.tab.Dim
	s := rg.slot[row]
	if s < 0 {
		s = int32(len(rg.rows))
		rg.slot[row] = s
		rg.rows = append(rg.rows, row)
		rg.appendGrad(g[:d])
		return
	}
	addTo(rg.g[int(s)*d:int(s+1)*d], g[:d])
}

// apply gives every touched row its Adagrad step, prefetching the row and
// accumulator ahead rows ahead.
func (rg *rowGrads) apply(lr float32, scratch []float32, ahead int) {
	d, tab := rg.tab.Dim, rg.tab
	for _, r := range rg.rows[:min(ahead, len(rg.rows))] {
		kern.Prefetch(tab.Row(int(r)))
		kern.Prefetch(tab.Acc[r : r+1])
	}
	for s, r := range rg.rows {
		if a := s + ahead; ahead > 0 && a < len(rg.rows) {
			ra := int(rg.rows[a])
			kern.Prefetch(tab.Row(ra))
			kern.Prefetch(tab.Acc[ra : ra+1])
		}
		rg.tab.Update(int(r), rg.g[s*d:(s+1)*d], lr, scratch)
	}
}
