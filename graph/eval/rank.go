package eval

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/graph/train/model"
)

// Report is the outcome of an evaluation.
type Report struct {
	train.Metrics
	// Sides is what was ranked for each edge: "both", "rhs" or "lhs"
	// (a side whose negatives are disabled is not ranked).
	Sides           string   `json:"sides"`
	Edges           int64    `json:"edges"`            // test edges read
	Unknown         int64    `json:"unknown"`          // test edges not ranked: unknown entity or relation
	UnknownExamples []string `json:"unknown_examples"` // the first few, as triples
	UnknownNames    []string `json:"unknown_names"`    // the first few names no imported file holds
	FilterUnknown   int64    `json:"filter_unknown"`   // filter edges skipped for the same reason
	// NonFinite counts ranked sides whose true entity scored NaN or
	// infinite; they got the worst rank (invariant 6).
	NonFinite         int64    `json:"non_finite"`
	NonFiniteExamples []string `json:"non_finite_examples,omitempty"`
	// WithinPartition, when a ranked side's entity type has more than one
	// partition, is the same ranking with the candidates restricted to the
	// true entity's partition (the entities a partitioned run trained it
	// against): set apart from the metrics above, it shows how much of a
	// partitioned model's rank comes from entities of other partitions.
	// Sides whose type has one partition count as they do above.
	WithinPartition *train.Metrics `json:"within_partition,omitempty"`
	// Filtered is false for a ranking among all entities with no
	// candidate removed (RankEdgesUnfiltered, invariant 8).
	Filtered bool `json:"filtered"`
}

// edge is a triple by ids: global entity indexes within the types.
type edge struct{ u, r, v uint32 }

// Edges are edges resolved to the evaluator's entity and relation ids,
// with the count of those that could not be.
type Edges struct {
	e               []edge
	Unknown         int64
	UnknownExamples []string
	UnknownNames    []string
}

// Len is the number of resolved edges.
func (x *Edges) Len() int { return len(x.e) }

const maxExamples = 5

func (x *Edges) unknown(t Triple, names ...string) {
	x.Unknown++
	if len(x.UnknownExamples) < maxExamples {
		x.UnknownExamples = append(x.UnknownExamples, t.Lhs+"\t"+t.Rel+"\t"+t.Rhs)
	}
	for _, n := range names {
		if len(x.UnknownNames) >= 20 {
			break
		}
		seen := false
		for _, m := range x.UnknownNames {
			seen = seen || m == n
		}
		if !seen {
			x.UnknownNames = append(x.UnknownNames, n)
		}
	}
}

// Resolve looks the triples' names up in the dictionaries; triples naming
// an entity or relation no imported file holds are counted as unknown.
func (e *Evaluator) Resolve(ts []Triple) Edges {
	var out Edges
	for _, t := range ts {
		r, ok := 0, true
		if t.Rel != "" || !e.cfg.DynamicRelations && len(e.cfg.Relations) > 1 {
			r, ok = e.rels[t.Rel]
		}
		if !ok {
			out.unknown(t, "relation "+t.Rel)
			continue
		}
		ty := e.relType[r]
		u, ok1 := e.ids[ty[0]][t.Lhs]
		v, ok2 := e.ids[ty[1]][t.Rhs]
		if !ok1 || !ok2 {
			var names []string
			if !ok1 {
				names = append(names, t.Lhs)
			}
			if !ok2 {
				names = append(names, t.Rhs)
			}
			out.unknown(t, names...)
			continue
		}
		out.e = append(out.e, edge{u, uint32(r), v})
	}
	return out
}

// StoredEdges reads edge set set of the store (every bucket) as ranked
// edges: all of its entities are in the dictionary, trained or not.
func (e *Evaluator) StoredEdges(set int) (Edges, error) {
	var out Edges
	if set < 0 || set >= e.store.NumEdgeSets() {
		return out, fmt.Errorf("eval: the store has no edge set %d", set)
	}
	L, R := e.store.Partitions()
	var buf graph.Edges
	for i := range L {
		for j := range R {
			b := graph.Bucket{Lhs: i, Rhs: j}
			n, err := e.store.NumEdges(set, b)
			if err != nil {
				return out, err
			}
			buf.Reset()
			if err := e.store.ReadEdges(set, b, 0, n, &buf); err != nil {
				return out, err
			}
			for k := range buf.Len() {
				r := buf.Rel[k]
				if int(r) >= len(e.relType) {
					return out, fmt.Errorf("eval: edge set %d bucket (%d,%d): relation id %d, the store has %d", set, i, j, r, len(e.relType))
				}
				ty := e.relType[r]
				u := e.base[ty[0]][e.part(ty[0], i)] + buf.Lhs[k]
				v := e.base[ty[1]][e.part(ty[1], j)] + buf.Rhs[k]
				out.e = append(out.e, edge{u, r, v})
			}
		}
	}
	return out, nil
}

