package importer

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// pqKind is what a Parquet column holds, as the importer reads it.
type pqKind int

const (
	kindInt32 pqKind = iota
	kindInt64
	kindBytes
	kindFloat
	kindDouble
)

// pqCol is a chosen column of a Parquet file.
type pqCol struct {
	role     string // lhs, rhs, rel or weight
	name     string // the column's name in the file
	leaf     int    // leaf column index (the row groups' column chunk)
	kind     pqKind
	unsigned bool // integers with an unsigned logical type
	maxDef   byte // definition level of a present value (0: required)
}

// errCorrupt is wrapped by the errors of pages that contradict the file's
// own metadata.
var errCorrupt = errors.New("the file is corrupt")

// cursor reads one column chunk row by row, page after page, straight from
// the pages' decoded buffers (dictionary pages are read as indexes into
// the dictionary's values).
type cursor struct {
	col   *pqCol
	pages parquet.Pages
	page  parquet.Page // the current page
	left  int          // rows left in the current page
	defs  []byte       // definition levels of the page; nil when required
	di    int
	vi    int     // next value of the page
	nv    int     // values in the page (non-null rows)
	idx   []int32 // dictionary indexes, or nil
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	bytes []byte
	offs  []uint32
	nd    int // values in the dictionary (or page, without one)

	// For entity columns with a dictionary: each dictionary value's hash
	// and prefix, computed once for the column chunk (hashes, below), in
	// the pqDict that pass B resolves the rows' dictionary indexes with.
	hashed   bool // the page's values are dictionary indexes into pd
	seed     *maphash.Seed
	dictData []byte  // the dictionary pd is of (strings)
	dictI64  []int64 // (int64 ids)
	dictI32  []int32 // (int32 ids)
	pd       *pqDict
	// The entity dictionary pd's values are pre-resolved in (dict_shared.go),
	// or nil.
	resolveIn *dict
	relData   []byte          // the dictionary relIDs are of
	relIDs    []int32         // relation ids by dictionary index; relUnknown until looked up
	relSmall  []int32         // an integer relation column's ids by value below relSmall (relOfInt)
	relInts   map[int64]int32 // and the other values'
}

const relUnknown = -2

// dictHashes is a name's hash and prefix, and for a dictionary value its
// bytes' place in the dictionary, side by side so that a row reads one
// cache line.
type dictHashes struct {
	h, pre uint64
	lo, hi uint32
}

// advance reads the next page.
func (c *cursor) advance() error {
	for c.left == 0 {
		if c.page != nil {
			// The page is done with: its values were consumed or copied
			// (names into the batch's arena, dictionary indexes into the
			// batch), so its buffers can go back to the library's pool.
			// Names of a dictionary point into the dictionary's values,
			// which the library allocates apart from the pool and never
			// reuses.
			parquet.Release(c.page)
		}
		c.page = nil
		pg, err := c.pages.ReadPage()
		if err == io.EOF {
			return fmt.Errorf("column %q has fewer rows than its row group: %w", c.col.name, errCorrupt)
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("column %q: a page ends early: %w", c.col.name, errCorrupt)
			}
			return fmt.Errorf("column %q: a page cannot be decoded: %w", c.col.name, errCorrupt)
		}
		c.page = pg
		c.left = int(pg.NumRows())
		c.defs = pg.DefinitionLevels()
		if c.col.maxDef == 0 {
			c.defs = nil
		}
		c.di, c.vi = 0, 0
		present := c.left
		if c.defs != nil {
			if len(c.defs) < c.left {
				return fmt.Errorf("column %q: definition levels missing: %w", c.col.name, errCorrupt)
			}
			present = 0
			for _, d := range c.defs[:c.left] {
				if d >= c.col.maxDef {
					present++
				}
			}
		}
		d := pg.Data()
		c.idx = nil
		if dict := pg.Dictionary(); dict != nil {
			c.idx = d.Int32()
			c.nv = len(c.idx)
			d = dict.Page().Data()
		}
		n := 0
		switch c.col.kind {
		case kindInt32:
			c.i32 = d.Int32()
			n = len(c.i32)
		case kindInt64:
			c.i64 = d.Int64()
			n = len(c.i64)
		case kindFloat:
			c.f32 = d.Float()
			n = len(c.f32)
		case kindDouble:
			c.f64 = d.Double()
			n = len(c.f64)
		case kindBytes:
			c.bytes, c.offs = d.ByteArray()
			n = max(len(c.offs)-1, 0)
			if len(c.offs) > 0 && int(c.offs[len(c.offs)-1]) > len(c.bytes) {
				return fmt.Errorf("column %q: string offsets out of range: %w", c.col.name, errCorrupt)
			}
		}
		c.nd = n
		c.hashed = false
		if c.idx == nil {
			c.nv = n
		} else if c.seed != nil && (c.col.kind == kindBytes || c.col.kind == kindInt32 || c.col.kind == kindInt64) {
			c.hashes()
			c.hashed = true
		}
		if c.nv < present {
			return fmt.Errorf("column %q: a page has %d values for %d rows: %w", c.col.name, c.nv, present, errCorrupt)
		}
	}
	return nil
}

