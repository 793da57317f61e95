package importer

import (
	"fmt"
	"hash/maphash"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/batchprep/batchprep/internal/kern"
	"github.com/batchprep/batchprep/internal/plural"
)

// Lines are handled in two passes over blocks of lines. scan (pass A, on
// the reader goroutine) splits a line, runs the checks that need no
// dictionary, and hashes the entity names; flush (pass B) then, in line
// order, looks the names up, applies the remaining checks, reports bad
// lines and inserts new entities. Before looking up line i, flush touches
// the hash table slots of line i+prefetchAhead, so the cache misses of
// several lines overlap instead of being paid one after the other.
const prefetchAhead = 8

// pending is one edge line between the passes. Its byte slices point into
// the read buffer, which flush runs before reusing.
type pending struct {
	lineNo int64
	lf, rf []byte
	relF   []byte
	hl, hr uint64 // the names' hashes; for an integer id, intHash of it
	pl, pr uint64 // the names' prefixes (read here, on the core that just read the block)
	// Integer ids (Parquet): when lint (rint) is set, the lhs (rhs) entity
	// is named by li's (ri's) decimal digits and lf (rf) is nil until pass B
	// needs the name.
	li, ri     int64
	lint, rint bool
	// Dictionary-encoded names (Parquet, parquet_dict.go): when ld (rd) is
	// set, the lhs (rhs) entity is value lx (rx) of that dictionary, and
	// lf, hl, pl (rf, hr, pr) are unset until pass B needs the name.
	ld, rd *pqDict
	lx, rx int32
	dicts  [2]*dict
	fault  *fault // set by a failed pass-A check
	rel    uint32
	w      float32
	nf     int32 // field count
	lcol   int32 // 1-based byte columns of the lhs, rhs and relation fields
	rcol   int32
	relCol int32
}

// fault is a pass-A check that failed, kept until pass B reports it in
// line order.
type fault struct {
	stage int // the check that failed (see flush)
	col   int
	why   Reason
	msg   string
}

// Check stages, in the order flush applies them.
const (
	stageFields   = 1 // too few fields (scan)
	stageExpected = 2 // field count differs from the first good line (flush)
	stageField    = 3 // empty or quoted field (scan)
	stageRelation = 4 // unknown typed relation (scan) / bad dynamic name (flush)
	stageEntity   = 5 // entity name not UTF-8, dictionary full (flush)
	stageWeight   = 6 // bad weight (scan)
)

// scanState is pass A's own state (pass A runs on the reader goroutine and
// reads only the parser's immutable parts: options, relation names, the
// dictionaries' hash seeds).
type scanState struct {
	fields   [][]byte
	batch    []pending
	comments int64
}

