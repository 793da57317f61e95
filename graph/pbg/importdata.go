package pbg

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/internal/hdf5"
)

// ImportReport says what Import converted.
type ImportReport struct {
	Entities map[string]int // per type
	Edges    []int64        // per edge set
	Buckets  []int          // bucket files found per edge set (the others are empty)
	Weights  []bool         // per edge set
	Removed  []string       // leftover staging directories removed
}

// Import converts PBG's imported data into the batchprep store cfg names
// (invariant 5): entity files from entityDir, one PBG edge directory per
// edge_paths[i] from edgeDirs. Entity partitions, offsets and relation
// ids are kept as they are, so that a PBG checkpoint of the same data
// lines up with the store (init_path). Edge ordinals number the edges of
// an edge set in bucket order (lhs, then rhs), file order inside a
// bucket. The store is written atomically (package edgestore).
func Import(ctx context.Context, cfg *config.Config, entityDir string, edgeDirs []string) (*ImportReport, error) {
	if len(edgeDirs) != len(cfg.EdgePaths) {
		return nil, fmt.Errorf("pbg: %d edge directories for %d edge_paths", len(edgeDirs), len(cfg.EdgePaths))
	}
	w, err := edgestore.Create(cfg, edgestore.WriteOptions{})
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	rep := &ImportReport{Entities: map[string]int{}}
	counts := map[string][]int{}
	for _, typ := range cfg.EntityTypes() {
		parts := make([][]string, cfg.Entities[typ].NumPartitions)
		for p := range parts {
			if parts[p], err = readEntities(entityDir, typ, p); err != nil {
				return nil, err
			}
			counts[typ] = append(counts[typ], len(parts[p]))
			rep.Entities[typ] += len(parts[p])
		}
		extra := filepath.Join(entityDir, fmt.Sprintf("entity_count_%s_%d.txt", typ, len(parts)))
		if _, err := os.Stat(extra); err == nil {
			return nil, fmt.Errorf("pbg: %s exists but entities.%s.num_partitions is %d in the config: use PBG's partition count", extra, typ, len(parts))
		}
		if err := w.WriteEntities(typ, parts); err != nil {
			return nil, err
		}
	}
	relNames, err := relationNames(cfg, entityDir)
	if err != nil {
		return nil, err
	}
	if err := w.WriteRelationNames(relNames); err != nil {
		return nil, err
	}
	L, R := cfg.BucketShape()
	for s, dir := range edgeDirs {
		if err := checkShape(dir, L, R); err != nil {
			return nil, err
		}
		c := &converter{cfg: cfg, counts: counts, numRels: len(relNames)}
		// Buckets are read twice: once to see whether any has weights
		// (the edge set's layout), once to convert.
		weights := false
		for l := range L {
			for r := range R {
				path := filepath.Join(dir, fmt.Sprintf("edges_%d_%d.h5", l, r))
				has, err := hasWeights(path)
				if err != nil {
					return nil, err
				}
				weights = weights || has
			}
		}
		if err := w.EdgeSet(s, dir, weights); err != nil {
			return nil, err
		}
		var total int64
		found := 0
		for l := range L {
			for r := range R {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				b := graph.Bucket{Lhs: l, Rhs: r}
				path := filepath.Join(dir, fmt.Sprintf("edges_%d_%d.h5", l, r))
				e, err := c.bucket(path, b, weights, uint64(total))
				if err != nil {
					return nil, err
				}
				if e != nil {
					found++
				} else {
					e = &graph.Edges{}
				}
				bw, err := w.Bucket(s, b, int64(e.Len()))
				if err != nil {
					return nil, err
				}
				if err := bw.Append(e); err != nil {
					bw.Close()
					return nil, err
				}
				if err := bw.Close(); err != nil {
					return nil, err
				}
				total += int64(e.Len())
			}
		}
		if found == 0 {
			return nil, fmt.Errorf("pbg: %s holds no edges_{lhs}_{rhs}.h5 file of the %dx%d buckets", dir, L, R)
		}
		rep.Edges, rep.Buckets, rep.Weights = append(rep.Edges, total), append(rep.Buckets, found), append(rep.Weights, weights)
	}
	if err := w.Commit(); err != nil {
		return nil, err
	}
	rep.Removed = w.Removed()
	return rep, nil
}

// checkShape refuses an edge directory with a bucket file outside the
// config's L×R buckets (PBG's data has more partitions than the config).
func checkShape(dir string, L, R int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("pbg: edge directory: %w", err)
	}
	for _, e := range ents {
		var l, r int
		var rest string
		if n, _ := fmt.Sscanf(e.Name(), "edges_%d_%d%s", &l, &r, &rest); n == 3 && rest == ".h5" && (l >= L || r >= R) {
			return fmt.Errorf("pbg: %s is outside the config's %dx%d buckets: set num_partitions as in PBG's config", filepath.Join(dir, e.Name()), L, R)
		}
	}
	return nil
}

