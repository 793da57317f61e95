package edgestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"unsafe"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
)

// Store reads an imported graph: the entity dictionaries in entity_path and
// one edge set per edge_paths[i]. It implements graph.Reader and is safe for
// concurrent use.
type Store struct {
	cfg         *config.Config
	entityPath  string
	ent         *EntityManifest
	entFiles    map[string]FileManifest
	sets        []*edgeSet
	lhs, rhs    int
	fingerprint string
}

type edgeSet struct {
	dir   string
	man   *EdgeManifest
	mu    sync.Mutex
	files []*os.File
	state []checkState
}

// checkState is how far a bucket file has been checked (invariant 3).
type checkState uint8

const (
	unchecked     checkState = iota
	headerChecked            // open; size and header agree with the manifest
	verified                 // and every column checksum too
)

var _ graph.Reader = (*Store)(nil)

// Open opens the store that cfg names. It checks the manifests (checksums,
// version), that the store was imported with a config of the same
// StorageFingerprint, that every edge set belongs to the same import as the
// entities (invariant 6), and the entity count files. Bucket files are
// verified the first time they are used (invariant 3).
func Open(cfg *config.Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, entityPath: cfg.EntityPath, entFiles: map[string]FileManifest{}}
	s.lhs, s.rhs = cfg.BucketShape()
	mp := filepath.Join(cfg.EntityPath, EntityManifestName)
	emBytes, err := os.ReadFile(mp)
	if errors.Is(err, os.ErrNotExist) {
		// A killed import may be between moving the old manifest away and
		// moving the new one in (invariant 6): its staging directories say so.
		if left, _ := Leftovers(cfg); len(left) > 0 {
			return nil, &Error{Path: mp, Err: fmt.Errorf("no entity manifest: an import was interrupted here (it left %s); run batchprep import again", left[0])}
		}
		return nil, &Error{Path: mp, Err: fmt.Errorf("no entity manifest: entity_path holds no imported graph (run batchprep import)")}
	}
	if err != nil {
		return nil, &Error{Path: mp, Err: err}
	}
	if s.ent, err = DecodeEntityManifest(emBytes); err != nil {
		return nil, corrupt(mp, err)
	}
	if !bytes.Equal(encodeManifest(s.ent), emBytes) {
		return nil, corrupt(mp, errNotCanonical)
	}
	if s.ent.StorageFingerprint != cfg.StorageFingerprint() {
		return nil, &Error{Path: mp, Err: fmt.Errorf("imported with a different config (entities, relations, dynamic_relations or seed changed since); run batchprep import again")}
	}
	for _, f := range s.ent.Files {
		s.entFiles[f.Name] = f
	}
	entID := sha256.Sum256(emBytes)
	h := sha256.New()
	h.Write(emBytes)
	for i, dir := range cfg.EdgePaths {
		p := filepath.Join(dir, EdgeManifestName)
		mb, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Path: p, Err: fmt.Errorf("edge_paths[%d] holds no imported edge set (run batchprep import)", i)}
		}
		if err != nil {
			return nil, &Error{Path: p, Err: err}
		}
		m, err := DecodeEdgeManifest(mb)
		if err != nil {
			return nil, corrupt(p, err)
		}
		if !bytes.Equal(encodeManifest(m), mb) {
			return nil, corrupt(p, errNotCanonical)
		}
		if m.EntitiesID != hex.EncodeToString(entID[:]) {
			return nil, &Error{Path: p, Err: fmt.Errorf("edge_paths[%d] was written by another import than the entity manifest %s (an interrupted or partial import, or a file copied from another store?); run batchprep import again", i, mp)}
		}
		if m.Partitions != [2]int{s.lhs, s.rhs} || m.StorageFingerprint != s.ent.StorageFingerprint {
			return nil, corrupt(p, fmt.Errorf("partition shape %v, config gives [%d %d]", m.Partitions, s.lhs, s.rhs))
		}
		h.Write(mb)
		n := len(m.Buckets)
		s.sets = append(s.sets, &edgeSet{dir: dir, man: m, files: make([]*os.File, n), state: make([]checkState, n)})
	}
	// The count files are checked once the edge sets are known to come
	// from the same import as the entity manifest, so that a swapped
	// manifest is reported as such rather than as a bad count file.
	for _, t := range cfg.EntityTypes() {
		counts, ok := s.ent.Entities[t]
		if !ok || len(counts) != cfg.Entities[t].NumPartitions {
			return nil, corrupt(mp, fmt.Errorf("entity type %q missing or with the wrong partition count", t))
		}
		for p, n := range counts {
			data, err := s.readEntityFile(countFile(t, p))
			if err != nil {
				return nil, err
			}
			if string(data) != string(countText(n)) {
				return nil, corrupt(filepath.Join(s.entityPath, countFile(t, p)), fmt.Errorf("holds %q, manifest says %d", data, n))
			}
		}
	}
	s.fingerprint = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// errNotCanonical: a manifest whose checksummed body is intact but whose