// part is the partition of an entity of type ty in a bucket side's
// partition p: p, or 0 for an unpartitioned type.
func (e *Evaluator) part(ty, p int) int {
	if len(e.base[ty]) == 1 {
		return 0
	}
	return p
}

// Rank ranks every edge of test on both sides, filtered against the
// filter edges and the test edges (invariants 1-4).
func (e *Evaluator) Rank(test []Triple, filters ...[]Triple) Report {
	var fs []Edges
	for _, f := range filters {
		fs = append(fs, e.Resolve(f))
	}
	return e.RankEdges(e.Resolve(test), fs...)
}

// RankEdges ranks the resolved test edges, filtered against the filter
// edges and the test edges themselves (invariants 1-4, 6).
func (e *Evaluator) RankEdges(test Edges, filters ...Edges) Report {
	rep := e.newReport(test)
	rep.Filtered = true
	all, part := e.ranks(test, filters, &rep)
	e.summarize(&rep, all, part)
	return rep
}

// newReport starts the report of ranking test: its counts and sides.
func (e *Evaluator) newReport(test Edges) Report {
	rep := Report{Edges: int64(len(test.e)) + test.Unknown, Unknown: test.Unknown,
		UnknownExamples: test.UnknownExamples, UnknownNames: test.UnknownNames}
	sides := e.sides()
	switch {
	case len(sides) == 2:
		rep.Sides = "both"
	case sides[0]:
		rep.Sides = "rhs"
	default:
		rep.Sides = "lhs"
	}
	return rep
}

// summarize fills the metrics of rep from the ranks of every side.
func (e *Evaluator) summarize(rep *Report, all, part [][]float64) {
	var ranks, within []float64
	for i, rs := range all {
		ranks = append(ranks, rs...)
		within = append(within, part[i]...)
	}
	rep.Metrics = train.MetricsOf(ranks)
	if e.partitioned() {
		m := train.MetricsOf(within)
		rep.WithinPartition = &m
	}
}

// sides lists the ranked sides: true for the rhs (corrupted rhs), false
// for the lhs.
func (e *Evaluator) sides() []bool {
	var out []bool
	if !e.m.S.DisableRhsNegs {
		out = append(out, true)
	}
	if !e.m.S.DisableLhsNegs {
		out = append(out, false)
	}
	return out
}

// partitioned reports whether the candidates of a ranked side have more
// than one partition.
func (e *Evaluator) partitioned() bool {
	for _, ty := range e.relType {
		for _, rhs := range e.sides() {
			cand := ty[0]
			if rhs {
				cand = ty[1]
			}
			if len(e.base[cand]) > 1 {
				return true
			}
		}
	}
	return false
}

// ranks returns the rank of every test edge on each ranked side (in the
// order of sides), and its rank within the true entity's partition,
// counting filter edges and non-finite scores in rep.
func (e *Evaluator) ranks(test Edges, filters []Edges, rep *Report) (all, within [][]float64) {
	// known[side][(r, fixed)] lists the true candidates.
	known := [2]map[[2]uint32][]uint32{{}, {}}
	addKnown := func(x edge) {
		known[0][[2]uint32{x.r, x.u}] = append(known[0][[2]uint32{x.r, x.u}], x.v)
		known[1][[2]uint32{x.r, x.v}] = append(known[1][[2]uint32{x.r, x.v}], x.u)
	}
	for _, f := range filters {
		rep.FilterUnknown += f.Unknown
		for _, x := range f.e {
			addKnown(x)
		}
	}
	for _, x := range test.e {
		addKnown(x)
	}
	return e.ranksKnown(test, known, rep)
}

// ranksKnown is ranks with the true candidates given: known[0] maps
// (relation, lhs) to the rhs entities to leave out, known[1] (relation,
// rhs) to the lhs ones; empty maps rank without filtering.
func (e *Evaluator) ranksKnown(test Edges, known [2]map[[2]uint32][]uint32, rep *Report) (all, within [][]float64) {
	for _, rhs := range e.sides() {
		k := known[0]
		if !rhs {
			k = known[1]
		}
		ranks, part, bad := e.side(test.e, rhs, k)
		for _, i := range bad {
			rep.NonFinite++
			if len(rep.NonFiniteExamples) < maxExamples {
				rep.NonFiniteExamples = append(rep.NonFiniteExamples, e.describe(test.e[i]))
			}
		}
		all, within = append(all, ranks), append(within, part)
	}
	return all, within
}

