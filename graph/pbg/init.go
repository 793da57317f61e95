package pbg

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train/model"
	"github.com/batchprep/batchprep/internal/hdf5"
)

// Init reads a PBG checkpoint directory as the initial values of a
// batchprep run (config key init_path; invariant 6). It implements
// train.Init.
type Init struct {
	dir     string
	version int
	cfg     *config.Config
	store   Store
}

// IsCheckpoint reports whether dir holds PBG's checkpoint layout (its
// version file).
func IsCheckpoint(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, VersionFile))
	return err == nil
}

// OpenInit opens the PBG checkpoint in dir for a run of cfg on store.
func OpenInit(dir string, cfg *config.Config, store Store) (*Init, error) {
	b, err := os.ReadFile(filepath.Join(dir, VersionFile))
	if err != nil {
		return nil, fmt.Errorf("pbg: init_path %s: no PyTorch-BigGraph checkpoint: %w", dir, err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 0 {
		return nil, fmt.Errorf("pbg: %s: %q is not a checkpoint version", filepath.Join(dir, VersionFile), strings.TrimSpace(string(b)))
	}
	return &Init{dir: dir, version: v, cfg: cfg, store: store}, nil
}

// Table returns the embeddings of embeddings_{typ}_{part}.v{N}.h5, nil
// when the checkpoint has no such file (PBG then initializes at random
// too). The rows must be the store's: same count, and the same names when
// the checkpoint directory has PBG's names file beside it.
func (in *Init) Table(typ string, part, rows, dim int) ([]float32, error) {
	path := filepath.Join(in.dir, embeddingsFile(typ, part, in.version))
	f, err := hdf5.OpenFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pbg: init_path: %s: %w", path, err)
	}
	defer f.Close()
	if err := checkFormat(f, path); err != nil {
		return nil, err
	}
	o, err := f.Get("embeddings")
	if err != nil {
		return nil, fmt.Errorf("pbg: init_path: %s: %w", path, err)
	}
	shape, _, err := o.Shape()
	if err != nil {
		return nil, fmt.Errorf("pbg: init_path: %s: %w", path, err)
	}
	if !reflect.DeepEqual(shape, []uint64{uint64(rows), uint64(dim)}) {
		return nil, fmt.Errorf("pbg: init_path: %s holds embeddings of shape %v; %s partition %d has %d entities of dimension %d",
			path, shape, typ, part, rows, dim)
	}
	if err := in.sameNames(typ, part); err != nil {
		return nil, err
	}
	emb, err := o.Float32s()
	if err != nil {
		return nil, fmt.Errorf("pbg: init_path: %s: %w", path, err)
	}
	return emb, nil
}

// sameNames compares the checkpoint's names file, when there is one, with
// the store's names of the partition: rows are matched by offset.
func (in *Init) sameNames(typ string, part int) error {
	path := filepath.Join(in.dir, fmt.Sprintf("entity_names_%s_%d.json", typ, part))
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var theirs []string
	if err := json.Unmarshal(b, &theirs); err != nil {
		return fmt.Errorf("pbg: init_path: %s: not a JSON list of strings: %v", path, jsonMessage(err))
	}
	ours, err := in.store.EntityNames(typ, part)
	if err != nil {
		return err
	}
	for i := range min(len(ours), len(theirs)) {
		if ours[i] != theirs[i] {
			return fmt.Errorf("pbg: init_path: %s partition %d: offset %d is %q in %s, %q in the store: the entities are partitioned differently (import PBG's data with import --from pbg to keep its partitions)",
				typ, part, i, theirs[i], path, ours[i])
		}
	}
	return nil
}

func checkFormat(f *hdf5.File, path string) error {
	root, err := f.Root()
	if err != nil {
		return fmt.Errorf("pbg: init_path: %s: %w", path, err)
	}
	if v, err := root.Attr("format_version"); err != nil || v != int64(1) {
		return fmt.Errorf("pbg: init_path: %s: format_version is not 1 (PBG's checkpoint format)", path)
	}
	return nil
}

// Model sets m's parameters from model.v{N}.h5 (when the checkpoint has
// one): every parameter of m must be there under PBG's name and shape,
// and every parameter there must be one of m's.
func (in *Init) Model(m *model.Model) error {
	path := filepath.Join(in.dir, modelFile(in.version))
	f, err := hdf5.OpenFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pbg: init_path: %s: %w", path, err)
	}
	defer f.Close()
	if err := checkFormat(f, path); err != nil {
		return err
	}
	theirs := map[string]*hdf5.Object{}
	if g, err := f.Get("model"); err == nil {
		if err := datasets(g, "", theirs); err != nil {
			return fmt.Errorf("pbg: init_path: %s: %w", path, err)
		}
	} else if !errors.Is(err, hdf5.ErrNotFound) {
		return fmt.Errorf("pbg: init_path: %s: %w", path, err)
	}
	public, _, ps, err := modelParams(m, in.cfg.EntityTypes(), in.cfg.Dimension)
	if err != nil {
		return err
	}
	read := map[string][]float32{}
	for i, name := range public {
		o, ok := theirs[name]
		if !ok {
			return fmt.Errorf("pbg: init_path: %s has no %s: the PBG run's config differs (operators, global_emb or dynamic_relations)", path, name)
		}
		shape, _, err := o.Shape()
		if err != nil {
			return fmt.Errorf("pbg: init_path: %s: %w", path, err)
		}
		if !reflect.DeepEqual(shape, ps[i].shape) {
			return fmt.Errorf("pbg: init_path: %s: %s has shape %v, want %v", path, name, shape, ps[i].shape)
		}
		v, err := o.Float32s()
		if err != nil {
			return fmt.Errorf("pbg: init_path: %s: %w", path, err)
		}
		read[name] = v
		delete(theirs, name)
	}
	for name := range theirs {
		return fmt.Errorf("pbg: init_path: %s: %s is not a parameter of this config's model", path, name)
	}
	return setParams(m, in.cfg, read)
}

// datasets lists the datasets below g by path.
func datasets(g *hdf5.Object, prefix string, out map[string]*hdf5.Object) error {
	ms, err := g.Members()
	if err != nil {
		return err
	}
	for _, mb := range ms {
		c, err := g.Child(mb)
		if err != nil {
			return err
		}
		if c.IsGroup() {
			if len(out) > 1<<16 {
				return fmt.Errorf("too many parameters")
			}
			if err := datasets(c, prefix+mb.Name+"/", out); err != nil {
				return err
			}
			continue
		}
		out[prefix+mb.Name] = c
	}
	return nil
}