// bytes differ from what batchprep writes for that body (edited or
// damaged outside the body, a lost final newline).
var errNotCanonical = errors.New("not byte-identical to the manifest batchprep writes for its content (edited, or damaged outside the checksummed body)")

// readEntityFile reads a file of entity_path and checks it against the
// manifest.
func (s *Store) readEntityFile(name string) ([]byte, error) {
	p := filepath.Join(s.entityPath, name)
	fm, ok := s.entFiles[name]
	if !ok {
		return nil, corrupt(p, fmt.Errorf("not listed in %s", EntityManifestName))
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, &Error{Path: p, Err: err}
	}
	if int64(len(data)) != fm.Bytes || crc(data) != fm.CRC32C {
		return nil, corrupt(p, fmt.Errorf("size or checksum differs from the manifest"))
	}
	return data, nil
}

// Fingerprint identifies the stored data: a hash of every manifest, which
// hold the checksums of every file, so it changes when any stored byte does.
func (s *Store) Fingerprint() string { return s.fingerprint }

// Partitions returns the bucket shape.
func (s *Store) Partitions() (lhs, rhs int) { return s.lhs, s.rhs }

// NumEdgeSets returns the number of edge sets.
func (s *Store) NumEdgeSets() int { return len(s.sets) }

// HasWeights reports whether edge set i has a weight column.
func (s *Store) HasWeights(i int) bool { return s.sets[i].man.Weights }

// Source returns the input file edge set i was imported from.
func (s *Store) Source(i int) string { return s.sets[i].man.Source }

// TotalEdges returns the number of edges of edge set i.
func (s *Store) TotalEdges(i int) int64 { return s.sets[i].man.Edges }

// EntityTypes returns the entity type names, sorted.
func (s *Store) EntityTypes() []string { return s.cfg.EntityTypes() }

// EntityCount returns the number of entities of type typ in partition part.
func (s *Store) EntityCount(typ string, part int) (int, error) {
	c, ok := s.ent.Entities[typ]
	if !ok || part < 0 || part >= len(c) {
		return 0, fmt.Errorf("edgestore: no entity partition %s/%d", typ, part)
	}
	return int(c[part]), nil
}

// EntityNames returns the names of the entities of type typ in partition
// part, by offset.
func (s *Store) EntityNames(typ string, part int) ([]string, error) {
	n, err := s.EntityCount(typ, part)
	if err != nil {
		return nil, err
	}
	data, err := s.readEntityFile(namesFile(typ, part))
	if err != nil {
		return nil, err
	}
	names, err := parseNames(data)
	if err == nil && len(names) != n {
		err = fmt.Errorf("%d names, count is %d", len(names), n)
	}
	if err != nil {
		return nil, corrupt(filepath.Join(s.entityPath, namesFile(typ, part)), err)
	}
	return names, nil
}

// NumRelations returns the number of relation ids (config relations, or
// dynamic relations found in the data).
func (s *Store) NumRelations() int { return s.ent.NumRelations }

// DynamicRelations reports whether relation ids come from the data.
func (s *Store) DynamicRelations() bool { return s.ent.DynamicRelations }

// RelationNames returns the relation names by id.
func (s *Store) RelationNames() ([]string, error) {
	data, err := s.readEntityFile(relNamesFile)
	if err != nil {
		return nil, err
	}
	names, err := parseNames(data)
	if err == nil && len(names) != s.ent.NumRelations {
		err = fmt.Errorf("%d names, num_relations is %d", len(names), s.ent.NumRelations)
	}
	if err != nil {
		return nil, corrupt(filepath.Join(s.entityPath, relNamesFile), err)
	}
	return names, nil
}

