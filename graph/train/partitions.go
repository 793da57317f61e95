package train

import (
	"fmt"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/train/model"
	"github.com/batchprep/batchprep/internal/mix"
)

// tableKey names one (entity type, partition).
type tableKey struct{ typ, part int }

// tagInit is the mix purpose tag of the initial embeddings of a partition.
const tagInit uint64 = 0x696e6974 // "init"

// needed lists the partitions bucket b trains: each relation's lhs type at
// the bucket's lhs coordinate and its rhs type at the rhs coordinate
// (partition 0 for unpartitioned types), in a fixed order.
func (t *Trainer) needed(b graph.Bucket) []tableKey {
	seen := map[tableKey]bool{}
	var out []tableKey
	for _, r := range t.cfg.Relations {
		for _, k := range []tableKey{
			{t.typeIdx[r.Lhs], partOf(t.cfg, r.Lhs, b.Lhs)},
			{t.typeIdx[r.Rhs], partOf(t.cfg, r.Rhs, b.Rhs)},
		} {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// swapIn makes the in-memory tables exactly the partitions bucket b needs
// (invariant 3): the others are dropped (the last checkpoint holds them),
// the missing ones loaded from the checkpoint, or initialized when the run
// has never trained them.
func (t *Trainer) swapIn(b graph.Bucket) error {
	need := t.needed(b)
	keep, dropped := map[tableKey]bool{}, false
	for _, k := range need {
		keep[k] = true
	}
	for k := range t.tables {
		if !keep[k] {
			if t.dirty[k] {
				return fmt.Errorf("train: partition %s/%d dropped before it was saved", t.types[k.typ], k.part)
			}
			delete(t.tables, k)
			dropped = true
		}
	}
	t.releaseTables(dropped)
	for _, k := range need {
		if t.tables[k] != nil {
			continue
		}
		tab, err := t.loadTable(k)
		if err != nil {
			return err
		}
		t.tables[k] = tab
	}
	return nil
}

// loadTable reads partition k from the checkpoint, or initializes it.
func (t *Trainer) loadTable(k tableKey) (*model.Table, error) {
	typ := t.types[k.typ]
	rows, err := t.store.EntityCount(typ, k.part)
	if err != nil {
		return nil, err
	}
	for _, ref := range t.man.Tables {
		if ref.Type != typ || ref.Partition != k.part {
			continue
		}
		tab, err := readTableRef(t.dir, ref.FileRef)
		if err != nil {
			return nil, err
		}
		if tab.Rows != rows || tab.Dim != t.cfg.Dimension {
			return nil, fmt.Errorf("%w: %s: %d rows of dimension %d, want %d of %d", ErrCheckpoint, ref.File, tab.Rows, tab.Dim, rows, t.cfg.Dimension)
		}
		t.man.IO.Loads++
		t.man.IO.LoadBytes += ref.Bytes
		return tab, nil
	}
	rng := mix.Rand(t.cfg.Seed, tagInit, uint64(k.typ), uint64(k.part))
	tab := model.NewTable(rows, t.cfg.Dimension, t.cfg.InitScale, rng)
	if t.opts.Init != nil {
		emb, err := t.opts.Init.Table(typ, k.part, rows, t.cfg.Dimension)
		if err != nil {
			return nil, err
		}
		if emb != nil && len(emb) != len(tab.Emb) {
			return nil, fmt.Errorf("train: init_path gave %d values for %s partition %d, want %d×%d", len(emb), typ, k.part, rows, t.cfg.Dimension)
		}
		copy(tab.Emb, emb)
	}
	return tab, nil
}

// LoadTables reads every partition of every entity type from the
// checkpoint in dir (for evaluation and export), keyed by type name then
// partition.
func LoadTables(dir string, man *Manifest) (map[string][]*model.Table, error) {
	out := map[string][]*model.Table{}
	for _, ref := range man.Tables {
		tab, err := readTableRef(dir, ref.FileRef)
		if err != nil {
			return nil, err
		}
		parts := out[ref.Type]
		for len(parts) <= ref.Partition {
			parts = append(parts, nil)
		}
		parts[ref.Partition] = tab
		out[ref.Type] = parts
	}
	return out, nil
}