// readEntities reads partition p of typ: PBG's count file, and its names
// file (which must hold that many names).
func readEntities(dir, typ string, p int) ([]string, error) {
	countPath := filepath.Join(dir, fmt.Sprintf("entity_count_%s_%d.txt", typ, p))
	b, err := os.ReadFile(countPath)
	if err != nil {
		return nil, fmt.Errorf("pbg: entities.%s partition %d: %w", typ, p, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return nil, fmt.Errorf("pbg: %s: %q is not an entity count", countPath, strings.TrimSpace(string(b)))
	}
	namesPath := filepath.Join(dir, fmt.Sprintf("entity_names_%s_%d.json", typ, p))
	b, err = os.ReadFile(namesPath)
	if err != nil {
		return nil, fmt.Errorf("pbg: entities.%s partition %d: %w (batchprep keeps every entity's name)", typ, p, err)
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("pbg: %s: not a JSON list of strings: %v", namesPath, jsonMessage(err))
	}
	if len(names) != n {
		return nil, fmt.Errorf("pbg: %s holds %d names, %s says %d", namesPath, len(names), countPath, n)
	}
	return names, nil
}

// jsonMessage is a JSON error without Go type names.
func jsonMessage(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("a %s at byte %d where a string was expected", te.Value, te.Offset)
	}
	return "invalid JSON"
}

// relationNames are the config's relation names, or in dynamic mode PBG's
// dynamic_rel_names.json (checked against dynamic_rel_count.txt).
func relationNames(cfg *config.Config, dir string) ([]string, error) {
	if !cfg.DynamicRelations {
		var names []string
		for _, r := range cfg.Relations {
			names = append(names, r.Name)
		}
		return names, nil
	}
	countPath := filepath.Join(dir, "dynamic_rel_count.txt")
	b, err := os.ReadFile(countPath)
	if err != nil {
		return nil, fmt.Errorf("pbg: dynamic_relations: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return nil, fmt.Errorf("pbg: %s: %q is not a relation count", countPath, strings.TrimSpace(string(b)))
	}
	namesPath := filepath.Join(dir, "dynamic_rel_names.json")
	b, err = os.ReadFile(namesPath)
	if err != nil {
		return nil, fmt.Errorf("pbg: dynamic_relations: %w", err)
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, fmt.Errorf("pbg: %s: not a JSON list of strings: %v", namesPath, jsonMessage(err))
	}
	if len(names) != n {
		return nil, fmt.Errorf("pbg: %s holds %d names, %s says %d", namesPath, len(names), countPath, n)
	}
	return names, nil
}

func hasWeights(path string) (bool, error) {
	f, err := hdf5.OpenFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pbg: %s: %w", path, err)
	}
	defer f.Close()
	_, err = f.Get("weight")
	if errors.Is(err, hdf5.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pbg: %s: %w", path, err)
	}
	return true, nil
}

// converter checks and converts the buckets of one edge set.
type converter struct {
	cfg     *config.Config
	counts  map[string][]int
	numRels int
}

