package train

import (
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train/model"
)

// readAttempts bounds how often a reader starts again because training
// committed a new checkpoint while it read the previous one.
const readAttempts = 20

// ReadConsistent gives load the manifest of the checkpoint in dir, and
// returns it when load succeeds. A run training in dir meanwhile commits
// new checkpoints and removes the files of the previous ones (so a reader
// can find a file its manifest names gone, or a log longer than its
// manifest): when load fails and the manifest on disk is no longer the one
// load was given, it starts again with the new one. An error is returned
// only when it stands against the latest checkpoint. It returns (nil, nil)
// when dir holds no manifest.
func ReadConsistent(dir string, load func(*Manifest) error) (*Manifest, error) {
	man, err := ReadManifest(dir)
	for attempt := 1; ; attempt++ {
		if err != nil || man == nil {
			return nil, err
		}
		lerr := load(man)
		if lerr == nil {
			return man, nil
		}
		now, err2 := ReadManifest(dir)
		if err2 != nil || now == nil || sameCheckpoint(man, now) || attempt >= readAttempts {
			return nil, lerr
		}
		man, err = now, nil
	}
}

// sameCheckpoint reports whether two manifests read from one directory
// describe the same commit.
func sameCheckpoint(a, b *Manifest) bool {
	same := a.Seq == b.Seq && a.Model == b.Model && a.Buckets == b.Buckets
	if a.Distributed != nil || b.Distributed != nil {
		same = same && a.Distributed != nil && b.Distributed != nil && *a.Distributed == *b.Distributed
	}
	return same
}

// LoadCheckpoint reads the checkpoint in dir for evaluation and export:
// its manifest, the config's model with the checkpoint's parameters
// (refusing a checkpoint of another config, as LoadModel does) and every
// partition's table (as LoadTables), all of one commit even while a run
// trains in dir (ReadConsistent). The manifest is nil when dir holds
// none.
func LoadCheckpoint(cfg *config.Config, numRelations int, storeFingerprint, dir string) (*Manifest, *model.Model, map[string][]*model.Table, error) {
	var m *model.Model
	var tables map[string][]*model.Table
	man, err := ReadConsistent(dir, func(man *Manifest) error {
		var err error
		if m, err = LoadModel(cfg, numRelations, storeFingerprint, dir, man); err != nil {
			return err
		}
		tables, err = LoadTables(dir, man)
		return err
	})
	if err != nil || man == nil {
		return nil, nil, nil, err
	}
	return man, m, tables, nil
}
