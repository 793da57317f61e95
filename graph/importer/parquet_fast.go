package importer

import (
	"math"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/batchprep/batchprep/internal/kern"
)

// Most batches of a Parquet file have no bad row, and their entity
// columns are both dictionary-encoded or both integers. Such a batch goes
// from pass A to pass B in short form: 40 bytes a row (the sides'
// dictionary indexes or integer ids, the ids' hashes, the relation id and
// the weight) instead of a pending row record, which pass A would fill
// and pass B read for every row. Pass B stores a row whose two sides it
// finds at once (a dictionary value resolved before in the row group, an
// integer id in the integer index) without further checks: a row in
// short form passed every check but those of a new entity. Any other row
// is turned into a pending record and goes through finish, the same code
// as every other row, so that ids, errors and the store are what they
// would be without the short form.

// Kinds of short-form batches.
const (
	fastDict = 1 + iota // both sides dictionary indexes (ld, rd)
	fastInt             // both sides integer ids
)

// fastRows is a batch in short form (empty: the batch is in pending
// records).
type fastRows struct {
	fast   []pqFast
	kind   int
	ld, rd *pqDict // fastDict: the sides' dictionaries
}

// pqFast is a row in short form.
type pqFast struct {
	l, r int64 // the sides' dictionary indexes or integer ids
	// Integer ids: their hashes (intHash). Dictionary indexes: the value's
	// entity id + 1 if pass A found it (pqDict.pre), else 0.
	hl, hr uint64
	rel    uint32
	w      float32
}

// recRow, as a short-form row's relation, marks a row kept as a row
// record: l is its index in the batch's records.
const recRow = math.MaxUint32

// fastBatch puts the batch's m rows, read into cols, in short form if its
// entity columns are both dictionary indexes or both integer ids, and
// tells whether it did. A row that does not qualify (a bad value, a name
// from a plain page) is kept as a row record, built as without the short
// form, and marked in its place.
func (p *parser) fastBatch(b *pqBatch, cols *[roles]colVals, have *[roles]bool, m int, first int64) bool {
	if p.dynamic || m == 0 {
		return false
	}
	l, r := &cols[roleLhs], &cols[roleRhs]
	kind := 0
	switch {
	case l.isInt && r.isInt:
		kind = fastInt
	case !l.isInt && !r.isInt && l.pd != nil && r.pd != nil:
		kind = fastDict
	default:
		return false
	}
	rc, wc := &cols[roleRel], &cols[roleWeight]
	short := func(i int) bool {
		if l.null[i] || r.null[i] {
			return false
		}
		if kind == fastDict && (l.dx[i] < 0 || r.dx[i] < 0 || l.emptyName(i) || r.emptyName(i)) {
			return false
		}
		if have[roleRel] && (rc.null[i] || rc.rel[i] < 0) {
			return false
		}
		return !have[roleWeight] || !wc.null[i] && wc.wbad[i] == ""
	}
	b.fast = slices.Grow(b.fast[:0], m)[:m]
	b.batch = b.batch[:0]
	for i := range b.fast {
		f := &b.fast[i]
		if !short(i) {
			k := len(b.batch)
			if k < cap(b.batch) {
				b.batch = b.batch[:k+1] // buildRow sets every field
			} else {
				b.batch = append(b.batch, pending{})
			}
			p.buildRow(&b.batch[k], cols, have, i, first+int64(i))
			*f = pqFast{l: int64(k), rel: recRow}
			continue
		}
		*f = pqFast{}
		if have[roleRel] {
			f.rel = uint32(rc.rel[i])
		}
		if have[roleWeight] {
			f.w = wc.w[i]
		}
		if kind == fastDict {
			f.l, f.r = int64(l.dx[i]), int64(r.dx[i])
			if l.pd.pre != nil {
				f.hl = uint64(l.pd.pre[f.l])
			}
			if r.pd.pre != nil {
				f.hr = uint64(r.pd.pre[f.r])
			}
		} else {
			f.l, f.r, f.hl, f.hr = l.ints[i], r.ints[i], l.hash[i].h, r.hash[i].h
		}
	}
	b.kind, b.ld, b.rd = kind, l.pd, r.pd
	return true
}

// flushFast is pass B over a batch in short form, in row order.
func (p *parser) flushFast(b *pqBatch, name string, expected *int, out *fileEdges) error {
	switch {
	case !p.oneTypePair():
	case b.kind == fastDict:
		return p.flushFastDict(b, name, expected, out)
	case b.kind == fastInt:
		return p.flushFastInt(b, name, expected, out)
	}
	return p.flushFastAny(b, name, expected, out)
}

