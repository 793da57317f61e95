package edgestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
)

// WriteOptions configure a Writer.
type WriteOptions struct {
	// Hook, when set, is called with the name of each step before it runs
	// ("entities TYPE", "bucket SET LHS RHS", "bucket SET LHS RHS close",
	// "manifests", "rename TARGET", "cleanup"); a non-nil error stops the
	// write there as a failure would. Tests use it to inject failures. The
	// close steps run on the goroutines that close the buckets, so Hook
	// may be called from several at once.
	Hook func(step string) error
	// NoSync skips every fsync. Only for tests and throw-away benchmark
	// data: without it a crash may leave a store that fails its checksums.
	NoSync bool
}

// errSimulatedCrash, returned by a Hook, makes Commit stop on the spot
// without rolling back, leaving the directories as a crash would.
var errSimulatedCrash = errors.New("simulated crash")

// Writer stages a whole store (entity_path and every edge_paths[i]) in
// temporary directories beside the targets and swaps them in on Commit
// (invariant 6). Use: WriteEntities for every entity type,
// WriteRelationNames, then for every edge set EdgeSet and one Bucket per
// (lhs, rhs); then Commit. Abort (safe after Commit) removes what is left.
// The Writer's methods are called from one goroutine, but the
// BucketWriters it returns may each be filled and closed on a goroutine of
// its own, several at once, until Commit.
type Writer struct {
	cfg       *config.Config
	opts      WriteOptions
	lhs, rhs  int
	ent       target
	entFiles  []FileManifest
	entCounts map[string][]int64
	relNames  bool
	numRels   int
	sets      []*setWriter
	mu        sync.Mutex // guards pending and spare, shared with BucketWriters
	pending   []string   // written files not yet fsynced
	spare     []byte     // a small bucket's file image, for reuse
	done      bool
	leftovers []string // staging directories of interrupted imports, found by Create
	removed   []string
}

type target struct {
	path string // final directory
	tmp  string // staging directory
	key  string // config key, for messages
}

type setWriter struct {
	target
	started bool
	weights bool
	source  string
	columns *SourceColumns // how source was read, when known
	buckets []BucketManifest
	closed  []bool
}

// Create checks the targets of cfg and makes the staging directories. An
// edge set directory may be absent or hold only batchprep's files (it is
// replaced whole); entity_path may hold anything (only batchprep's files in
// it are replaced), so that import never deletes a user's files.
func Create(cfg *config.Config, opts WriteOptions) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, t := range cfg.EntityTypes() {
		if cfg.Entities[t].Featurized {
			return nil, fmt.Errorf("edgestore: entities.%s: featurized entity types are not supported", t)
		}
	}
	w := &Writer{cfg: cfg, opts: opts, entCounts: map[string][]int64{}}
	w.lhs, w.rhs = cfg.BucketShape()
	seen := map[string]string{}
	check := func(path, key, manifest string) (target, error) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return target{}, &Error{Path: path, Err: err}
		}
		if k, dup := seen[abs]; dup {
			return target{}, fmt.Errorf("edgestore: %s and %s are the same directory %s", k, key, path)
		}
		seen[abs] = key
		if err := checkTarget(path, manifest); err != nil {
			return target{}, fmt.Errorf("edgestore: %s: %w", key, err)
		}
		return target{path: path, key: key}, nil
	}
	var err error
	if w.ent, err = check(cfg.EntityPath, "entity_path", ""); err != nil {
		return nil, err
	}
	for i, p := range cfg.EdgePaths {
		key := fmt.Sprintf("edge_paths[%d]", i)
		t, err := check(p, key, EdgeManifestName)
		if err != nil {
			return nil, err
		}
		if err := checkNesting(cfg, p, key); err != nil {
			return nil, err
		}
		w.sets = append(w.sets, &setWriter{target: t,
			buckets: make([]BucketManifest, w.lhs*w.rhs), closed: make([]bool, w.lhs*w.rhs)})
	}
	if w.leftovers, err = Leftovers(cfg); err != nil {
		return nil, err
	}
	if w.ent.tmp, err = stage(w.ent.path); err != nil {
		return nil, err
	}
	for _, s := range w.sets {
		if s.tmp, err = stage(s.path); err != nil {
			w.Abort()
			return nil, err
		}
	}
	return w, nil
}

// checkTarget accepts a missing path or a directory. With manifest set (an
// edge set directory, which Commit replaces whole) the directory must hold
// nothing but batchprep's own files; entity_path (manifest "") may hold
// anything, since only batchprep's files in it are replaced.
func checkTarget(path, manifest string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", path)
	}
	if manifest == "" {
		return nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type().IsRegular() && (e.Name() == manifest || isBucketFile(e.Name())) {
			continue
		}
		return fmt.Errorf("%s holds %s, which batchprep import did not write; refusing to replace the directory (an edge set directory holds only batchprep's files)", path, e.Name())
	}
	return nil
}