// next moves to the next row and returns its value's position in the
// page's (or dictionary's) values, or -1 for a null.
func (c *cursor) next() (int, error) {
	if c.left == 0 {
		if err := c.advance(); err != nil {
			return 0, err
		}
	}
	c.left--
	if c.defs != nil {
		d := c.defs[c.di]
		c.di++
		if d < c.col.maxDef {
			return -1, nil
		}
	}
	v := c.vi
	c.vi++
	if c.idx != nil {
		v = int(c.idx[v])
		if v < 0 || v >= c.nd {
			return 0, fmt.Errorf("column %q: dictionary index %d of %d values: %w", c.col.name, v, c.nd, errCorrupt)
		}
	}
	return v, nil
}

// appendID appends integer value v in decimal.
func (c *cursor) appendID(dst []byte, v int) []byte {
	switch {
	case c.col.kind == kindInt32 && c.col.unsigned:
		return strconv.AppendUint(dst, uint64(uint32(c.i32[v])), 10)
	case c.col.kind == kindInt32:
		return strconv.AppendInt(dst, int64(c.i32[v]), 10)
	case c.col.unsigned:
		return strconv.AppendUint(dst, uint64(c.i64[v]), 10)
	}
	return strconv.AppendInt(dst, c.i64[v], 10)
}

// fastRun fills rows i... of cv from a run of the current page without
// nulls, for a dictionary-encoded column of entity names, and returns the
// rows filled (0: not such a page, use next). (Integer ids have a loop of
// their own, fillInts.) A dictionary index out of range leaves the
// row to next, which reports it.
func (c *cursor) fastRun(cv *colVals, i, m int, entity bool) int {
	if !entity {
		return 0
	}
	k := min(c.left, m-i)
	if c.defs != nil { // an optional column: the run stops at the first null
		n := 0
		for n < k && c.defs[c.di+n] >= c.col.maxDef {
			n++
		}
		k = n
	}
	if k == 0 {
		return 0
	}
	switch {
	case c.hashed && (cv.pd == nil || cv.pd == c.pd):
		// The rows keep their dictionary indexes: pass B maps them to
		// entity ids (parquet_dict.go). An index out of range is left to
		// next, which reports it.
		cv.pd = c.pd
		nd := uint32(len(c.pd.dh))
		for j, x := range c.idx[c.vi : c.vi+k] {
			if uint32(x) >= nd {
				k = j
				break
			}
			cv.null[i+j] = false
			cv.dx[i+j] = x
		}
	default:
		return 0
	}
	c.vi += k
	c.left -= k
	if c.defs != nil {
		c.di += k
	}
	return k
}

// colVals holds one column's values for a batch of rows.
type colVals struct {
	// isInt: the column's values are integer ids in ints (entity columns,
	// typed relation columns), and name is not set (fillInts).
	isInt bool
	ints  []int64
	null  []bool
	name  [][]byte     // entity and relation columns
	hash  []dictHashes // entity columns: the names' hashes and prefixes
	// Entity columns with a dictionary: a row's index into pd's values, or
	// -1 when the row's value is in name and hash (a plain page).
	pd   *pqDict
	dx   []int32
	rel  []int32   // relation column, typed relations: the id, -1 when not in the config
	w    []float32 // weight column
	wbad []string  // weight column: the value shown when not a finite float32, else ""
}