func (s *Store) bucket(set int, b graph.Bucket) (*edgeSet, int, error) {
	if set < 0 || set >= len(s.sets) {
		return nil, 0, fmt.Errorf("edgestore: edge set %d out of range [0, %d)", set, len(s.sets))
	}
	if b.Lhs < 0 || b.Lhs >= s.lhs || b.Rhs < 0 || b.Rhs >= s.rhs {
		return nil, 0, fmt.Errorf("edgestore: bucket (%d,%d) outside %dx%d", b.Lhs, b.Rhs, s.lhs, s.rhs)
	}
	return s.sets[set], b.Lhs*s.rhs + b.Rhs, nil
}

// open opens a bucket file and checks its size and header against the
// manifest, once. It returns the file and whether its column checksums have
// been verified too.
func (es *edgeSet) open(idx int) (*os.File, bool, error) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.state[idx] != unchecked {
		return es.files[idx], es.state[idx] == verified, nil
	}
	p := es.path(idx)
	f, err := os.Open(p)
	if err != nil {
		return nil, false, &Error{Path: p, Err: err}
	}
	if err := checkHeader(f, es.man.Buckets[idx], es.man.Weights); err != nil {
		f.Close()
		return nil, false, es.fail(idx, err)
	}
	es.files[idx], es.state[idx] = f, headerChecked
	return f, false, nil
}

func (es *edgeSet) path(idx int) string { return filepath.Join(es.dir, es.man.Buckets[idx].File) }

// fail wraps err in an *Error naming the bucket file.
func (es *edgeSet) fail(idx int, err error) error {
	if errors.Is(err, ErrCorrupt) {
		return corrupt(es.path(idx), err)
	}
	return &Error{Path: es.path(idx), Err: err}
}

// markVerified records that f's column checksums matched, unless the store
// was closed (and the file replaced) meanwhile.
func (es *edgeSet) markVerified(idx int, f *os.File) {
	es.mu.Lock()
	if es.files[idx] == f && es.state[idx] == headerChecked {
		es.state[idx] = verified
	}
	es.mu.Unlock()
}

// verify checks a bucket file whole (size, header, every column checksum)
// by reading it through a small buffer, once.
func (es *edgeSet) verify(idx int) (*os.File, error) {
	f, ok, err := es.open(idx)
	if err != nil || ok {
		return f, err
	}
	bm := es.man.Buckets[idx]
	offs, _ := layout(bm.Edges, es.man.Weights)
	buf := make([]byte, min(1<<20, max(bm.Bytes, 1)))
	for _, c := range Columns(es.man.Weights) {
		sum := crc32.New(castagnoli)
		if _, err := io.CopyBuffer(sum, io.NewSectionReader(f, offs[c], bm.Edges*colWidth(c)), buf); err != nil {
			return nil, es.fail(idx, err)
		}
		if err := checkSum(bm, c, sum.Sum32()); err != nil {
			return nil, es.fail(idx, err)
		}
	}
	es.markVerified(idx, f)
	return f, nil
}

// checkHeader checks a bucket file's size and header against its manifest
// entry.
func checkHeader(f *os.File, bm BucketManifest, weights bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != bm.Bytes {
		return &corruptError{fmt.Sprintf("file is %d bytes, manifest says %d", fi.Size(), bm.Bytes)}
	}
	hb := make([]byte, HeaderSize)
	if _, err := f.ReadAt(hb, 0); err != nil {
		return err
	}
	h, err := DecodeHeader(hb)
	if err != nil {
		return &corruptError{err.Error()}
	}
	if h.Edges != uint64(bm.Edges) || h.Weights != weights || int(h.Lhs) != bm.Lhs || int(h.Rhs) != bm.Rhs {
		return &corruptError{fmt.Sprintf("header %+v disagrees with the manifest", h)}
	}
	return nil
}

// checkSum compares a column's computed checksum with the manifest's.
func checkSum(bm BucketManifest, col string, got uint32) error {
	if want := bm.CRC32C[col]; got != want {
		return &corruptError{fmt.Sprintf("column %s checksum mismatch (stored %08x, computed %08x)", col, want, got)}
	}
	return nil
}