// isBucketFile reports whether name is a bucket file name (edges_L_R.bin).
func isBucketFile(name string) bool {
	var l, r int
	if _, err := fmt.Sscanf(name, "edges_%d_%d.bin", &l, &r); err != nil {
		return false
	}
	return name == BucketFile(l, r)
}

// checkNesting refuses layouts the directory swaps cannot handle:
// entity_path inside an edge set directory, or one edge set directory
// inside another. (Edge set directories inside entity_path, PBG's example
// layout, are fine.)
func checkNesting(cfg *config.Config, edgePath, key string) error {
	within := func(child, parent string) bool {
		c, _ := filepath.Abs(child)
		p, _ := filepath.Abs(parent)
		rel, err := filepath.Rel(p, c)
		return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	if within(cfg.EntityPath, edgePath) {
		return fmt.Errorf("edgestore: entity_path %s is inside %s %s", cfg.EntityPath, key, edgePath)
	}
	for j, other := range cfg.EdgePaths {
		if within(other, edgePath) {
			return fmt.Errorf("edgestore: edge_paths[%d] %s is inside %s %s", j, other, key, edgePath)
		}
	}
	return nil
}

// stage makes a staging directory beside path.
func stage(path string) (string, error) {
	parent, base := filepath.Split(filepath.Clean(path))
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", &Error{Path: parent, Err: err}
	}
	d, err := os.MkdirTemp(parent, "."+base+tmpInfix)
	if err != nil {
		return "", &Error{Path: parent, Err: err}
	}
	// MkdirTemp makes 0700 directories; the store is shared like any other
	// output (invariant 7).
	if err := os.Chmod(d, 0o755); err != nil {
		os.Remove(d)
		return "", &Error{Path: d, Err: err}
	}
	return d, nil
}

func (w *Writer) hook(step string) error {
	if w.opts.Hook == nil {
		return nil
	}
	return w.opts.Hook(step)
}

// writeFile writes a file in dir through fill, fsyncs it, and returns its
// size and CRC32C.
func (w *Writer) writeFile(dir, name string, fill func(io.Writer) error) (FileManifest, error) {
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return FileManifest{}, &Error{Path: p, Err: err}
	}
	cw := &crcWriter{w: f}
	err = fill(cw)
	w.mu.Lock()
	w.pending = append(w.pending, p) // fsynced by Commit
	w.mu.Unlock()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return FileManifest{}, &Error{Path: p, Err: err}
	}
	return FileManifest{Name: name, Bytes: cw.n, CRC32C: cw.crc}, nil
}

type crcWriter struct {
	w   io.Writer
	n   int64
	crc uint32
}

func (c *crcWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.crc = crc32.Update(c.crc, castagnoli, b[:n])
	c.n += int64(n)
	return n, err
}

// WriteEntities writes the count and names files of entity type typ;
// parts[p] lists the names of partition p in offset order.
func (w *Writer) WriteEntities(typ string, parts [][]string) error {
	e, ok := w.cfg.Entities[typ]
	if !ok {
		return fmt.Errorf("edgestore: unknown entity type %q", typ)
	}
	if len(parts) != e.NumPartitions {
		return fmt.Errorf("edgestore: entities.%s: %d partitions given, config has %d", typ, len(parts), e.NumPartitions)
	}
	if _, dup := w.entCounts[typ]; dup {
		return fmt.Errorf("edgestore: entities.%s written twice", typ)
	}
	if err := w.hook("entities " + typ); err != nil {
		return err
	}
	counts := make([]int64, len(parts))
	for p, names := range parts {
		counts[p] = int64(len(names))
		fm, err := w.writeFile(w.ent.tmp, countFile(typ, p), func(wr io.Writer) error {
			_, err := wr.Write(countText(counts[p]))
			return err
		})
		if err != nil {
			return err
		}
		w.entFiles = append(w.entFiles, fm)
		fm, err = w.writeFile(w.ent.tmp, namesFile(typ, p), func(wr io.Writer) error { return writeNames(wr, names) })
		if err != nil {
			return err
		}
		w.entFiles = append(w.entFiles, fm)
	}
	w.entCounts[typ] = counts
	return nil
}

