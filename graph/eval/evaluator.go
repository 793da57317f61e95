package eval

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/graph/train/model"
)

// Store is what evaluation reads of an edge store: the dictionaries.
type Store interface {
	EntityCount(typ string, part int) (int, error)
	EntityNames(typ string, part int) ([]string, error)
	RelationNames() ([]string, error)
	NumRelations() int
	Fingerprint() string
}

// Evaluator holds a checkpoint's embeddings of every entity, all
// partitions concatenated per type, with the dictionaries.
type Evaluator struct {
	cfg     *config.Config
	m       *model.Model
	types   map[string]int
	all     []*model.Table // per type: every partition's rows, concatenated
	ids     []map[string]uint32
	names   [][]string
	rels    map[string]int
	relType [][2]int // per relation id: lhs and rhs type
}

// Open loads the checkpoint at the config's checkpoint_path, refusing one
// made with a different config.
func Open(cfg *config.Config, store Store) (*Evaluator, error) {
	// One commit's files, even while a run trains in the directory.
	man, m, parts, err := train.LoadCheckpoint(cfg, store.NumRelations(), store.Fingerprint(), cfg.CheckpointPath)
	if err != nil {
		return nil, err
	}
	if man == nil {
		return nil, fmt.Errorf("eval: %s holds no checkpoint: no %s (run batchprep train first)", cfg.CheckpointPath, train.ManifestName)
	}
	e := &Evaluator{cfg: cfg, m: m, types: map[string]int{}, rels: map[string]int{}}
	for i, typ := range cfg.EntityTypes() {
		e.types[typ] = i
		all := &model.Table{Dim: cfg.Dimension}
		ids := map[string]uint32{}
		var names []string
		for p := 0; p < cfg.Entities[typ].NumPartitions; p++ {
			n, err := store.EntityCount(typ, p)
			if err != nil {
				return nil, err
			}
			nm, err := store.EntityNames(typ, p)
			if err != nil {
				return nil, err
			}
			var tab *model.Table
			if p < len(parts[typ]) {
				tab = parts[typ][p]
			}
			switch {
			case tab == nil && n > 0:
				return nil, fmt.Errorf("eval: checkpoint has no embeddings for %s partition %d (was it trained?)", typ, p)
			case tab != nil && tab.Rows != n:
				return nil, fmt.Errorf("eval: checkpoint has %d rows for %s partition %d, the store %d", tab.Rows, typ, p, n)
			}
			for _, s := range nm {
				ids[s] = uint32(len(names))
				names = append(names, s)
			}
			if tab != nil {
				all.Emb = append(all.Emb, tab.Emb...)
			}
			all.Rows += n
		}
		e.all, e.ids, e.names = append(e.all, all), append(e.ids, ids), append(e.names, names)
	}
	relNames, err := store.RelationNames()
	if err != nil {
		return nil, err
	}
	for id, name := range relNames {
		e.rels[name] = id
		rc := cfg.Relations[0]
		if !cfg.DynamicRelations {
			rc = cfg.Relations[id]
		}
		e.relType = append(e.relType, [2]int{e.types[rc.Lhs], e.types[rc.Rhs]})
	}
	return e, nil
}

// Report is the outcome of an evaluation.
type Report struct {
	train.Metrics
	Unknown         int64    `json:"unknown"`          // test edges not ranked: unknown entity or relation
	UnknownExamples []string `json:"unknown_examples"` // the first few, as "file:line"-free triples
	FilterUnknown   int64    `json:"filter_unknown"`   // filter edges skipped for the same reason
}

// edge is a triple by ids: global entity indexes within the types.
type edge struct{ u, r, v uint32 }

func (e *Evaluator) resolve(t Triple) (edge, bool) {
	r, ok := 0, true
	if t.Rel != "" || !e.cfg.DynamicRelations && len(e.cfg.Relations) > 1 {
		r, ok = e.rels[t.Rel]
	}
	if !ok {
		return edge{}, false
	}
	ty := e.relType[r]
	u, ok1 := e.ids[ty[0]][t.Lhs]
	v, ok2 := e.ids[ty[1]][t.Rhs]
	return edge{u, uint32(r), v}, ok1 && ok2
}

// Rank ranks every edge of test on both sides, filtered against the
// filter edges and the test edges (invariants 1-4).
func (e *Evaluator) Rank(test []Triple, filters ...[]Triple) Report {
	var rep Report
	var edges []edge
	for _, t := range test {
		x, ok := e.resolve(t)
		if !ok {
			rep.Unknown++
			if len(rep.UnknownExamples) < 5 {
				rep.UnknownExamples = append(rep.UnknownExamples, t.Lhs+"\t"+t.Rel+"\t"+t.Rhs)
			}
			continue
		}
		edges = append(edges, x)
	}
	// known[side][(r, fixed)] lists the true candidates.
	known := [2]map[[2]uint32][]uint32{{}, {}}
	addKnown := func(x edge) {
		known[0][[2]uint32{x.r, x.u}] = append(known[0][[2]uint32{x.r, x.u}], x.v)
		known[1][[2]uint32{x.r, x.v}] = append(known[1][[2]uint32{x.r, x.v}], x.u)
	}
	for _, f := range filters {
		for _, t := range f {
			if x, ok := e.resolve(t); ok {
				addKnown(x)
			} else {
				rep.FilterUnknown++
			}
		}
	}
	for _, x := range edges {
		addKnown(x)
	}
	var ranks []float64
	if !e.m.S.DisableRhsNegs {
		ranks = append(ranks, e.side(edges, true, known[0])...)
	}
	if !e.m.S.DisableLhsNegs {
		ranks = append(ranks, e.side(edges, false, known[1])...)
	}
	rep.Metrics = train.MetricsOf(ranks)
	return rep
}

// side ranks the rhs (corruptRhs) or the lhs of every edge, grouped by
// relation, in blocks spread over the CPUs.
func (e *Evaluator) side(edges []edge, corruptRhs bool, known map[[2]uint32][]uint32) []float64 {
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
	ranks := make([]float64, len(edges))
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
					ts := row[truth]
					rank := 1
					for c, s := range row {
						if s >= ts && uint32(c) != truth && !marks[c] {
							rank++
						}
					}
					for _, c := range others {
						marks[c] = false
					}
					ranks[i] = float64(rank)
				}
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return ranks
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// Entities returns every entity of type typ in dictionary order (partition,
// then offset) with its embedding as the model uses it (the type's global
// embedding added).
func (e *Evaluator) Entities(typ string) (names []string, emb []float32, err error) {
	ti, ok := e.types[typ]
	if !ok {
		return nil, nil, fmt.Errorf("eval: no entity type %q", typ)
	}
	tab := e.all[ti]
	emb = make([]float32, tab.Rows*tab.Dim)
	ids := make([]uint32, tab.Rows)
	for i := range ids {
		ids[i] = uint32(i)
	}
	model.NewWorker(e.m).Gather(tab, ti, ids, emb)
	return e.names[ti], emb, nil
}
