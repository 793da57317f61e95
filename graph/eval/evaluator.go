package eval

import (
	"fmt"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/graph/train/model"
)

// Store is what evaluation reads of an edge store: the dictionaries, and
// the stored edge sets (graph.Reader) for ranking one of them.
type Store interface {
	graph.Reader
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
	relName []string
	relType [][2]int   // per relation id: lhs and rhs type
	base    [][]uint32 // per type: the global index of each partition's first entity
	man     *train.Manifest
	store   Store
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
	e, err := newEvaluator(cfg, m, parts, store)
	if err != nil {
		return nil, err
	}
	e.man = man
	return e, nil
}

// newEvaluator assembles an evaluator from a model and its tables (per
// type, per partition), with the store's dictionaries.
func newEvaluator(cfg *config.Config, m *model.Model, parts map[string][]*model.Table, store Store) (*Evaluator, error) {
	e := &Evaluator{cfg: cfg, m: m, types: map[string]int{}, rels: map[string]int{}, store: store}
	for i, typ := range cfg.EntityTypes() {
		e.types[typ] = i
		all := &model.Table{Dim: cfg.Dimension}
		ids := map[string]uint32{}
		var names []string
		var base []uint32
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
			base = append(base, uint32(len(names)))
			for _, s := range nm {
				ids[s] = uint32(len(names))
				names = append(names, s)
			}
			if tab != nil {
				all.Emb = append(all.Emb, tab.Emb...)
			}
			all.Rows += n
		}
		e.all, e.ids, e.names, e.base = append(e.all, all), append(e.ids, ids), append(e.names, names), append(e.base, base)
	}
	relNames, err := store.RelationNames()
	if err != nil {
		return nil, err
	}
	e.relName = relNames
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
