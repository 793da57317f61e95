package pbg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/graph/train/model"
	"github.com/batchprep/batchprep/internal/atomicfile"
	"github.com/batchprep/batchprep/internal/hdf5"
)

// Store is what writing a checkpoint reads of an edge store.
type Store interface {
	EntityCount(typ string, part int) (int, error)
	EntityNames(typ string, part int) ([]string, error)
	RelationNames() ([]string, error)
	NumRelations() int
	Fingerprint() string
	NumEdges(set int, b graph.Bucket) (int, error)
}

// Summary says what WriteCheckpoint wrote.
type Summary struct {
	Version  int // N of the .v{N}.h5 files
	Entities int // rows written, all types
	Files    int
	Bytes    int64
	Finished bool // the run trained every epoch (else Version is where PBG resumes)
}

// File names of PBG's layout.
func embeddingsFile(typ string, part, version int) string {
	return fmt.Sprintf("embeddings_%s_%d.v%d.h5", typ, part, version)
}

func modelFile(version int) string { return fmt.Sprintf("model.v%d.h5", version) }

// VersionFile is PBG's commit point.
const VersionFile = "checkpoint_version.txt"

// WriteCheckpoint writes the batchprep checkpoint at cfg.CheckpointPath,
// made from store, into dir in PBG's checkpoint layout, with PBG's entity
// files (counts and names) beside it (invariants 1-4).
func WriteCheckpoint(dir string, cfg *config.Config, store Store) (*Summary, error) {
	man, err := train.ReadManifest(cfg.CheckpointPath)
	if err != nil {
		return nil, err
	}
	if man == nil {
		return nil, fmt.Errorf("pbg: %s holds no checkpoint: no %s (run batchprep train first)", cfg.CheckpointPath, train.ManifestName)
	}
	m, err := train.LoadModel(cfg, store.NumRelations(), store.Fingerprint(), cfg.CheckpointPath, man)
	if err != nil {
		return nil, err
	}
	tables, err := train.LoadTables(cfg.CheckpointPath, man)
	if err != nil {
		return nil, err
	}
	version, err := pbgVersion(cfg, man, store)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// A previous version file would name files about to be replaced.
	if err := os.Remove(filepath.Join(dir, VersionFile)); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	sum := &Summary{Version: version, Finished: man.Next.Epoch >= cfg.NumEpochs}
	put := func(name string, data []byte) error {
		if err := atomicfile.Write(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("pbg: writing %s: %w", filepath.Join(dir, name), err)
		}
		sum.Files++
		sum.Bytes += int64(len(data))
		return nil
	}
	pbgCfg, err := configJSON(cfg, dir)
	if err != nil {
		return nil, err
	}
	types := cfg.EntityTypes()
	for _, typ := range types {
		for p := 0; p < cfg.Entities[typ].NumPartitions; p++ {
			n, err := store.EntityCount(typ, p)
			if err != nil {
				return nil, err
			}
			var tab *model.Table
			if p < len(tables[typ]) {
				tab = tables[typ][p]
			}
			switch {
			case tab == nil && n > 0:
				return nil, fmt.Errorf("pbg: the checkpoint has no embeddings for %s partition %d (was it trained?)", typ, p)
			case tab == nil:
				tab = &model.Table{Dim: cfg.Dimension}
			case tab.Rows != n:
				return nil, fmt.Errorf("pbg: the checkpoint has %d rows for %s partition %d, the store %d", tab.Rows, typ, p, n)
			}
			t := newTree(pbgCfg)
			t.Root().Dataset("embeddings", hdf5.Float32, []uint64{uint64(tab.Rows), uint64(tab.Dim)}, hdf5.Float32s(tab.Emb))
			if err := put(embeddingsFile(typ, p, version), encode(t)); err != nil {
				return nil, err
			}
			sum.Entities += n
			names, err := store.EntityNames(typ, p)
			if err != nil {
				return nil, err
			}
			if err := put(fmt.Sprintf("entity_count_%s_%d.txt", typ, p), []byte(strconv.Itoa(n)+"\n")); err != nil {
				return nil, err
			}
			js, err := json.MarshalIndent(names, "", "    ")
			if err != nil {
				return nil, err
			}
			if err := put(fmt.Sprintf("entity_names_%s_%d.json", typ, p), js); err != nil {
				return nil, err
			}
		}
	}
	relNames, err := store.RelationNames()
	if err != nil {
		return nil, err
	}
	js, _ := json.MarshalIndent(relNames, "", "    ")
	if err := put("dynamic_rel_names.json", js); err != nil {
		return nil, err
	}
	if cfg.DynamicRelations {
		if err := put("dynamic_rel_count.txt", []byte(strconv.Itoa(len(relNames))+"\n")); err != nil {
			return nil, err
		}
	}
	public, private, ps, err := modelParams(m, types, cfg.Dimension)
	if err != nil {
		return nil, err
	}
	t := newTree(pbgCfg)
	g := t.Root().Group("model")
	for i, p := range ps {
		g.Dataset(public[i], hdf5.Float32, p.shape, hdf5.Float32s(p.data)).SetAttr("state_dict_key", private[i])
	}
	if err := put(modelFile(version), encode(t)); err != nil {
		return nil, err
	}
	if err := put("config.json", pbgCfg); err != nil {
		return nil, err
	}
	if err := put(VersionFile, []byte(strconv.Itoa(version)+"\n")); err != nil {
		return nil, err
	}
	return sum, nil
}

// newTree starts a PBG checkpoint file: the root attributes PBG writes.
func newTree(cfgJSON []byte) *hdf5.Tree {
	t := hdf5.NewTree()
	t.Root().SetAttr("format_version", int64(1))
	if len(cfgJSON) < hdf5.MaxAttr-64 { // metadata only: PBG never reads it back
		t.Root().SetAttr("config/json", string(cfgJSON))
	}
	return t
}

func encode(t *hdf5.Tree) []byte {
	var buf bytes.Buffer
	if _, err := t.WriteTo(&buf); err != nil {
		panic("pbg: encoding to memory: " + err.Error()) // sources are slices: cannot fail
	}
	return buf.Bytes()
}