// bucket reads one PBG bucket file; a missing file is an empty bucket
// (nil). Ordinals start at first.
func (c *converter) bucket(path string, b graph.Bucket, weights bool, first uint64) (*graph.Edges, error) {
	f, err := hdf5.OpenFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pbg: %s: %w", path, err)
	}
	defer f.Close()
	root, err := f.Root()
	if err != nil {
		return nil, fmt.Errorf("pbg: %s: %w", path, err)
	}
	if v, err := root.Attr("format_version"); err == nil && v != int64(1) {
		return nil, fmt.Errorf("pbg: %s: format_version %v: only version 1 is known", path, v)
	} else if err != nil && !errors.Is(err, hdf5.ErrNotFound) {
		return nil, fmt.Errorf("pbg: %s: %w", path, err)
	}
	if _, err := f.Get("lhsd_offsets"); err == nil {
		return nil, fmt.Errorf("pbg: %s: featurized entities (lhsd_*, rhsd_*) are not supported", path)
	}
	col := func(name string) (column, error) {
		o, err := f.Get(name)
		if err != nil {
			return column{}, fmt.Errorf("pbg: %s: %w", path, err)
		}
		return readColumn(o, path)
	}
	lhs, err := col("lhs")
	if err != nil {
		return nil, err
	}
	rhs, err := col("rhs")
	if err != nil {
		return nil, err
	}
	rel, err := col("rel")
	if err != nil {
		return nil, err
	}
	n := rel.len()
	if lhs.len() != n || rhs.len() != n {
		return nil, fmt.Errorf("pbg: %s: lhs, rhs and rel have %d, %d and %d rows", path, lhs.len(), rhs.len(), n)
	}
	e := &graph.Edges{Lhs: make([]uint32, n), Rhs: make([]uint32, n), Rel: make([]uint32, n), Ordinal: make([]uint64, n)}
	if weights {
		if e.Weight, err = c.weights(f, path, n); err != nil {
			return nil, err
		}
	}
	for i := range n {
		l, r, id := lhs.at(i), rhs.at(i), rel.at(i)
		if id < 0 || id >= int64(c.numRels) {
			return nil, fmt.Errorf("pbg: %s: row %d: relation %d outside [0, %d)", path, i, id, c.numRels)
		}
		rc := c.cfg.Relations[0]
		if !c.cfg.DynamicRelations {
			rc = c.cfg.Relations[id]
		}
		for side, v := range [2]int64{l, r} {
			typ, coord := rc.Lhs, b.Lhs
			if side == 1 {
				typ, coord = rc.Rhs, b.Rhs
			}
			part := 0
			if c.cfg.Entities[typ].NumPartitions > 1 {
				part = coord
			}
			if v < 0 || v >= int64(c.counts[typ][part]) {
				return nil, fmt.Errorf("pbg: %s: row %d: %s offset %d outside partition %d of %s (%d entities)",
					path, i, [2]string{"lhs", "rhs"}[side], v, part, typ, c.counts[typ][part])
			}
		}
		e.Lhs[i], e.Rhs[i], e.Rel[i], e.Ordinal[i] = uint32(l), uint32(r), uint32(id), first+uint64(i)
	}
	return e, nil
}

// weights reads the optional weight column (PBG writes int64; floats are
// read too), 1 where the bucket has none.
func (c *converter) weights(f *hdf5.File, path string, n int) ([]float32, error) {
	w := make([]float32, n)
	o, err := f.Get("weight")
	if errors.Is(err, hdf5.ErrNotFound) {
		for i := range w {
			w[i] = 1
		}
		return w, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pbg: %s: %w", path, err)
	}
	_, t, err := o.Shape()
	if err != nil {
		return nil, fmt.Errorf("pbg: %s: %w", path, err)
	}
	switch {
	case t == hdf5.Float32:
		v, err := o.Float32s()
		if err != nil {
			return nil, fmt.Errorf("pbg: %s: %w", path, err)
		}
		copy(w, v)
		if len(v) != n {
			return nil, fmt.Errorf("pbg: %s: %d weights for %d edges", path, len(v), n)
		}
	case t == hdf5.Float64:
		b, err := o.Read()
		if err != nil {
			return nil, fmt.Errorf("pbg: %s: %w", path, err)
		}
		if len(b) != 8*n {
			return nil, fmt.Errorf("pbg: %s: %d weights for %d edges", path, len(b)/8, n)
		}
		for i := range w {
			w[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	default:
		v, err := readColumn(o, path)
		if err != nil {
			return nil, err
		}
		if v.len() != n {
			return nil, fmt.Errorf("pbg: %s: %d weights for %d edges", path, v.len(), n)
		}
		for i := range w {
			w[i] = float32(v.at(i))
		}
	}
	for i, x := range w {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("pbg: %s: row %d: weight %v is not finite", path, i, x)
		}
	}
	return w, nil
}

// column is a 1-D integer dataset's raw little-endian bytes, decoded one
// value at a time (a bucket's columns are not held twice).
type column struct {
	b []byte
	t hdf5.Type
}

func readColumn(o *hdf5.Object, path string) (column, error) {
	shape, t, err := o.Shape()
	if err != nil {
		return column{}, fmt.Errorf("pbg: %s: %w", path, err)
	}
	if len(shape) != 1 || t.Class != hdf5.Int && t.Class != hdf5.Uint || t.Size > 8 {
		return column{}, fmt.Errorf("pbg: %s: %s is %s of shape %v, want a 1-D integer dataset", path, o.Name, t, shape)
	}
	b, err := o.Read()
	if err != nil {
		return column{}, fmt.Errorf("pbg: %s: %w", path, err)
	}
	return column{b: b, t: t}, nil
}

func (c column) len() int { return len(c.b) / c.t.Size }

func (c column) at(i int) int64 {
	if c.t.Size == 8 {
		return int64(binary.LittleEndian.Uint64(c.b[8*i:]))
	}
	var v uint64
	for k := c.t.Size - 1; k >= 0; k-- {
		v = v<<8 | uint64(c.b[i*c.t.Size+k])
	}
	if c.t.Class == hdf5.Int && v>>(8*c.t.Size-1)&1 == 1 {
		v |= ^uint64(0) << (8 * c.t.Size)
	}
	return int64(v)
}
