package edgestore

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Manifest file names.
const (
	EdgeManifestName   = "manifest.json"
	EntityManifestName = "batchprep-entities.json"
)

const (
	edgeFormat   = "batchprep-edge-set"
	entityFormat = "batchprep-entities"
)

// envelope is a manifest file: the body as raw JSON and the CRC32C of
// exactly those bytes.
type envelope struct {
	Body   json.RawMessage `json:"body"`
	CRC32C *uint32         `json:"crc32c"`
}

// EdgeManifest describes one edge set directory.
type EdgeManifest struct {
	Format             string           `json:"format"`
	Version            int              `json:"version"`
	StorageFingerprint string           `json:"storage_fingerprint"`
	EntitiesID         string           `json:"entities_id"`
	Partitions         [2]int           `json:"partitions"`
	Weights            bool             `json:"weights"`
	Columns            []string         `json:"columns"`
	Source             string           `json:"source"`
	SourceColumns      *SourceColumns   `json:"source_columns,omitempty"` // absent in older stores
	Edges              int64            `json:"edges"`
	Buckets            []BucketManifest `json:"buckets"`
}

// BucketManifest describes one bucket file.
type BucketManifest struct {
	Lhs    int               `json:"lhs"`
	Rhs    int               `json:"rhs"`
	File   string            `json:"file"`
	Edges  int64             `json:"edges"`
	Bytes  int64             `json:"bytes"`
	CRC32C map[string]uint32 `json:"crc32c"`
}

// EntityManifest describes an entity_path directory.
type EntityManifest struct {
	Format             string             `json:"format"`
	Version            int                `json:"version"`
	StorageFingerprint string             `json:"storage_fingerprint"`
	DynamicRelations   bool               `json:"dynamic_relations"`
	NumRelations       int                `json:"num_relations"`
	Entities           map[string][]int64 `json:"entities"` // type -> count per partition
	Files              []FileManifest     `json:"files"`
}

// FileManifest is the size and checksum of one file.
type FileManifest struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
}

// encodeManifest wraps body in a checksummed envelope.
func encodeManifest(body any) []byte {
	b, err := json.MarshalIndent(body, "  ", "  ")
	if err != nil {
		panic("edgestore: manifest encoding: " + err.Error())
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "{\n  \"body\": %s,\n  \"crc32c\": %d\n}\n", b, crc(b))
	return out.Bytes()
}