// flushFastAny is flushFast for any batch in short form.
func (p *parser) flushFastAny(b *pqBatch, name string, expected *int, out *fileEdges) error {
	rows := b.fast
	first := b.rows - int64(len(rows)) // the batch's first row
	weight := p.opts.hasWeight()
	for stage := 3; stage >= 1; stage-- {
		for k := 0; k < len(rows) && k < stage*prefetchAhead; k++ {
			p.touchFast(b, k, stage)
		}
	}
	for i := range rows {
		for stage := 3; stage >= 1; stage-- {
			if k := i + stage*prefetchAhead; k < len(rows) {
				p.touchFast(b, k, stage)
			}
		}
		f := &rows[i]
		if f.rel == recRow {
			if err := p.finish(&b.batch[f.l], name, expected, out); err != nil {
				return err
			}
			continue
		}
		dd := p.relDicts[f.rel]
		var lid, rid uint32
		found := false
		if b.kind == fastDict {
			lp, rp := b.ld.idOf(int32(f.l), dd[0]), b.rd.idOf(int32(f.r), dd[1])
			if *lp != 0 && *rp != 0 {
				lid, rid, found = *lp-1, *rp-1, true
			}
		} else {
			var lok, rok bool
			lid, lok = dd[0].lookupInt(f.l, f.hl)
			rid, rok = dd[1].lookupInt(f.r, f.hr)
			found = lok && rok
		}
		if found && *expected != 0 {
			out.addEdge(lid, rid, f, weight)
			continue
		}
		if err := p.finishFast(b, i, first, name, expected, out); err != nil {
			return err
		}
	}
	return nil
}

// addEdge stores a short row whose entity ids pass B found (it passed
// every check but those of a new entity).
func (out *fileEdges) addEdge(lid, rid uint32, f *pqFast, weight bool) {
	out.edgeLines++
	out.lhs = append(out.lhs, lid)
	out.rhs = append(out.rhs, rid)
	out.rel = append(out.rel, f.rel)
	if weight {
		out.weight = append(out.weight, f.w)
	}
}

// finishFast makes row i of a batch in short form into a row record and
// runs finish on it.
func (p *parser) finishFast(b *pqBatch, i int, first int64, name string, expected *int, out *fileEdges) error {
	f := &b.fast[i]
	e := pending{lineNo: first + int64(i) + 1, nf: 1, lcol: roleLhs, rcol: roleRhs, relCol: roleRel, dicts: p.relDicts[f.rel], rel: f.rel, w: f.w}
	if b.kind == fastDict {
		e.ld, e.lx, e.rd, e.rx = b.ld, int32(f.l), b.rd, int32(f.r)
	} else {
		e.lint, e.li, e.hl, e.rint, e.ri, e.hr = true, f.l, f.hl, true, f.r, f.hr
	}
	return p.finish(&e, name, expected, out)
}

// oneTypePair tells whether every relation has the same lhs and rhs
// entity dictionaries (one entity type, say).
func (p *parser) oneTypePair() bool {
	for _, dd := range p.relDicts[1:] {
		if dd != p.relDicts[0] {
			return false
		}
	}
	return true
}