// fill reads the next m rows of the column into cv; names are appended to
// a (or point into the dictionary), and hashed with seed for entity
// columns (integer ids: see fillInts).
//
// rel, set for a relation column with the config's relations, gives a
// name's relation id (-1: not in the config); fill keeps each dictionary
// value's id, so that the names of a dictionary-encoded column are looked
// up once per column chunk.
func (c *cursor) fill(cv *colVals, m int, a *arena, seed *maphash.Seed, iseed uint64, rel func([]byte) int32) error {
	entity := c.col.role == roleNames[roleLhs] || c.col.role == roleNames[roleRhs]
	weight := c.col.role == roleNames[roleWeight]
	cv.isInt = (entity || rel != nil) && c.intKeyed()
	if cv.isInt {
		return c.fillInts(cv, m, entity, iseed, rel)
	}
	if entity {
		c.seed = seed
	}
	cv.null = slices.Grow(cv.null[:0], m)[:m]
	if weight {
		cv.w = slices.Grow(cv.w[:0], m)[:m]
		cv.wbad = slices.Grow(cv.wbad[:0], m)[:m]
	} else {
		cv.name = slices.Grow(cv.name[:0], m)[:m]
		if rel != nil {
			cv.rel = slices.Grow(cv.rel[:0], m)[:m]
		}
		if entity {
			cv.hash = slices.Grow(cv.hash[:0], m)[:m]
			cv.dx = slices.Grow(cv.dx[:0], m)[:m]
			cv.pd = nil
		}
	}
	for i := 0; i < m; i++ {
		if c.left == 0 {
			if err := c.advance(); err != nil {
				return err
			}
		}
		if k := c.fastRun(cv, i, m, entity && rel == nil); k > 0 {
			i += k - 1
			continue
		}
		v, err := c.next()
		if err != nil {
			return err
		}
		cv.null[i] = v < 0
		if entity {
			cv.dx[i] = -1
		}
		switch {
		case v < 0:
		case weight:
			w, ok := c.weight(v)
			cv.w[i], cv.wbad[i] = w, ""
			if !ok {
				cv.wbad[i] = c.show(v)
			}
		case c.hashed:
			d := &c.pd.dh[v]                        // not id1, which pass B writes
			cv.name[i] = c.pd.names[d.lo:d.hi:d.hi] // a dictionary's own memory: no copy needed
			cv.hash[i] = dictHashes{h: d.h, pre: d.pre}
		case rel != nil && c.idx != nil && len(c.bytes) > 0:
			if len(c.relData) == 0 || &c.relData[0] != &c.bytes[0] || len(c.relIDs) != c.nd {
				c.relData, c.relIDs = c.bytes, slices.Grow(c.relIDs[:0], c.nd)[:c.nd]
				for j := range c.relIDs {
					c.relIDs[j] = relUnknown
				}
			}
			nm := c.name(a, v)
			cv.name[i] = nm
			if c.relIDs[v] == relUnknown {
				c.relIDs[v] = rel(nm)
			}
			cv.rel[i] = c.relIDs[v]
		default:
			nm := c.name(a, v)
			cv.name[i] = nm
			if entity {
				cv.hash[i] = dictHashes{h: maphash.Bytes(*seed, nm), pre: prefix(nm)}
			}
			if rel != nil {
				cv.rel[i] = rel(nm)
			}
		}
	}
	return nil
}

// name returns value v as an entity or relation name: a string's bytes,
// or an integer in decimal appended to the arena.
func (c *cursor) name(a *arena, v int) []byte {
	switch c.col.kind {
	case kindBytes:
		lo, hi := c.offs[v], c.offs[v+1]
		if lo > hi {
			return nil // corrupt offsets: reported as an empty field
		}
		if c.idx != nil {
			// A dictionary's values are decoded into memory of their own,
			// which the library never reuses: no copy needed.
			return c.bytes[lo:hi:hi]
		}
		return a.add(c.bytes[lo:hi])
	}
	a.room(20)
	s := len(a.cur)
	a.cur = c.appendID(a.cur, v)
	return a.cur[s:len(a.cur):len(a.cur)]
}

// weight returns value v as a float32 weight, and whether it is finite.
func (c *cursor) weight(v int) (float32, bool) {
	var x float64
	switch c.col.kind {
	case kindFloat:
		x = float64(c.f32[v])
	case kindDouble:
		x = c.f64[v]
	case kindInt32:
		x = float64(c.i32[v])
		if c.col.unsigned {
			x = float64(uint32(c.i32[v]))
		}
	case kindInt64:
		x = float64(c.i64[v])
		if c.col.unsigned {
			x = float64(uint64(c.i64[v]))
		}
	}
	f := float32(x)
	return f, !math.IsInf(float64(f), 0) && !math.IsNaN(x)
}

// show formats value v for a message.
func (c *cursor) show(v int) string {
	switch c.col.kind {
	case kindFloat:
		return strconv.FormatFloat(float64(c.f32[v]), 'g', -1, 32)
	case kindDouble:
		return strconv.FormatFloat(c.f64[v], 'g', -1, 64)
	}
	var a arena
	return string(c.name(&a, v))
}

// arena holds the names of a batch of rows in blocks that are never
// reallocated, so the slices handed out stay valid until reset, which
// keeps the blocks for the next batch.
type arena struct {
	cur    []byte
	blocks [][]byte
	next   int // blocks[:next] are in use
}

const nameBlock = 64 << 10

func (a *arena) reset() { a.cur, a.next = nil, 0 }

func (a *arena) room(n int) {
	if cap(a.cur)-len(a.cur) >= n {
		return
	}
	for a.next < len(a.blocks) {
		b := a.blocks[a.next]
		a.next++
		if cap(b) >= n {
			a.cur = b[:0]
			return
		}
	}
	a.cur = make([]byte, 0, max(nameBlock, n))
	a.blocks = append(a.blocks, a.cur)
	a.next = len(a.blocks)
}

func (a *arena) add(b []byte) []byte {
	a.room(len(b))
	s := len(a.cur)
	a.cur = append(a.cur, b...)
	return a.cur[s:len(a.cur):len(a.cur)]
}