// WriteRelationNames writes dynamic_rel_names.json (relation names by id)
// and, with dynamic relations, dynamic_rel_count.txt.
func (w *Writer) WriteRelationNames(names []string) error {
	if w.relNames {
		return fmt.Errorf("edgestore: relation names written twice")
	}
	fm, err := w.writeFile(w.ent.tmp, relNamesFile, func(wr io.Writer) error { return writeNames(wr, names) })
	if err != nil {
		return err
	}
	w.entFiles = append(w.entFiles, fm)
	if w.cfg.DynamicRelations {
		fm, err := w.writeFile(w.ent.tmp, relCountFile, func(wr io.Writer) error {
			_, err := wr.Write(countText(int64(len(names))))
			return err
		})
		if err != nil {
			return err
		}
		w.entFiles = append(w.entFiles, fm)
	}
	w.relNames, w.numRels = true, len(names)
	return nil
}

// EdgeSet starts edge set s: source names its input (for the manifest) and
// weights says whether its buckets carry a weight column.
func (w *Writer) EdgeSet(s int, source string, weights bool) error {
	if s < 0 || s >= len(w.sets) {
		return fmt.Errorf("edgestore: edge set %d out of range [0, %d)", s, len(w.sets))
	}
	st := w.sets[s]
	if st.started {
		return fmt.Errorf("edgestore: edge set %d started twice", s)
	}
	st.started, st.source, st.weights = true, source, weights
	return nil
}

// Bucket creates bucket (lhs, rhs) of edge set s, which will hold exactly n
// edges given through Append.
func (w *Writer) Bucket(s int, b graph.Bucket, n int64) (*BucketWriter, error) {
	if s < 0 || s >= len(w.sets) || !w.sets[s].started {
		return nil, fmt.Errorf("edgestore: edge set %d not started", s)
	}
	if b.Lhs < 0 || b.Lhs >= w.lhs || b.Rhs < 0 || b.Rhs >= w.rhs {
		return nil, fmt.Errorf("edgestore: bucket (%d,%d) outside %dx%d", b.Lhs, b.Rhs, w.lhs, w.rhs)
	}
	st := w.sets[s]
	idx := b.Lhs*w.rhs + b.Rhs
	if st.closed[idx] || st.buckets[idx].File != "" {
		return nil, fmt.Errorf("edgestore: bucket (%d,%d) of edge set %d written twice", b.Lhs, b.Rhs, s)
	}
	step := fmt.Sprintf("bucket %d %d %d", s, b.Lhs, b.Rhs)
	if err := w.hook(step); err != nil {
		return nil, err
	}
	name := BucketFile(b.Lhs, b.Rhs)
	p := filepath.Join(st.tmp, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, &Error{Path: p, Err: err}
	}
	st.buckets[idx] = BucketManifest{Lhs: b.Lhs, Rhs: b.Rhs, File: name, Edges: n}
	h := Header{Weights: st.weights, Edges: uint64(n), Lhs: uint32(b.Lhs), Rhs: uint32(b.Rhs)}
	offs, size := layout(n, st.weights)
	bw := &BucketWriter{w: w, set: st, idx: idx, path: p, f: f, n: n, size: size, weights: st.weights, step: step}
	// A small bucket is assembled in memory and written with one call at
	// Close (system calls dominate with many small buckets); a large one
	// streams each column through its own buffer.
	bw.whole = size <= smallBucket
	if bw.whole {
		// The columns append in place into the file image.
		// Every byte is overwritten (header, then the columns), so a
		// recycled image needs no clearing.
		w.mu.Lock()
		if int64(cap(w.spare)) >= size {
			bw.image, w.spare = w.spare[:size], nil
		}
		w.mu.Unlock()
		if bw.image == nil {
			bw.image = make([]byte, size)
		}
		copy(bw.image, h.Encode())
	} else if _, err := f.WriteAt(h.Encode(), 0); err != nil {
		f.Close()
		return nil, &Error{Path: p, Err: err}
	}
	for _, c := range Columns(st.weights) {
		var buf []byte
		if bw.whole {
			o, e := offs[c], offs[c]+n*colWidth(c)
			buf = bw.image[o:o:e]
		} else {
			buf = make([]byte, 0, min(1<<17, max(n, 1)*colWidth(c)))
		}
		bw.cols = append(bw.cols, colBuf{name: c, off: offs[c], buf: buf})
	}
	return bw, nil
}

// BucketWriter writes one bucket file, column by column, through a buffer
// per column.
type BucketWriter struct {
	w       *Writer
	set     *setWriter
	idx     int
	path    string
	f       *os.File
	n, done int64
	size    int64
	weights bool
	step    string // the hook's name of the bucket
	whole   bool   // small bucket: one write at Close
	image   []byte // whole mode: the file's bytes
	cols    []colBuf
	err     error
}