// describe names an edge's entities and relation.
func (e *Evaluator) describe(x edge) string {
	ty := e.relType[x.r]
	rel := ""
	if int(x.r) < len(e.relName) {
		rel = e.relName[x.r]
	}
	return e.names[ty[0]][x.u] + "\t" + rel + "\t" + e.names[ty[1]][x.v]
}

// side ranks the rhs (corruptRhs) or the lhs of every edge, grouped by
// relation, in blocks spread over the CPUs. It returns the ranks, the
// ranks among the true entity's partition only, and the edges whose true
// entity's score is not finite (ranked last).
func (e *Evaluator) side(edges []edge, corruptRhs bool, known map[[2]uint32][]uint32) (ranks, within []float64, nonFinite []int) {
	order := make([]int, len(edges))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return edges[order[a]].r < edges[order[b]].r })
	const block = 64
	type job struct{ start, end int }
	var jobs []job
	for s := 0; s < len(order); {
		end := s + 1
		for end < len(order) && end-s < block && edges[order[end]].r == edges[order[s]].r {
			end++
		}
		jobs = append(jobs, job{s, end})
		s = end
	}
	ranks, within = make([]float64, len(edges)), make([]float64, len(edges))
	bad := make([]bool, len(edges))
	next := make(chan job)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			w := model.NewWorker(e.m)
			var fixed, cand, out []float32
			var ids, rels, allIDs []uint32
			var marks []bool
			candFor := -1
			for j := range next {
				k := j.end - j.start
				r := edges[order[j.start]].r
				fixedType, candType := e.relType[r][0], e.relType[r][1]
				if !corruptRhs {
					fixedType, candType = candType, fixedType
				}
				ct := e.all[candType]
				n, d := ct.Rows, e.cfg.Dimension
				ids, rels = ids[:0], rels[:0]
				for _, i := range order[j.start:j.end] {
					x := edges[i]
					if corruptRhs {
						ids = append(ids, x.u)
					} else {
						ids = append(ids, x.v)
					}
					rels = append(rels, x.r)
				}
				fixed = grow(fixed, k*d)
				w.Gather(e.all[fixedType], fixedType, ids, fixed)
				if candFor != candType {
					// Every entity of the type, gathered once per worker.
					allIDs = allIDs[:0]
					for c := range n {
						allIDs = append(allIDs, uint32(c))
					}
					cand = grow(cand, n*d)
					w.Gather(ct, candType, allIDs, cand)
					candFor = candType
				}
				out = grow(out, k*n)
				w.Scores(corruptRhs, rels, fixed, cand, k, n, out)
				if cap(marks) < n {
					marks = make([]bool, n)
				}
				marks = marks[:n]
				for a, i := range order[j.start:j.end] {
					x := edges[i]
					truth, fx := x.v, x.u
					if !corruptRhs {
						truth, fx = x.u, x.v
					}
					others := known[[2]uint32{x.r, fx}]
					for _, c := range others {
						marks[c] = true
					}
					row := out[a*n : (a+1)*n]
					ranks[i], bad[i] = rankOf(row, truth, marks)
					within[i] = ranks[i]
					if len(e.base[candType]) > 1 { // else the partition is the whole row
						lo, hi := e.partitionOf(candType, truth, n)
						within[i], _ = rankOf(row[lo:hi], truth-lo, marks[lo:hi])
					}
					for _, c := range others {
						marks[c] = false
					}
				}
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for i, b := range bad {
		if b {
			nonFinite = append(nonFinite, i)
		}
	}
	return ranks, within, nonFinite
}

// partitionOf is the range of global indexes [lo, hi) of the partition of
// type ty that holds entity c (n entities in all).
func (e *Evaluator) partitionOf(ty int, c uint32, n int) (lo, hi uint32) {
	base := e.base[ty]
	p := sort.Search(len(base), func(i int) bool { return base[i] > c }) - 1
	lo, hi = base[p], uint32(n)
	if p+1 < len(base) {
		hi = base[p+1]
	}
	return lo, hi
}

// rankOf is the rank of candidate truth in row: 1 + the candidates, other
// than truth and the marked (filtered) ones, scoring at least as high
// (ties count against, invariant 3) or scoring NaN. A true score that is
// NaN or infinite ranks below every counted candidate (invariant 6): it
// cannot be compared, and a model that produces it has not learned the
// edge.
func rankOf(row []float32, truth uint32, marks []bool) (rank float64, nonFinite bool) {
	ts := row[truth]
	nonFinite = math.IsNaN(float64(ts)) || math.IsInf(float64(ts), 0)
	n := 1
	for c, s := range row {
		if uint32(c) == truth || marks[c] {
			continue
		}
		if nonFinite || s >= ts || s != s {
			n++
		}
	}
	return float64(n), nonFinite
}
