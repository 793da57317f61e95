package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/batchprep/batchprep/internal/atomicfile"
	"github.com/batchprep/batchprep/internal/jsonmsg"
)

// ManifestName is the checkpoint's commit point: a checkpoint is the set
// of files its manifest names, with their SHA-256.
const ManifestName = "checkpoint.json"

// ManifestVersion is the manifest format version; other versions are
// refused.
const ManifestVersion = 1

// ErrCheckpoint marks a checkpoint that cannot be used: corrupt, of
// another format version, or made with a different config.
var ErrCheckpoint = errors.New("train: unusable checkpoint")

// Position is where training continues: the bucket at Index of the order
// of pass (Epoch, EdgeSet, Chunk).
type Position struct {
	Epoch   int `json:"epoch"`
	EdgeSet int `json:"edge_set"`
	Chunk   int `json:"chunk"`
	Index   int `json:"index"`
}

// FileRef names one file of a checkpoint.
type FileRef struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// TableRef is one (entity type, partition) of a checkpoint.
type TableRef struct {
	Type      string `json:"type"`
	Partition int    `json:"partition"`
	Rows      int    `json:"rows"`
	FileRef
}

// EpochStats is one epoch's training loss and holdout ranking, as plotted.
type EpochStats struct {
	Epoch     int     `json:"epoch"`
	Loss      float64 `json:"loss"` // summed loss / positives
	Count     int64   `json:"count"`
	MRRBefore float64 `json:"holdout_mrr_before,omitempty"`
	MRRAfter  float64 `json:"holdout_mrr_after,omitempty"`
	Holdout   int64   `json:"holdout_count,omitempty"`
}

// IOStats count partition swaps.
type IOStats struct {
	Loads     int64 `json:"loads"`
	LoadBytes int64 `json:"load_bytes"`
	Saves     int64 `json:"saves"`
	SaveBytes int64 `json:"save_bytes"`
}

// Manifest is the content of checkpoint.json.
type Manifest struct {
	Version     int            `json:"version"`
	Seq         int64          `json:"seq"` // increases with every checkpoint
	Fingerprint map[string]any `json:"fingerprint"`
	Next        Position       `json:"next"`
	Done        bool           `json:"done"`
	Tables      []TableRef     `json:"tables"`
	Model       FileRef        `json:"model"`
	History     []EpochStats   `json:"history"`
	IO          IOStats        `json:"io"`
	Buckets     int64          `json:"buckets_trained"`
	Edges       int64          `json:"edges_trained"`
	// Distributed is set when a distributed run wrote the manifest
	// (distributed.go).
	Distributed *DistRun `json:"distributed,omitempty"`
	// Superseded names the files the previous checkpoint of this run
	// named and this one does not: removed after the manifest is written,
	// and by the next run if a kill came first.
	Superseded []string `json:"superseded,omitempty"`
}

// envelope carries the manifest with the SHA-256 of its compact JSON
// encoding (the file itself is indented for people).
type envelope struct {
	Body   json.RawMessage `json:"body"`
	SHA256 string          `json:"sha256"`
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// encodeManifest returns the bytes of checkpoint.json for m.
func encodeManifest(m *Manifest) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return indentEnvelope(body)
}

// indentEnvelope returns the file form of a compact manifest body.
func indentEnvelope(body []byte) ([]byte, error) {
	env, err := json.MarshalIndent(envelope{Body: body, SHA256: sum(body)}, "", " ")
	if err != nil {
		return nil, err
	}
	return append(env, '\n'), nil
}

// writeManifest commits m in dir atomically.
func writeManifest(dir string, m *Manifest) error {
	env, err := encodeManifest(m)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, ManifestName)
	if err := atomicfile.Write(path, env, 0o644); err != nil {
		return fmt.Errorf("train: writing checkpoint manifest %s: %w", path, err)
	}
	return nil
}

// ReadManifest reads and verifies dir's checkpoint manifest; it returns
// (nil, nil) when there is none.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrCheckpoint, path, jsonmsg.Describe(data, err))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, env.Body); err != nil || sum(compact.Bytes()) != env.SHA256 {
		return nil, fmt.Errorf("%w: %s: checksum mismatch", ErrCheckpoint, path)
	}
	var m Manifest
	if err := json.Unmarshal(env.Body, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: body: %s", ErrCheckpoint, path, jsonmsg.Describe(env.Body, err))
	}
	if m.Version != ManifestVersion {
		return nil, fmt.Errorf("%w: %s: format version %d, this program reads %d", ErrCheckpoint, path, m.Version, ManifestVersion)
	}
	// The file must be exactly what batchprep writes for its content, so
	// that no damage (a lost final newline, edited spacing) goes unseen.
	// (The body is compared as the JSON text that was checksummed, not
	// re-encoded from Go values, which could round numbers.)
	if again, err := indentEnvelope(compact.Bytes()); err != nil || !bytes.Equal(again, data) {
		return nil, fmt.Errorf("%w: %s: not byte for byte what batchprep writes for its content (edited or damaged)", ErrCheckpoint, path)
	}
	return &m, nil
}

// readRef reads a file of the checkpoint and checks its size and digest.
func readRef(dir string, r FileRef) ([]byte, error) {
	path := filepath.Join(dir, r.File)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s names %s: %v", ErrCheckpoint, filepath.Join(dir, ManifestName), r.File, err)
	}
	if int64(len(data)) != r.Bytes {
		return nil, fmt.Errorf("%w: %s: %d bytes, the manifest says %d", ErrCheckpoint, path, len(data), r.Bytes)
	}
	if sum(data) != r.SHA256 {
		return nil, fmt.Errorf("%w: %s: SHA-256 differs from the manifest's (damaged, or another version of the file)", ErrCheckpoint, path)
	}
	return data, nil
}

// writeRef writes data as file name in dir, atomically, and describes it.
func writeRef(dir, name string, data []byte) (FileRef, error) {
	path := filepath.Join(dir, name)
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return FileRef{}, fmt.Errorf("train: writing checkpoint file %s: %w", path, err)
	}
	return FileRef{File: name, SHA256: sum(data), Bytes: int64(len(data))}, nil
}
