package train

import (
	"fmt"
	"time"

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

// swapIn makes the in-memory tables exactly the partition buffer's
// content, admitted for bucket b (invariant 3, buffer.go): the partitions
// that left it are dropped (the last checkpoint, or the one being written
// behind, holds them), the missing ones, b's first, taken from the
// partition loaded ahead, else loaded from the checkpoint, or initialized
// when the run has never trained them. The time spent loading, or waiting
// for the load ahead, is added to the bucket's load wait.
func (t *Trainer) swapIn(b graph.Bucket) error {
	need := append(t.needed(b), t.res.keys()...)
	dropped := false
	for k := range t.tables {
		if !t.res.has(k) {
			if t.dirty[k] {
				return fmt.Errorf("train: partition %s/%d dropped before it was saved", t.types[k.typ], k.part)
			}
			t.tables[k].Release()
			delete(t.tables, k)
			dropped = true
		}
	}
	t.releaseTables(dropped)
	start := time.Now()
	defer func() { t.io.addLoad(time.Since(start)) }()
	for _, k := range need {
		if t.tables[k] != nil {
			continue
		}
		var got loaded
		if a := t.ahead; a != nil && a.key == k {
			t.ahead = nil
			<-a.done
			got = a.loaded
		} else {
			got = t.loadTable(k, t.man)
		}
		if got.err != nil {
			return got.err
		}
		if got.bytes > 0 {
			t.man.IO.Loads++
			t.man.IO.LoadBytes += got.bytes
		}
		t.tables[k] = got.tab
	}
	t.dropAhead()
	return nil
}

// loaded is the outcome of loading one partition: the table, the bytes of
// its file (0 when it was initialized), or the error.
type loaded struct {
	tab   *model.Table
	bytes int64
	err   error
}

// loadTable reads partition k from the checkpoint man names, or
// initializes it when man names none.
func (t *Trainer) loadTable(k tableKey, man *Manifest) loaded {
	typ := t.types[k.typ]
	rows, err := t.store.EntityCount(typ, k.part)
	if err != nil {
		return loaded{err: err}
	}
	ref, ok := tableRef(man, typ, k.part)
	return t.readOrInit(k, rows, ref, ok)
}

// readOrInit reads partition k (rows entity rows) from ref when ok, else
// initializes it (from opts.Init when it gives rows). It touches no Trainer
// state but the read-only config, options and directory, so that the load
// ahead can run it.
func (t *Trainer) readOrInit(k tableKey, rows int, ref TableRef, ok bool) loaded {
	if ok {
		return readCheckedTable(t.dir, ref, rows, t.cfg.Dimension)
	}
	rng := mix.Rand(t.cfg.Seed, tagInit, uint64(k.typ), uint64(k.part))
	tab := model.NewMappedTable(rows, t.cfg.Dimension, t.cfg.InitScale, rng)
	if t.opts.Init != nil {
		if err := t.opts.Init.Fill(t.types[k.typ], k.part, tab.Emb, t.cfg.Dimension); err != nil {
			tab.Release()
			return loaded{err: err}
		}
	}
	return loaded{tab: tab}
}

// tableRef finds the file man names for (typ, part).
func tableRef(man *Manifest, typ string, part int) (TableRef, bool) {
	for _, ref := range man.Tables {
		if ref.Type == typ && ref.Partition == part {
			return ref, true
		}
	}
	return TableRef{}, false
}

// readCheckedTable streams and checks (digest, rows, dimension) one table
// file into a mapped table (model.MapTable).
func readCheckedTable(dir string, ref TableRef, rows, dim int) loaded {
	tab, err := readTableRefTo(dir, ref.FileRef, model.MapTable)
	if err != nil {
		return loaded{err: err}
	}
	if tab.Rows != rows || tab.Dim != dim {
		defer tab.Release()
		return loaded{err: fmt.Errorf("%w: %s: %d rows of dimension %d, want %d of %d", ErrCheckpoint, ref.File, tab.Rows, tab.Dim, rows, dim)}
	}
	return loaded{tab: tab, bytes: ref.Bytes}
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