// scan is pass A for one line. It returns whether the line was an edge
// line (appended to the batch).
func (p *parser) scan(st *scanState, line []byte, lineNo int64) bool {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 || line[0] == '#' {
		st.comments++
		return false
	}
	var colsArr [8]int
	cols := colsArr[:]
	if len(st.fields) > len(cols) {
		cols = make([]int, len(st.fields))
	}
	nf := p.split(st.fields, line, cols)
	if nf == 0 { // blanks only (space mode): an empty line
		st.comments++
		return false
	}
	st.batch = append(st.batch, pending{lineNo: lineNo, nf: int32(nf)})
	e := &st.batch[len(st.batch)-1]
	fail := func(stage, col int, r Reason, format string, a ...any) bool {
		e.fault = &fault{stage: stage, col: col, why: r, msg: fmt.Sprintf(format, a...)}
		return true
	}
	if nf < p.needed {
		return fail(stageFields, 0, ReasonColumns, "%s, the chosen columns need at least %d", plural.Count(nf, "field"), p.needed)
	}
	o := p.opts
	for _, c := range []int{o.LhsCol, o.RhsCol, o.RelCol, o.WeightCol} {
		if c < 0 {
			continue
		}
		if len(st.fields[c]) == 0 {
			return fail(stageField, cols[c], ReasonEmpty, "field %d is empty", c)
		}
		if o.Delimiter == Comma && st.fields[c][0] == '"' {
			return fail(stageField, cols[c], ReasonQuoted, "field %d is quoted; quoted CSV fields are not supported", c)
		}
	}
	e.dicts = p.relDicts[0]
	if o.RelCol >= 0 {
		f := st.fields[o.RelCol]
		e.relF, e.relCol = f, int32(cols[o.RelCol])
		if !p.dynamic {
			id, ok := p.relByCfg[string(f)]
			if !ok {
				return fail(stageRelation, cols[o.RelCol], ReasonRelation, "relation %q is not in the config's relations", f)
			}
			e.rel, e.dicts = id, p.relDicts[id]
		}
	}
	e.lf, e.rf = st.fields[o.LhsCol], st.fields[o.RhsCol]
	e.lcol, e.rcol = int32(cols[o.LhsCol]), int32(cols[o.RhsCol])
	e.hl = maphash.Bytes(e.dicts[0].seed, e.lf)
	e.hr = maphash.Bytes(e.dicts[1].seed, e.rf)
	e.pl, e.pr = prefix(e.lf), prefix(e.rf)
	if o.WeightCol >= 0 {
		f := st.fields[o.WeightCol]
		v, err := strconv.ParseFloat(string(f), 32)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return fail(stageWeight, cols[o.WeightCol], ReasonWeight, "weight %q is not a finite number", f)
		}
		e.w = float32(v)
	}
	return true
}

// flush is pass B over a batch, in line order.
func (p *parser) flush(batch []pending, name string, expected *int, out *fileEdges) error {
	for i := 0; i < len(batch) && i < 3*prefetchAhead; i++ {
		batch[i].touchFar()
	}
	for i := 0; i < len(batch) && i < 2*prefetchAhead; i++ {
		batch[i].touchMid()
	}
	for i := 0; i < len(batch) && i < prefetchAhead; i++ {
		batch[i].touch()
	}
	for i := range batch {
		if j := i + 3*prefetchAhead; j < len(batch) {
			batch[j].touchFar()
		}
		if j := i + 2*prefetchAhead; j < len(batch) {
			batch[j].touchMid()
		}
		if j := i + prefetchAhead; j < len(batch) {
			batch[j].touch()
		}
		if err := p.finish(&batch[i], name, expected, out); err != nil {
			return err
		}
	}
	return nil
}

// touch prefetches the hash table slots the line will probe first.
func (e *pending) touch() {
	if e.dicts[0] == nil {
		return
	}
	d0, d1 := e.dicts[0], e.dicts[1]
	if e.ld != nil {
		touchDictSlot(e.ld, e.lx, d0)
	} else if e.lint {
		touchIntSlot(d0, e.li, e.hl)
	} else {
		kern.PrefetchLine(unsafe.Pointer(&d0.slots[e.hl&d0.mask]))
	}
	if e.rd != nil {
		touchDictSlot(e.rd, e.rx, d1)
	} else if e.rint {
		touchIntSlot(d1, e.ri, e.hr)
	} else {
		kern.PrefetchLine(unsafe.Pointer(&d1.slots[e.hr&d1.mask]))
	}
}

