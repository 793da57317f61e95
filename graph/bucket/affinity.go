package bucket

import (
	"math/rand/v2"

	"github.com/batchprep/batchprep/graph"
)

// idset is a set of bucket ids with O(1) removal and uniform choice: the
// members live in buf[off:off+n] and pos[id] is each member's index in buf.
// Several idsets share one buf and pos (the rows, or the columns, of the
// grid), each owning its own segment.
type idset struct{ off, n int }

// affinityState holds the unvisited buckets three ways: all of them, by lhs
// row and by rhs column. Bucket (i, j) has id i*r + j.
type affinityState struct {
	l, r             int
	all              []int32 // unvisited ids; allPos[id] is its index
	allPos           []int32
	rowBuf, colBuf   []int32
	rowPos, colPos   []int32
	rows, cols       []idset
	done             []bool
	cand             [4]candList
	ncand, candTotal int
}

// candList is one of the (up to four) row or column sets a choice draws
// from: which says whether it is a row (lhs == p) or a column (rhs == p).
type candList struct {
	set   *idset
	buf   []int32
	isRow bool
	p     int
}

func newAffinityState(l, r int) *affinityState {
	n := l * r
	s := &affinityState{l: l, r: r,
		all: make([]int32, n), allPos: make([]int32, n),
		rowBuf: make([]int32, n), colBuf: make([]int32, n),
		rowPos: make([]int32, n), colPos: make([]int32, n),
		rows: make([]idset, l), cols: make([]idset, r), done: make([]bool, n)}
	for i := range s.rows {
		s.rows[i] = idset{off: i * r, n: r}
	}
	for j := range s.cols {
		s.cols[j] = idset{off: j * l, n: l}
	}
	for i := 0; i < l; i++ {
		for j := 0; j < r; j++ {
			id := int32(i*r + j)
			s.all[id], s.allPos[id] = id, id
			s.rowBuf[i*r+j], s.rowPos[id] = id, int32(i*r+j)
			s.colBuf[j*l+i], s.colPos[id] = id, int32(j*l+i)
		}
	}
	return s
}

func (s *affinityState) bucket(id int32) graph.Bucket {
	return graph.Bucket{Lhs: int(id) / s.r, Rhs: int(id) % s.r}
}

// removeFrom deletes id from the set whose members are buf[set.off:...],
// swapping the last member into its place.
func removeFrom(set *idset, buf, pos []int32, id int32) {
	i := pos[id]
	last := int32(set.off + set.n - 1)
	moved := buf[last]
	buf[i], pos[moved] = moved, i
	buf[last], pos[id] = id, last
	set.n--
}

func (s *affinityState) remove(id int32) {
	s.done[id] = true
	b := s.bucket(id)
	i := s.allPos[id]
	last := int32(len(s.all) - 1)
	moved := s.all[last]
	s.all[i], s.allPos[moved] = moved, i
	s.all = s.all[:last]
	removeFrom(&s.rows[b.Lhs], s.rowBuf, s.rowPos, id)
	removeFrom(&s.cols[b.Rhs], s.colBuf, s.colPos, id)
}

// addCand registers a row or column set as a source of candidates, once.
func (s *affinityState) addCand(isRow bool, p int) {
	if isRow && p >= s.l || !isRow && p >= s.r {
		return
	}
	for _, c := range s.cand[:s.ncand] {
		if c.isRow == isRow && c.p == p {
			return
		}
	}
	c := candList{isRow: isRow, p: p}
	if isRow {
		c.set, c.buf = &s.rows[p], s.rowBuf
	} else {
		c.set, c.buf = &s.cols[p], s.colBuf
	}
	s.cand[s.ncand] = c
	s.ncand++
	s.candTotal += c.set.n
}

func (c candList) has(b graph.Bucket) bool {
	if c.isRow {
		return b.Lhs == c.p
	}
	return b.Rhs == c.p
}

// pickSharing returns a uniformly random unvisited bucket sharing a
// partition with cur, or -1 when there is none. The candidates are the union
// of rows cur.Lhs, cur.Rhs and columns cur.Lhs, cur.Rhs; a bucket listed in
// several of them is accepted only when drawn from the first list holding it,
// so every candidate has the same chance per draw.
func (s *affinityState) pickSharing(cur graph.Bucket, rng *rand.Rand) int32 {
	s.ncand, s.candTotal = 0, 0
	s.addCand(true, cur.Lhs)
	s.addCand(true, cur.Rhs)
	s.addCand(false, cur.Lhs)
	s.addCand(false, cur.Rhs)
	if s.candTotal == 0 {
		return -1
	}
	for {
		k := rng.IntN(s.candTotal)
		li := 0
		for k >= s.cand[li].set.n {
			k -= s.cand[li].set.n
			li++
		}
		c := s.cand[li]
		id := c.buf[c.set.off+k]
		b := s.bucket(id)
		first := true
		for _, e := range s.cand[:li] {
			if e.has(b) {
				first = false
				break
			}
		}
		if first {
			return id
		}
	}
}

// AffinityOrder starts at a uniformly random bucket. After each current
// bucket it emits the bucket's transpose if that is unvisited (the current
// bucket stays the same, as the transpose needs the same partitions), then a
// uniformly random unvisited bucket sharing a partition with the current one,
// which becomes current; when no unvisited bucket shares one, a uniformly
// random unvisited bucket. Time and memory are O(l*r).
func AffinityOrder(l, r int, rng *rand.Rand) []graph.Bucket {
	s := newAffinityState(l, r)
	out := make([]graph.Bucket, 0, l*r)
	id := s.all[rng.IntN(len(s.all))]
	for {
		s.remove(id)
		cur := s.bucket(id)
		out = append(out, cur)
		if t := cur.Transpose(); t != cur && t.Lhs < l && t.Rhs < r {
			if tid := int32(t.Lhs*r + t.Rhs); !s.done[tid] {
				s.remove(tid)
				out = append(out, t)
			}
		}
		if len(s.all) == 0 {
			return out
		}
		if id = s.pickSharing(cur, rng); id < 0 {
			id = s.all[rng.IntN(len(s.all))]
		}
	}
}
