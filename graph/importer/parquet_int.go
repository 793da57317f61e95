package importer

import (
	"fmt"
	"slices"
	"strconv"
)

// intKeyed tells whether the column's values are integer ids that the
// dictionaries' integer index takes (dict_int.go): INT32, and INT64 but
// for unsigned INT64, whose values past 2^63-1 have no int64 key.
func (c *cursor) intKeyed() bool {
	return c.col.kind == kindInt32 || c.col.kind == kindInt64 && !c.col.unsigned
}

// intAt returns integer value v of the page (or its dictionary).
func (c *cursor) intAt(v int) int64 {
	switch {
	case c.col.kind == kindInt64:
		return c.i64[v]
	case c.col.unsigned:
		return int64(uint32(c.i32[v]))
	}
	return int64(c.i32[v])
}

// fillInts is fill for an integer column of entity ids or typed relation
// ids: no decimal names, the values go to cv.ints, hashed with iseed for
// the integer index (entities) or mapped to relation ids once per
// distinct value (relations). Plain and dictionary-encoded pages alike
// are read a run of present values at a time.
func (c *cursor) fillInts(cv *colVals, m int, entity bool, iseed uint64, rel func([]byte) int32) error {
	cv.null = slices.Grow(cv.null[:0], m)[:m]
	cv.ints = slices.Grow(cv.ints[:0], m)[:m]
	if entity {
		cv.hash = slices.Grow(cv.hash[:0], m)[:m]
	} else {
		cv.rel = slices.Grow(cv.rel[:0], m)[:m]
	}
	for i := 0; i < m; {
		if c.left == 0 {
			if err := c.advance(); err != nil {
				return err
			}
		}
		k := min(c.left, m-i)
		if c.defs != nil {
			if c.defs[c.di] < c.col.maxDef { // a null
				cv.null[i] = true
				c.di++
				c.left--
				i++
				continue
			}
			n := 1
			for n < k && c.defs[c.di+n] >= c.col.maxDef {
				n++
			}
			k = n
		}
		for j := range k {
			v := c.vi + j
			if c.idx != nil {
				v = int(c.idx[v])
				if v < 0 || v >= c.nd {
					return fmt.Errorf("column %q: dictionary index %d of %d values: %w", c.col.name, v, c.nd, errCorrupt)
				}
			}
			x := c.intAt(v)
			cv.null[i+j] = false
			cv.ints[i+j] = x
			if entity {
				cv.hash[i+j].h = intHash(iseed, x)
			} else {
				cv.rel[i+j] = c.relOfInt(x, rel)
			}
		}
		c.vi += k
		c.left -= k
		if c.defs != nil {
			c.di += k
		}
		i += k
	}
	return nil
}

// relSmall is the integer relation values relOfInt keeps in an array
// (relation columns usually hold small numbers: 0, 1, 2, ...).
const relSmall = 256

// relOfInt returns the config's id of the relation named by x's decimal
// digits (-1: none), looked up once per distinct value of the column.
func (c *cursor) relOfInt(x int64, rel func([]byte) int32) int32 {
	if uint64(x) < relSmall {
		if c.relSmall == nil {
			c.relSmall = make([]int32, relSmall)
			for i := range c.relSmall {
				c.relSmall[i] = relUnknown
			}
		}
		if id := c.relSmall[x]; id != relUnknown {
			return id
		}
	} else if id, ok := c.relInts[x]; ok {
		return id
	}
	var buf [20]byte
	id := rel(strconv.AppendInt(buf[:0], x, 10))
	if uint64(x) < relSmall {
		c.relSmall[x] = id
		return id
	}
	if c.relInts == nil {
		c.relInts = map[int64]int32{}
	}
	c.relInts[x] = id
	return id
}