// NumEdges returns the number of edges of bucket b in edge set set, after
// checking the bucket file's size and header (its column checksums are
// checked by the first ReadEdges, or by Verify).
func (s *Store) NumEdges(set int, b graph.Bucket) (int, error) {
	es, idx, err := s.bucket(set, b)
	if err != nil {
		return 0, err
	}
	if _, _, err := es.open(idx); err != nil {
		return 0, err
	}
	return int(es.man.Buckets[idx].Edges), nil
}

// parallelRead is the chunk size (edges) from which ReadEdges reads the
// columns on concurrent goroutines.
const parallelRead = 1 << 16

// ReadEdges appends edges [begin, end) of bucket b of edge set set to dst,
// with one ReadAt per column straight into dst's columns (invariant 4):
// no intermediate buffer on little-endian hosts. dst.Weight is appended to
// only when the edge set has weights. The first read of a bucket verifies
// its column checksums (invariant 3): over the bytes it has just read when
// it reads the whole bucket, otherwise by reading the file once first. On
// an error dst is left as it was.
func (s *Store) ReadEdges(set int, b graph.Bucket, begin, end int, dst *graph.Edges) error {
	return s.readEdges(set, b, begin, end, dst, nil)
}

// ReadEdgesRelationFirst is ReadEdges that calls relReady (when not nil)
// as soon as dst.Rel holds the range's relation ids, checked like every
// column, while the other columns may still be loading: a caller can start
// on the relations meanwhile. relReady must not touch dst's other columns;
// it has returned when ReadEdgesRelationFirst returns. When the read fails
// relReady may have run, and the error is returned as by ReadEdges.
func (s *Store) ReadEdgesRelationFirst(set int, b graph.Bucket, begin, end int, dst *graph.Edges, relReady func()) error {
	return s.readEdges(set, b, begin, end, dst, relReady)
}

func (s *Store) readEdges(set int, b graph.Bucket, begin, end int, dst *graph.Edges, relReady func()) error {
	es, idx, err := s.bucket(set, b)
	if err != nil {
		return err
	}
	bm := es.man.Buckets[idx]
	if begin < 0 || end < begin || int64(end) > bm.Edges {
		return fmt.Errorf("edgestore: range [%d, %d) outside bucket (%d,%d) of %d edges", begin, end, b.Lhs, b.Rhs, bm.Edges)
	}
	f, ok, err := es.open(idx)
	if err != nil {
		return err
	}
	check := !ok
	if check && (begin != 0 || int64(end) != bm.Edges) {
		if f, err = es.verify(idx); err != nil {
			return err
		}
		check = false
	}
	n := end - begin
	weights := es.man.Weights
	old := *dst
	dst.Lhs, dst.Rhs, dst.Rel = growU32(dst.Lhs, n), growU32(dst.Rhs, n), growU32(dst.Rel, n)
	if weights {
		dst.Weight = growF32(dst.Weight, n)
	}
	dst.Ordinal = growU64(dst.Ordinal, n)
	cols := Columns(weights)
	offs, _ := layout(bm.Edges, weights)
	// The relation column first, so that relReady can run while the others
	// load.
	cols[0], cols[2] = cols[2], cols[0]
	var errs [5]error
	read := func(i int) {
		c := cols[i]
		off := offs[c] + int64(begin)*colWidth(c)
		var sum uint32
		var err error
		switch c {
		case ColLhs:
			sum, err = readColumn(f, off, dst.Lhs[len(dst.Lhs)-n:], check)
		case ColRhs:
			sum, err = readColumn(f, off, dst.Rhs[len(dst.Rhs)-n:], check)
		case ColRel:
			sum, err = readColumn(f, off, dst.Rel[len(dst.Rel)-n:], check)
		case ColWeight:
			sum, err = readColumn(f, off, dst.Weight[len(dst.Weight)-n:], check)
		case ColOrdinal:
			sum, err = readColumn(f, off, dst.Ordinal[len(dst.Ordinal)-n:], check)
		}
		if err == nil && check {
			err = checkSum(bm, c, sum)
		}
		errs[i] = err
		if c == ColRel && err == nil && relReady != nil {
			relReady()
		}
	}
	if n >= parallelRead && runtime.GOMAXPROCS(0) > 1 {
		var wg sync.WaitGroup
		for i := range cols {
			wg.Add(1)
			go func() { defer wg.Done(); read(i) }()
		}
		wg.Wait()
	} else {
		for i := range cols {
			read(i)
		}
	}
	for _, err := range errs {
		if err != nil {
			dst.Lhs, dst.Rhs, dst.Rel = old.Lhs, old.Rhs, old.Rel
			dst.Weight, dst.Ordinal = old.Weight, old.Ordinal
			return es.fail(idx, err)
		}
	}
	if check {
		es.markVerified(idx, f)
	}
	return nil
}

