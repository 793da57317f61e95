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
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

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
	dir      string
	man      *EdgeManifest
	mu       sync.Mutex
	files    []*os.File
	verified []bool
}

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
		return nil, &Error{Path: mp, Err: fmt.Errorf("no entity manifest: entity_path holds no imported graph (run batchprep import)")}
	}
	if err != nil {
		return nil, &Error{Path: mp, Err: err}
	}
	if s.ent, err = DecodeEntityManifest(emBytes); err != nil {
		return nil, corrupt(mp, err)
	}
	if s.ent.StorageFingerprint != cfg.StorageFingerprint() {
		return nil, &Error{Path: mp, Err: fmt.Errorf("imported with a different config (entities, relations, dynamic_relations or seed changed since); run batchprep import again")}
	}
	for _, f := range s.ent.Files {
		s.entFiles[f.Name] = f
	}
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
		if m.EntitiesID != hex.EncodeToString(entID[:]) {
			return nil, &Error{Path: p, Err: fmt.Errorf("edge_paths[%d] was written by another import than entity_path %s (an interrupted or partial import?); run batchprep import again", i, cfg.EntityPath)}
		}
		if m.Partitions != [2]int{s.lhs, s.rhs} || m.StorageFingerprint != s.ent.StorageFingerprint {
			return nil, corrupt(p, fmt.Errorf("partition shape %v, config gives [%d %d]", m.Partitions, s.lhs, s.rhs))
		}
		h.Write(mb)
		n := len(m.Buckets)
		s.sets = append(s.sets, &edgeSet{dir: dir, man: m, files: make([]*os.File, n), verified: make([]bool, n)})
	}
	s.fingerprint = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

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

// file opens and verifies a bucket file once.
func (es *edgeSet) file(idx int) (*os.File, error) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.verified[idx] {
		return es.files[idx], nil
	}
	bm := es.man.Buckets[idx]
	p := filepath.Join(es.dir, bm.File)
	f, err := os.Open(p)
	if err != nil {
		return nil, &Error{Path: p, Err: err}
	}
	if err := verifyBucket(f, bm, es.man.Weights); err != nil {
		f.Close()
		if errors.Is(err, ErrCorrupt) {
			return nil, corrupt(p, err)
		}
		return nil, &Error{Path: p, Err: err}
	}
	es.files[idx], es.verified[idx] = f, true
	return f, nil
}

// verifyBucket checks a bucket file's size, header and column checksums.
func verifyBucket(f *os.File, bm BucketManifest, weights bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != bm.Bytes {
		return &corruptError{fmt.Sprintf("file is %d bytes, manifest says %d", fi.Size(), bm.Bytes)}
	}
	var whole []byte // small file: read once
	if bm.Bytes <= smallBucket {
		whole = make([]byte, bm.Bytes)
		if _, err := f.ReadAt(whole, 0); err != nil {
			return err
		}
	}
	hb := whole
	if hb == nil {
		hb = make([]byte, HeaderSize)
		if _, err := f.ReadAt(hb, 0); err != nil {
			return err
		}
	}
	h, err := DecodeHeader(hb)
	if err != nil {
		return &corruptError{err.Error()}
	}
	if h.Edges != uint64(bm.Edges) || h.Weights != weights || int(h.Lhs) != bm.Lhs || int(h.Rhs) != bm.Rhs {
		return &corruptError{fmt.Sprintf("header %+v disagrees with the manifest", h)}
	}
	offs, _ := layout(bm.Edges, weights)
	var buf []byte
	if whole == nil {
		buf = make([]byte, 1<<20)
	}
	for _, c := range Columns(weights) {
		var got uint32
		if whole != nil {
			got = crc(whole[offs[c] : offs[c]+bm.Edges*colWidth(c)])
		} else {
			sum := crc32.New(castagnoli)
			if _, err := io.CopyBuffer(sum, io.NewSectionReader(f, offs[c], bm.Edges*colWidth(c)), buf); err != nil {
				return err
			}
			got = sum.Sum32()
		}
		if got != bm.CRC32C[c] {
			return &corruptError{fmt.Sprintf("column %s checksum mismatch (stored %08x, computed %08x)", c, bm.CRC32C[c], got)}
		}
	}
	return nil
}

// NumEdges returns the number of edges of bucket b in edge set set, after
// verifying the bucket's file.
func (s *Store) NumEdges(set int, b graph.Bucket) (int, error) {
	es, idx, err := s.bucket(set, b)
	if err != nil {
		return 0, err
	}
	if _, err := es.file(idx); err != nil {
		return 0, err
	}
	return int(es.man.Buckets[idx].Edges), nil
}

var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 1<<16); return &b }}

// ReadEdges appends edges [begin, end) of bucket b of edge set set to dst,
// with one ReadAt per column (invariant 4). dst.Weight is appended to only
// when the edge set has weights.
func (s *Store) ReadEdges(set int, b graph.Bucket, begin, end int, dst *graph.Edges) error {
	es, idx, err := s.bucket(set, b)
	if err != nil {
		return err
	}
	f, err := es.file(idx)
	if err != nil {
		return err
	}
	bm := es.man.Buckets[idx]
	if begin < 0 || end < begin || int64(end) > bm.Edges {
		return fmt.Errorf("edgestore: range [%d, %d) outside bucket (%d,%d) of %d edges", begin, end, b.Lhs, b.Rhs, bm.Edges)
	}
	n := end - begin
	offs, _ := layout(bm.Edges, es.man.Weights)
	bp := scratch.Get().(*[]byte)
	defer scratch.Put(bp)
	le := binary.LittleEndian
	for _, c := range Columns(es.man.Weights) {
		w := colWidth(c)
		if cap(*bp) < n*int(w) {
			*bp = make([]byte, n*int(w))
		}
		buf := (*bp)[:n*int(w)]
		if _, err := f.ReadAt(buf, offs[c]+int64(begin)*w); err != nil {
			return &Error{Path: filepath.Join(es.dir, bm.File), Err: err}
		}
		switch c {
		case ColLhs:
			dst.Lhs = appendU32(dst.Lhs, buf)
		case ColRhs:
			dst.Rhs = appendU32(dst.Rhs, buf)
		case ColRel:
			dst.Rel = appendU32(dst.Rel, buf)
		case ColWeight:
			dst.Weight = growF32(dst.Weight, n)
			out := dst.Weight[len(dst.Weight)-n:]
			for i := range out {
				out[i] = math.Float32frombits(le.Uint32(buf[4*i:]))
			}
		case ColOrdinal:
			dst.Ordinal = growU64(dst.Ordinal, n)
			out := dst.Ordinal[len(dst.Ordinal)-n:]
			for i := range out {
				out[i] = le.Uint64(buf[8*i:])
			}
		}
	}
	return nil
}

func appendU32(dst []uint32, buf []byte) []uint32 {
	n := len(buf) / 4
	dst = growU32(dst, n)
	out := dst[len(dst)-n:]
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(buf[4*i:])
	}
	return dst
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
			if _, err := es.file(idx); err != nil {
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
				es.files[i], es.verified[i] = nil, false
			}
		}
		es.mu.Unlock()
	}
	return first
}
