package train

import (
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/plan"
)

// EpochIO is the partition I/O of one epoch of a run: the table files it
// read (loads) and wrote (saves) and their bytes. The model file and the
// manifest, written with every checkpoint, are not counted.
type EpochIO struct {
	Epoch int `json:"epoch"`
	IOStats
	// Partial is set for the epoch a resumed run started inside: its
	// counts cover only the buckets this run trained.
	Partial bool `json:"partial,omitempty"`
}

// TableFileBytes is the size of the file of a partition of rows entities
// of dimension dim: a 24-byte header, the float32 embeddings and one
// float32 Adagrad accumulator per row (tablefile.go).
func TableFileBytes(rows, dim int) int64 {
	return 24 + 4*int64(rows)*int64(dim+1)
}

// PredictIO computes, from the config, the store's entity counts and the
// plan's bucket orders alone, the partition I/O of each epoch of a run
// that starts with no checkpoint: a bucket loads each partition it trains
// that is not in the partition buffer (buffer.go: c = partition_buffer per
// entity type, Belady eviction) and that was written before (a partition
// never trained is initialized, not read); after each bucket, the
// partitions changed since they were last written are saved when they
// leave the buffer for the next bucket and, at a commit
// (Config.CheckpointEvery, epoch ends, the run's end), all of them. A
// run's counters (Trainer.EpochIO) equal it exactly, whatever
// Options.SequentialIO.
func PredictIO(cfg *config.Config, store Store) ([]EpochIO, error) {
	p, err := plan.New(store, plan.OptionsFromConfig(cfg))
	if err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg, plan: p, types: cfg.EntityTypes(), typeIdx: map[string]int{}, every: cfg.CheckpointEvery(),
		align: AlignCommits(cfg), res: newResidency(cfg.Buffer())}
	t.look = newLookahead(t)
	for i, ty := range t.types {
		t.typeIdx[ty] = i
	}
	size := map[tableKey]int64{}
	sizeOf := func(k tableKey) (int64, error) {
		if n, ok := size[k]; ok {
			return n, nil
		}
		rows, err := store.EntityCount(t.types[k.typ], k.part)
		if err != nil {
			return 0, err
		}
		size[k] = TableFileBytes(rows, cfg.Dimension)
		return size[k], nil
	}
	l, r := p.Shape()
	written, dirty := map[tableKey]bool{}, map[tableKey]bool{}
	out := make([]EpochIO, cfg.NumEpochs)
	pos := Position{}
	var loaded []tableKey
	if cfg.NumEpochs > 0 {
		loaded, _ = t.admitAt(pos, t.bucketAt(pos))
	}
	for pos.Epoch < cfg.NumEpochs {
		st := &out[pos.Epoch]
		st.Epoch = pos.Epoch
		for _, k := range loaded {
			n, err := sizeOf(k)
			if err != nil {
				return nil, err
			}
			if written[k] {
				st.Loads++
				st.LoadBytes += n
			}
		}
		for _, k := range t.changes(t.bucketAt(pos)) {
			if _, err := sizeOf(k); err != nil {
				return nil, err
			}
			dirty[k] = true
		}
		next := t.advance(pos, l*r)
		commit := t.clock.after(t, pos, next, t.groupGoesOn(pos, next))
		stays := func(tableKey) bool { return false }
		if next.Epoch < cfg.NumEpochs {
			loaded, _ = t.admitAt(next, t.bucketAt(next))
			stays = t.res.has
		}
		for k := range dirty {
			if !commit && stays(k) {
				continue
			}
			st.Saves++
			st.SaveBytes += size[k]
			written[k] = true
			delete(dirty, k)
		}
		pos = next
	}
	return out, nil
}

// countEpochIO adds what checkpoint man did since the committed one
// before it (prev) to the run's I/O of epoch.
func (t *Trainer) countEpochIO(epoch int, prev, man IOStats) {
	if len(t.epochIO) == 0 || t.epochIO[len(t.epochIO)-1].Epoch != epoch {
		t.epochIO = append(t.epochIO, EpochIO{Epoch: epoch, Partial: len(t.epochIO) == 0 && t.resumedMidEpoch})
	}
	e := &t.epochIO[len(t.epochIO)-1]
	e.Loads += man.Loads - prev.Loads
	e.LoadBytes += man.LoadBytes - prev.LoadBytes
	e.Saves += man.Saves - prev.Saves
	e.SaveBytes += man.SaveBytes - prev.SaveBytes
}

// EpochIO returns the partition I/O of each epoch this run trained in
// (what its committed checkpoints added to the manifest's counters).
func (t *Trainer) EpochIO() []EpochIO { return t.epochIO }