// flushFastDict is flushFast for dictionary indexes when every relation
// has the same entity dictionaries: the ids of the batch's two
// dictionaries are read from their arrays directly.
func (p *parser) flushFastDict(b *pqBatch, name string, expected *int, out *fileEdges) error {
	rows := b.fast
	first := b.rows - int64(len(rows))
	weight := p.opts.hasWeight()
	d0, d1 := p.relDicts[0][0], p.relDicts[0][1]
	b.ld.idOf(0, d0) // the arrays exist from here on
	b.rd.idOf(0, d1)
	lord, rord := b.ld.ord, b.rd.ord
	if b.ld.d0 != d0 || b.rd.d0 != d1 {
		return p.flushFastAny(b, name, expected, out)
	}
	ldh, rdh := b.ld.dh, b.rd.dh
	// Two prefetch stages: a row's ids and hashes 2*prefetchAhead rows
	// ahead (the hashes unread when the id turns out to be known: fetching
	// them blindly costs less than a stage that reads the id first), then
	// for a value not resolved yet its name table slot.
	// A side pass A resolved (f.hl, f.hr) reads nothing.
	touch := func(k int, far bool) {
		f := &rows[k]
		if f.rel == recRow {
			return
		}
		l, r := f.l, f.r
		if far {
			if f.hl == 0 {
				kern.PrefetchLine(unsafe.Pointer(&lord[l]))
				kern.PrefetchLine(unsafe.Pointer(&ldh[l]))
			}
			if f.hr == 0 {
				kern.PrefetchLine(unsafe.Pointer(&rord[r]))
				kern.PrefetchLine(unsafe.Pointer(&rdh[r]))
			}
			return
		}
		if f.hl == 0 && lord[l] == 0 {
			kern.PrefetchLine(unsafe.Pointer(&d0.slots[ldh[l].h&d0.mask]))
		}
		if f.hr == 0 && rord[r] == 0 {
			kern.PrefetchLine(unsafe.Pointer(&d1.slots[rdh[r].h&d1.mask]))
		}
	}
	for k := 0; k < len(rows) && k < 2*prefetchAhead; k++ {
		touch(k, true)
	}
	for k := 0; k < len(rows) && k < prefetchAhead; k++ {
		touch(k, false)
	}
	for i := range rows {
		if k := i + 2*prefetchAhead; k < len(rows) {
			touch(k, true)
		}
		if k := i + prefetchAhead; k < len(rows) {
			touch(k, false)
		}
		f := &rows[i]
		if f.rel == recRow {
			if err := p.finish(&b.batch[f.l], name, expected, out); err != nil {
				return err
			}
			continue
		}
		l, r := uint32(f.hl), uint32(f.hr)
		if l == 0 {
			l = lord[f.l]
		}
		if r == 0 {
			r = rord[f.r]
		}
		if (l == 0 || r == 0) && *expected != 0 {
			l, r = p.resolveDict(b, f, d0, d1, l, r)
		}
		if l != 0 && r != 0 && *expected != 0 {
			out.addEdge(l-1, r-1, f, weight)
			continue
		}
		if err := p.finishFast(b, i, first, name, expected, out); err != nil {
			return err
		}
	}
	return nil
}

// resolveDict is finish for a short row of flushFastDict one of whose
// values is not resolved yet, when the row is good: it looks the values
// up by name, adds the absent ones, records their ids in the id arrays
// and returns them (+1). l and r are the sides' ids + 1 if known, else 0.
// When a new name would make the row bad (not UTF-8, a full dictionary)
// it adds nothing and returns 0 for that side, so that finish, run next,
// reports the row.
func (p *parser) resolveDict(b *pqBatch, f *pqFast, d0, d1 *dict, l, r uint32) (uint32, uint32) {
	var lslot, rslot *uint32
	var lname, rname []byte
	var lh, rh, lat, rat uint64
	lid, lok := l-1, l != 0
	rid, rok := r-1, r != 0
	if !lok {
		lslot, lid, lok, lname, lh, _, lat = dictSide(b.ld, int32(f.l), d0)
	}
	if !rok {
		rslot, rid, rok, rname, rh, _, rat = dictSide(b.rd, int32(f.r), d1)
	}
	if !lok && (!utf8.Valid(lname) || d0.full()) || !rok && (!utf8.Valid(rname) || d1.full()) {
		return 0, 0
	}
	// As in finish: insert only once both sides are known to be good.
	if !lok {
		lid = d0.addAt(lname, lh, lat)
		*lslot = lid + 1
	}
	if !rok {
		switch {
		case d1 != d0 || lok:
			rid = d1.addAt(rname, rh, rat) // nothing inserted since its lookup
		case string(lname) == string(rname):
			rid = lid
		default:
			rid = d1.add(rname, rh)
		}
		*rslot = rid + 1
	}
	return lid + 1, rid + 1
}

// touchFast is touchFar (stage 3), touchMid (stage 2) and touch (stage 1)
// for row k of a batch in short form.
func (p *parser) touchFast(b *pqBatch, k, stage int) {
	f := &b.fast[k]
	if f.rel == recRow {
		return
	}
	dd := p.relDicts[f.rel]
	d0, d1 := dd[0], dd[1]
	if b.kind == fastDict {
		l, r := int32(f.l), int32(f.r)
		switch stage {
		case 3:
			kern.PrefetchLine(unsafe.Pointer(b.ld.idOf(l, d0)))
			kern.PrefetchLine(unsafe.Pointer(b.rd.idOf(r, d1)))
		case 2:
			if *b.ld.idOf(l, d0) == 0 {
				kern.PrefetchLine(unsafe.Pointer(&b.ld.dh[l]))
			}
			if *b.rd.idOf(r, d1) == 0 {
				kern.PrefetchLine(unsafe.Pointer(&b.rd.dh[r]))
			}
		default:
			touchDictSlot(b.ld, l, d0)
			touchDictSlot(b.rd, r, d1)
		}
		return
	}
	switch stage {
	case 3:
		if d0.ints != nil {
			kern.PrefetchLine(unsafe.Pointer(&d0.ints[f.hl&d0.imask]))
		}
		if d1.ints != nil {
			kern.PrefetchLine(unsafe.Pointer(&d1.ints[f.hr&d1.imask]))
		}
	case 1:
		touchIntSlot(d0, f.l, f.hl)
		touchIntSlot(d1, f.r, f.hr)
	}
}