// smallBucket is the largest bucket file assembled in memory.
const smallBucket = 1 << 20

type colBuf struct {
	name string
	off  int64
	buf  []byte
	crc  uint32
}

func (c *colBuf) flush(f *os.File) error {
	if len(c.buf) == 0 {
		return nil
	}
	if _, err := f.WriteAt(c.buf, c.off); err != nil {
		return err
	}
	c.crc = crc32.Update(c.crc, castagnoli, c.buf)
	c.off += int64(len(c.buf))
	c.buf = c.buf[:0]
	return nil
}

// Append adds e's edges (all of its columns; Weight must be set exactly
// when the edge set has weights).
func (bw *BucketWriter) Append(e *graph.Edges) error {
	if bw.err != nil {
		return bw.err
	}
	if bw.f == nil {
		return fmt.Errorf("edgestore: %s: Append after Close", bw.path)
	}
	n := e.Len()
	if len(e.Lhs) != n || len(e.Rhs) != n || len(e.Ordinal) != n || (bw.weights && len(e.Weight) != n) || (!bw.weights && len(e.Weight) != 0) {
		return fmt.Errorf("edgestore: %s: Append: column lengths differ or weights do not match the edge set", bw.path)
	}
	if bw.done+int64(n) > bw.n {
		return fmt.Errorf("edgestore: %s: more than the announced %d edges", bw.path, bw.n)
	}
	for i := range bw.cols {
		c := &bw.cols[i]
		w := int(colWidth(c.name))
		for start := 0; start < n; {
			room := (cap(c.buf) - len(c.buf)) / w
			if room == 0 {
				if err := c.flush(bw.f); err != nil {
					bw.err = &Error{Path: bw.path, Err: err}
					return bw.err
				}
				continue
			}
			end := min(n, start+room)
			c.buf = appendColumn(c.buf, c.name, e, start, end)
			start = end
		}
	}
	bw.done += int64(n)
	return nil
}

func appendColumn(buf []byte, name string, e *graph.Edges, start, end int) []byte {
	le := binary.LittleEndian
	switch name {
	case ColLhs:
		for _, v := range e.Lhs[start:end] {
			buf = le.AppendUint32(buf, v)
		}
	case ColRhs:
		for _, v := range e.Rhs[start:end] {
			buf = le.AppendUint32(buf, v)
		}
	case ColRel:
		for _, v := range e.Rel[start:end] {
			buf = le.AppendUint32(buf, v)
		}
	case ColWeight:
		for _, v := range e.Weight[start:end] {
			buf = le.AppendUint32(buf, math.Float32bits(v))
		}
	case ColOrdinal:
		for _, v := range e.Ordinal[start:end] {
			buf = le.AppendUint64(buf, v)
		}
	}
	return buf
}

// Close flushes, checks that exactly the announced number of edges was
// written, and closes the file (Commit fsyncs it).
func (bw *BucketWriter) Close() error {
	if bw.f == nil {
		return bw.err
	}
	err := bw.err
	if err == nil {
		err = bw.w.hook(bw.step + " close")
	}
	if err == nil && bw.done != bw.n {
		err = fmt.Errorf("%d edges written, %d announced", bw.done, bw.n)
	}
	if err == nil && bw.whole {
		for i := range bw.cols {
			c := &bw.cols[i]
			c.crc = crc32.Update(c.crc, castagnoli, c.buf)
		}
		_, err = bw.f.WriteAt(bw.image, 0)
		bw.w.mu.Lock()
		if cap(bw.image) > cap(bw.w.spare) {
			bw.w.spare = bw.image // recycled by the next small bucket
		}
		bw.w.mu.Unlock()
		bw.image = nil
	} else {
		for i := range bw.cols {
			if err == nil {
				err = bw.cols[i].flush(bw.f)
			}
		}
	}
	if err == nil && !bw.w.opts.NoSync {
		startWriteback(bw.f)
	}
	bw.w.mu.Lock()
	bw.w.pending = append(bw.w.pending, bw.path) // fsynced by Commit
	bw.w.mu.Unlock()
	if cerr := bw.f.Close(); err == nil {
		err = cerr
	}
	bw.f = nil
	if err != nil {
		bw.err = &Error{Path: bw.path, Err: err}
		return bw.err
	}
	m := &bw.set.buckets[bw.idx]
	m.Bytes = bw.size
	m.CRC32C = map[string]uint32{}
	for _, c := range bw.cols {
		m.CRC32C[c.name] = c.crc
	}
	bw.set.closed[bw.idx] = true
	return nil
}