func (p *parser) finish(e *pending, name string, expected *int, out *fileEdges) error {
	ordinal := uint64(out.edgeLines)
	out.edgeLines++
	bad := func(col int, r Reason, msg string) error {
		out.bad = append(out.bad, ordinal)
		le := &LineError{File: name, Line: e.lineNo, Column: col, Reason: r, Msg: msg}
		if p.pq != nil { // col is a column role (parquet.go)
			le.Column, le.Parquet = 0, p.pq.pos(e.lineNo-1, col)
		}
		return p.budget.add(le)
	}
	stage := 0
	if e.fault != nil {
		stage = e.fault.stage
	}
	if stage == stageFields {
		return bad(e.fault.col, e.fault.why, e.fault.msg)
	}
	if *expected != 0 && int(e.nf) != *expected {
		return bad(0, ReasonColumns, fmt.Sprintf("%s, the file's first edge line has %d", plural.Count(e.nf, "field"), *expected))
	}
	if stage == stageField || stage == stageRelation {
		return bad(e.fault.col, e.fault.why, e.fault.msg)
	}
	rel, newRel := e.rel, false
	if p.dynamic && e.relF != nil {
		id, ok := p.dynRel[string(e.relF)]
		if !ok {
			if !utf8.Valid(e.relF) {
				return bad(int(e.relCol), ReasonUTF8, "relation name is not valid UTF-8")
			}
			if len(p.dynNames) >= math.MaxUint32 {
				return bad(int(e.relCol), ReasonRelations, "more than 2^32-1 relations")
			}
			id, newRel = uint32(len(p.dynNames)), true
		}
		rel = id
	}
	// Entities: look up first, insert only once the whole line is good.
	d0, d1 := e.dicts[0], e.dicts[1]
	var lid, rid uint32
	var lok, rok bool
	var lat, rat uint64
	lih, rih := e.hl, e.hr // the integer ids' hashes (for insertInt)
	var lord, rord *uint32 // where the dictionary sides' ids go (parquet_dict.go)
	if e.ld != nil {
		lord, lid, lok, e.lf, e.hl, e.pl, lat = dictSide(e.ld, e.lx, d0)
	} else if e.lint {
		lid, lok, e.lf, e.hl, e.pl, lat = intSide(d0, e.li, e.hl, &p.lname)
	} else {
		lid, lok, lat = d0.lookupHash(e.lf, e.hl, e.pl)
	}
	if !lok {
		if !utf8.Valid(e.lf) {
			return bad(int(e.lcol), ReasonUTF8, "lhs entity name is not valid UTF-8")
		}
		if d0.full() {
			return bad(int(e.lcol), ReasonTooMany, "more than 2^32-1 entities of one type")
		}
	}
	if e.rd != nil {
		rord, rid, rok, e.rf, e.hr, e.pr, rat = dictSide(e.rd, e.rx, d1)
	} else if e.rint {
		rid, rok, e.rf, e.hr, e.pr, rat = intSide(d1, e.ri, e.hr, &p.rname)
	} else {
		rid, rok, rat = d1.lookupHash(e.rf, e.hr, e.pr)
	}
	if !rok {
		if !utf8.Valid(e.rf) {
			return bad(int(e.rcol), ReasonUTF8, "rhs entity name is not valid UTF-8")
		}
		if d1.full() {
			return bad(int(e.rcol), ReasonTooMany, "more than 2^32-1 entities of one type")
		}
	}
	if stage == stageWeight {
		return bad(e.fault.col, e.fault.why, e.fault.msg)
	}
	if *expected == 0 {
		*expected = int(e.nf)
	}
	if newRel {
		s := string(e.relF)
		p.dynRel[s] = rel
		p.dynNames = append(p.dynNames, s)
	}
	if !lok {
		lid = d0.addAt(e.lf, e.hl, lat)
		if e.lint {
			d0.insertInt(e.li, lih, lid)
		}
		if lord != nil {
			*lord = lid + 1
		}
	}
	if !rok {
		switch {
		case d1 != d0 || lok:
			rid = d1.addAt(e.rf, e.hr, rat) // nothing inserted since its lookup
		case string(e.lf) == string(e.rf):
			rid = lid
		case rat == unplaced: // a new integer id (intSide), absent as lhs's name differs
			rid = d1.addAt(e.rf, e.hr, rat)
		default:
			rid = d1.add(e.rf, e.hr)
		}
		if e.rint {
			d1.insertInt(e.ri, rih, rid)
		}
		if rord != nil {
			*rord = rid + 1
		}
	}
	out.lhs = append(out.lhs, lid)
	out.rhs = append(out.rhs, rid)
	out.rel = append(out.rel, rel)
	if p.opts.hasWeight() {
		out.weight = append(out.weight, e.w)
	}
	return nil
}