// flushFastInt is flushFast for integer ids when every relation has the
// same entity dictionaries.
func (p *parser) flushFastInt(b *pqBatch, name string, expected *int, out *fileEdges) error {
	rows := b.fast
	first := b.rows - int64(len(rows))
	weight := p.opts.hasWeight()
	d0, d1 := p.relDicts[0][0], p.relDicts[0][1]
	// Two prefetch stages: the integer index slots, then for an id not in
	// the index the name table slot of its decimal name (dict_int.go).
	// While both dictionaries are intOnly an id not in the index is new
	// and needs no name table slot: one stage. A batch in short form adds
	// no name by name (its bad rows add nothing), so that holds for the
	// whole batch.
	names := !d0.intOnly() || !d1.intOnly()
	touch := func(k, stage int) {
		f := &rows[k]
		if f.rel == recRow {
			return
		}
		if stage == 1 {
			touchIntSlot(d0, f.l, f.hl)
			touchIntSlot(d1, f.r, f.hr)
			return
		}
		if d0.ints != nil {
			kern.PrefetchLine(unsafe.Pointer(&d0.ints[f.hl&d0.imask]))
		}
		if d1.ints != nil {
			kern.PrefetchLine(unsafe.Pointer(&d1.ints[f.hr&d1.imask]))
		}
	}
	if names {
		for stage := 3; stage >= 1; stage -= 2 {
			for k := 0; k < len(rows) && k < stage*prefetchAhead; k++ {
				touch(k, stage)
			}
		}
	} else {
		for k := 0; k < len(rows) && k < 3*prefetchAhead; k++ {
			touch(k, 3)
		}
	}
	for i := range rows {
		if k := i + 3*prefetchAhead; k < len(rows) {
			touch(k, 3)
		}
		if k := i + prefetchAhead; names && k < len(rows) {
			touch(k, 1)
		}
		f := &rows[i]
		if f.rel == recRow {
			if err := p.finish(&b.batch[f.l], name, expected, out); err != nil {
				return err
			}
			continue
		}
		lid, lok := d0.lookupInt(f.l, f.hl)
		rid, rok := d1.lookupInt(f.r, f.hr)
		if *expected != 0 {
			if lok && rok {
				out.addEdge(lid, rid, f, weight)
				continue
			}
			if newInts(d0, d1, f, &lid, lok, &rid, rok) {
				out.addEdge(lid, rid, f, weight)
				continue
			}
		}
		if err := p.finishFast(b, i, first, name, expected, out); err != nil {
			return err
		}
	}
	return nil
}

// newInts adds the sides of short row f that the integer index does not
// hold (lok, rok false) when they are new entities for sure (their
// dictionaries are intOnly) and there is room for them, and reports
// whether it did. It does what finish would do with such a row, without a
// row record or a lookup by name: an integer id is always a valid name,
// and the row passed every other check in pass A.
func newInts(d0, d1 *dict, f *pqFast, lid *uint32, lok bool, rid *uint32, rok bool) bool {
	if !lok && (!d0.intOnly() || len(d0.names) >= math.MaxUint32-2) ||
		!rok && (!d1.intOnly() || len(d1.names) >= math.MaxUint32-2) {
		return false
	}
	if !lok {
		*lid = d0.addInt(f.l, f.hl)
	}
	if !rok {
		if d1 == d0 && !lok && f.r == f.l {
			*rid = *lid
		} else {
			*rid = d1.addInt(f.r, f.hr)
		}
	}
	return true
}

// reserveFromDicts grows the entity dictionaries' tables, before the
// first batch of a file in short form is looked up, to hold at least the
// values of the row group's dictionaries: a row group's dictionary holds
// distinct names, so its size is a lower bound on the entities to come
// that costs nothing to know, and it spares the tables' growth (a rehash
// of every name) while a large first row group is looked up.
func (p *parser) reserveFromDicts(b *pqBatch) {
	if b.kind != fastDict || !p.oneTypePair() {
		return
	}
	d0, d1 := p.relDicts[0][0], p.relDicts[0][1]
	if d0 == d1 {
		d0.reserve(max(len(b.ld.dh), len(b.rd.dh)))
		return
	}
	d0.reserve(len(b.ld.dh))
	d1.reserve(len(b.rd.dh))
}