// openEnvelope checks the envelope's checksum and strictly decodes the body
// into v (unknown fields are errors).
func openEnvelope(data []byte, v any) error {
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return fmt.Errorf("malformed manifest: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("malformed manifest: data after the manifest object")
	}
	if env.Body == nil || env.CRC32C == nil {
		return fmt.Errorf("malformed manifest: body or crc32c missing")
	}
	if got := crc(env.Body); got != *env.CRC32C {
		return fmt.Errorf("manifest checksum mismatch (stored %08x, computed %08x)", *env.CRC32C, got)
	}
	dec = json.NewDecoder(bytes.NewReader(env.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed manifest body: %v", err)
	}
	return nil
}

// DecodeEdgeManifest parses and checks an edge set manifest: checksum,
// format, version, and internal consistency (one bucket per (lhs, rhs) in
// lexicographic order, sizes matching the edge counts, the edge total).
func DecodeEdgeManifest(data []byte) (*EdgeManifest, error) {
	m := &EdgeManifest{}
	if err := openEnvelope(data, m); err != nil {
		return nil, err
	}
	if m.Format != edgeFormat {
		return nil, fmt.Errorf("format %q, want %q", m.Format, edgeFormat)
	}
	if m.Version != Version {
		return nil, fmt.Errorf("format version %d, this build reads version %d", m.Version, Version)
	}
	L, R := m.Partitions[0], m.Partitions[1]
	if L < 1 || R < 1 || L > 1<<16 || R > 1<<16 {
		return nil, fmt.Errorf("bad partition shape %dx%d", L, R)
	}
	if len(m.Buckets) != L*R {
		return nil, fmt.Errorf("%d buckets listed, want %d (%dx%d)", len(m.Buckets), L*R, L, R)
	}
	cols := Columns(m.Weights)
	if fmt.Sprint(m.Columns) != fmt.Sprint(cols) {
		return nil, fmt.Errorf("columns %v, want %v", m.Columns, cols)
	}
	if m.SourceColumns != nil {
		if err := m.SourceColumns.check(); err != nil {
			return nil, err
		}
	}
	var total int64
	for i, b := range m.Buckets {
		if b.Lhs != i/R || b.Rhs != i%R {
			return nil, fmt.Errorf("buckets[%d] is (%d,%d), want (%d,%d)", i, b.Lhs, b.Rhs, i/R, i%R)
		}
		if b.File != BucketFile(b.Lhs, b.Rhs) {
			return nil, fmt.Errorf("buckets[%d].file %q, want %q", i, b.File, BucketFile(b.Lhs, b.Rhs))
		}
		if b.Edges < 0 || b.Edges > 1<<40 {
			return nil, fmt.Errorf("buckets[%d].edges %d out of range", i, b.Edges)
		}
		if _, size := layout(b.Edges, m.Weights); size != b.Bytes {
			return nil, fmt.Errorf("buckets[%d].bytes %d, want %d for %d edges", i, b.Bytes, size, b.Edges)
		}
		if len(b.CRC32C) != len(cols) {
			return nil, fmt.Errorf("buckets[%d].crc32c has %d columns, want %d", i, len(b.CRC32C), len(cols))
		}
		for _, c := range cols {
			if _, ok := b.CRC32C[c]; !ok {
				return nil, fmt.Errorf("buckets[%d].crc32c lacks column %q", i, c)
			}
		}
		total += b.Edges
	}
	if total != m.Edges {
		return nil, fmt.Errorf("edges %d, but the buckets hold %d", m.Edges, total)
	}
	return m, nil
}

// DecodeEntityManifest parses and checks an entity manifest.
func DecodeEntityManifest(data []byte) (*EntityManifest, error) {
	m := &EntityManifest{}
	if err := openEnvelope(data, m); err != nil {
		return nil, err
	}
	if m.Format != entityFormat {
		return nil, fmt.Errorf("format %q, want %q", m.Format, entityFormat)
	}
	if m.Version != Version {
		return nil, fmt.Errorf("format version %d, this build reads version %d", m.Version, Version)
	}
	if m.NumRelations < 0 {
		return nil, fmt.Errorf("num_relations %d < 0", m.NumRelations)
	}
	files := map[string]bool{}
	for i, f := range m.Files {
		if f.Name == "" || f.Name != baseName(f.Name) || files[f.Name] || f.Bytes < 0 {
			return nil, fmt.Errorf("files[%d]: bad entry %+v", i, f)
		}
		files[f.Name] = true
	}
	for t, counts := range m.Entities {
		if len(counts) < 1 {
			return nil, fmt.Errorf("entities.%s: no partitions", t)
		}
		for p, n := range counts {
			if n < 0 || n > 1<<32 {
				return nil, fmt.Errorf("entities.%s[%d]: count %d out of range", t, p, n)
			}
			for _, name := range []string{countFile(t, p), namesFile(t, p)} {
				if !files[name] {
					return nil, fmt.Errorf("entities.%s[%d]: file %s not listed", t, p, name)
				}
			}
		}
	}
	if !files[relNamesFile] {
		return nil, fmt.Errorf("file %s not listed", relNamesFile)
	}
	if m.DynamicRelations && !files[relCountFile] {
		return nil, fmt.Errorf("file %s not listed", relCountFile)
	}
	return m, nil
}

func baseName(s string) string {
	if i := bytes.LastIndexAny([]byte(s), `/\`); i >= 0 {
		return s[i+1:]
	}
	if s == "." || s == ".." {
		return ""
	}
	return s
}