// column is the element type of a stored column.
type column interface{ uint32 | float32 | uint64 }

// nativeLittleEndian reports whether the host stores integers and floats
// little-endian, as the format does: then a column's bytes are its values.
var nativeLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// readColumn fills out with the values stored at off, with one ReadAt into
// out's own memory on little-endian hosts, and returns the CRC32C of the
// bytes read when sum is set.
func readColumn[T column](f *os.File, off int64, out []T, sum bool) (uint32, error) {
	if !nativeLittleEndian {
		return readColumnPortable(f, off, out, sum)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), len(out)*int(unsafe.Sizeof(out[0])))
	if _, err := f.ReadAt(b, off); err != nil {
		return 0, err
	}
	if sum {
		return crc(b), nil
	}
	return 0, nil
}

// readColumnPortable is readColumn for any byte order: it reads through a
// 64 KiB buffer and decodes each little-endian value.
func readColumnPortable[T column](f *os.File, off int64, out []T, sum bool) (uint32, error) {
	w := int(unsafe.Sizeof(out[0]))
	buf := make([]byte, min(1<<16, len(out)*w))
	per := max(len(buf)/w, 1)
	var c uint32
	le := binary.LittleEndian
	for i := 0; i < len(out); i += per {
		part := out[i:min(len(out), i+per)]
		b := buf[:len(part)*w]
		if _, err := f.ReadAt(b, off+int64(i*w)); err != nil {
			return 0, err
		}
		if sum {
			c = crc32.Update(c, castagnoli, b)
		}
		for j := range part {
			p := unsafe.Pointer(&part[j])
			if w == 8 {
				*(*uint64)(p) = le.Uint64(b[8*j:])
			} else {
				*(*uint32)(p) = le.Uint32(b[4*j:])
			}
		}
	}
	return c, nil
}

func growU32(s []uint32, n int) []uint32 {
	if cap(s)-len(s) < n {
		t := make([]uint32, len(s), len(s)+n+len(s)/2)
		copy(t, s)
		s = t
	}
	return s[:len(s)+n]
}

func growF32(s []float32, n int) []float32 {
	if cap(s)-len(s) < n {
		t := make([]float32, len(s), len(s)+n+len(s)/2)
		copy(t, s)
		s = t
	}
	return s[:len(s)+n]
}

func growU64(s []uint64, n int) []uint64 {
	if cap(s)-len(s) < n {
		t := make([]uint64, len(s), len(s)+n+len(s)/2)
		copy(t, s)
		s = t
	}
	return s[:len(s)+n]
}

// Verify checks every bucket file and every entity file now, instead of on
// first use.
func (s *Store) Verify() error {
	for i, es := range s.sets {
		for idx := range es.man.Buckets {
			if _, err := es.verify(idx); err != nil {
				return fmt.Errorf("edge set %d: %w", i, err)
			}
		}
	}
	names := make([]string, 0, len(s.entFiles))
	for n := range s.entFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := s.readEntityFile(n)
		if err != nil {
			return err
		}
		if bytes.HasSuffix([]byte(n), []byte(".json")) {
			if _, err := parseNames(data); err != nil {
				return corrupt(filepath.Join(s.entityPath, n), err)
			}
		} else if _, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64); err != nil {
			return corrupt(filepath.Join(s.entityPath, n), err)
		}
	}
	return nil
}

// Close closes the open bucket files.
func (s *Store) Close() error {
	var first error
	for _, es := range s.sets {
		es.mu.Lock()
		for i, f := range es.files {
			if f != nil {
				if err := f.Close(); err != nil && first == nil {
					first = err
				}
				es.files[i], es.state[i] = nil, unchecked
			}
		}
		es.mu.Unlock()
	}
	return first
}
