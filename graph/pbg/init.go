package pbg

import (
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
// train.Init. Rows are placed by entity name, never by position: the
// checkpoint's names are PBG's entity_names_*.json files (see
// namesCandidates for where they are looked for).
type Init struct {
	dir     string
	version int
	cfg     *config.Config
	src     map[string][][]int64 // type -> store partition -> row -> checkpoint row (rowSource) or unmatched
	their   map[string][]int     // type -> checkpoint partition -> rows
	report  InitReport
}

// IsCheckpoint reports whether dir holds PBG's checkpoint layout (its
// version file).
func IsCheckpoint(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, VersionFile))
	return err == nil
}

// OpenInit opens the PBG checkpoint in dir for a run of cfg on store: it
// reads the checkpoint's entity names and maps each of the store's
// entities to the checkpoint row of the same name. Every store entity must
// have one unless opts.AllowUnmatched (then the others start at random);
// a store none of whose entities match is refused either way.
func OpenInit(dir string, cfg *config.Config, store Store, opts InitOptions) (*Init, error) {
	b, err := os.ReadFile(filepath.Join(dir, VersionFile))
	if err != nil {
		return nil, fmt.Errorf("pbg: init_path %s: no PyTorch-BigGraph checkpoint: %w", dir, err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 0 {
		return nil, fmt.Errorf("pbg: %s: %q is not a checkpoint version", filepath.Join(dir, VersionFile), strings.TrimSpace(string(b)))
	}
	in := &Init{dir: dir, version: v, cfg: cfg, src: map[string][][]int64{}, their: map[string][]int{}}
	types := cfg.EntityTypes()
	namesDir, err := findNames(dir, types, opts)
	if err != nil {
		return nil, err
	}
	in.report = InitReport{Dir: dir, Version: v, NamesDir: namesDir}
	for _, typ := range types {
		theirs, err := readNames(namesDir, typ)
		if err != nil {
			return nil, err
		}
		src, m, err := matchType(typ, cfg.Entities[typ].NumPartitions, theirs, store)
		if err != nil {
			return nil, err
		}
		in.src[typ] = src
		for _, names := range theirs {
			in.their[typ] = append(in.their[typ], len(names))
		}
		in.report.Types = append(in.report.Types, m)
	}
	if err := checkMatch(&in.report, in.src, store, opts); err != nil {
		return nil, err
	}
	return in, nil
}

// Report says where the run starts from and how many entities matched.
func (in *Init) Report() InitReport { return in.report }

// Fill overwrites the rows of emb (store partition part of typ, drawn at
// random) that the checkpoint holds by name, reading each checkpoint
// partition they come from. A checkpoint partition without an embeddings
// file leaves its rows random (PBG initializes such a partition at random
// too).
func (in *Init) Fill(typ string, part int, emb []float32, dim int) error {
	src := in.src[typ]
	if part >= len(src) {
		return nil
	}
	rows := src[part]
	if len(emb) != len(rows)*dim {
		return fmt.Errorf("pbg: init_path: %s partition %d has %d rows of dimension %d in the store, the run gave %d values", typ, part, len(rows), dim, len(emb))
	}
	need := map[int]bool{}
	for _, s := range rows {
		if s != unmatched {
			need[int(s>>32)] = true
		}
	}
	for q := range len(in.their[typ]) {
		if !need[q] {
			continue
		}
		theirs, err := in.table(typ, q, in.their[typ][q], dim)
		if err != nil {
			return err
		}
		if theirs == nil {
			continue
		}
		for i, s := range rows {
			if s == unmatched || int(s>>32) != q {
				continue
			}
			off := int(s & 0xffffffff)
			copy(emb[i*dim:(i+1)*dim], theirs[off*dim:(off+1)*dim])
		}
	}
	return nil
}

// table reads embeddings_{typ}_{part}.v{N}.h5, which must hold rows×dim
// values; nil when the checkpoint has no such file.
func (in *Init) table(typ string, part, rows, dim int) ([]float32, error) {
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
		return nil, fmt.Errorf("pbg: init_path: %s holds embeddings of shape %v; its names file %s has %d names and the run's dimension is %d",
			path, shape, namesFile(in.report.NamesDir, typ, part), rows, dim)
	}
	emb, err := o.Float32s()
	if err != nil {
		return nil, fmt.Errorf("pbg: init_path: %s: %w", path, err)
	}
	return emb, nil
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
