package pbg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"syscall"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/internal/atomicfile"
)

// A config written for PBG names PBG's imported data as its entity_path
// and edge_paths. Those directories are left as they are: the data are
// converted once into a batchprep store beside them (MirrorDir), which is
// reused while PBG's files keep their names, sizes and modification times
// (recorded in MirrorRecordName) and rebuilt when they change (invariant
// 7).

// MirrorRecordName is the file in MirrorDir that records the PBG files a
// store was converted from.
const MirrorRecordName = "pbg-source.json"

// MirrorSuffix is appended to entity_path to name MirrorDir.
const MirrorSuffix = ".batchprep"

// pbgEntityFile matches the files of PBG's entity directory that a store
// is made from; pbgBucketFile its bucket files.
var (
	pbgEntityFile = regexp.MustCompile(`^(entity_count_.+_[0-9]+\.txt|entity_names_.+_[0-9]+\.json|dynamic_rel_count\.txt|dynamic_rel_names\.json)$`)
	pbgBucketFile = regexp.MustCompile(`^edges_[0-9]+_[0-9]+\.h5$`)
)

// IsData reports whether cfg's entity_path and edge_paths hold PBG's
// imported data rather than a batchprep store: entity_path has PBG's
// entity_count_*.txt files, some edge_paths directory has PBG's
// edges_{lhs}_{rhs}.h5 buckets, and none has a batchprep edge set's
// manifest.
func IsData(cfg *config.Config) bool {
	counts, _ := filepath.Glob(filepath.Join(cfg.EntityPath, "entity_count_*.txt"))
	if len(counts) == 0 {
		return false
	}
	buckets := false
	for _, p := range cfg.EdgePaths {
		if _, err := os.Stat(filepath.Join(p, edgestore.EdgeManifestName)); err == nil {
			return false
		}
		ents, _ := os.ReadDir(p)
		for _, e := range ents {
			buckets = buckets || pbgBucketFile.MatchString(e.Name())
		}
	}
	return buckets
}

// MirrorDir is where the store converted from cfg's PBG data lives:
// entity_path with MirrorSuffix appended ("data/FB15k" gives
// "data/FB15k.batchprep"), beside PBG's directory rather than in it.
func MirrorDir(cfg *config.Config) (string, error) {
	abs, err := filepath.Abs(cfg.EntityPath)
	if err != nil {
		return "", err
	}
	if filepath.Dir(abs) == abs {
		return "", fmt.Errorf("pbg: entity_path %s: the store converted from PBG's data is written beside entity_path, which cannot be the root", cfg.EntityPath)
	}
	return abs + MirrorSuffix, nil
}

// MirrorConfig is cfg with entity_path and edge_paths moved into dir:
// dir/entities, and dir/edges/{name} for each edge path (the last element
// of its path, so that edge sets keep their names), or
// dir/edges/{i}/{name} for all when two edge paths share a name.
func MirrorConfig(cfg *config.Config, dir string) *config.Config {
	c := *cfg
	c.EntityPath = filepath.Join(dir, "entities")
	c.EdgePaths = make([]string, len(cfg.EdgePaths))
	seen, dup := map[string]bool{}, false
	for _, s := range cfg.EdgeSets() {
		dup = dup || seen[s.Name]
		seen[s.Name] = true
	}
	for i, s := range cfg.EdgeSets() {
		if dup {
			c.EdgePaths[i] = filepath.Join(dir, "edges", fmt.Sprint(i), s.Name)
		} else {
			c.EdgePaths[i] = filepath.Join(dir, "edges", s.Name)
		}
	}
	return &c
}

// fileStamp is what is recorded of one of PBG's files.
type fileStamp struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
}

// mirrorRecord is MirrorRecordName's content.
type mirrorRecord struct {
	Version     int         `json:"version"`
	Files       []fileStamp `json:"files"`
	Fingerprint string      `json:"store_fingerprint"`
}

// stamps lists PBG's files that the store is made from, by path.
func stamps(cfg *config.Config) ([]fileStamp, error) {
	var out []fileStamp
	add := func(dir string, match *regexp.Regexp) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("pbg: %w", err)
		}
		for _, e := range ents {
			if !match.MatchString(e.Name()) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				return fmt.Errorf("pbg: %w", err)
			}
			abs, _ := filepath.Abs(filepath.Join(dir, e.Name()))
			out = append(out, fileStamp{Path: abs, Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()})
		}
		return nil
	}
	if err := add(cfg.EntityPath, pbgEntityFile); err != nil {
		return nil, err
	}
	for _, p := range cfg.EdgePaths {
		if err := add(p, pbgBucketFile); err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// MirrorReport says what EnsureMirror did.
type MirrorReport struct {
	Dir    string        // MirrorDir
	Built  bool          // converted now (else reused)
	Reason string        // why it was converted
	Import *ImportReport // when Built
}

// EnsureMirror returns the config of the store converted from cfg's PBG
// data (MirrorConfig), converting it first when there is none yet, when
// PBG's files changed since (names, sizes or modification times), or when
// the store no longer opens as it was written (another config's entities
// or relations, or a store changed by hand).
func EnsureMirror(ctx context.Context, cfg *config.Config) (*config.Config, *MirrorReport, error) {
	dir, err := MirrorDir(cfg)
	if err != nil {
		return nil, nil, err
	}
	mc := MirrorConfig(cfg, dir)
	now, err := stamps(cfg)
	if err != nil {
		return nil, nil, err
	}
	// Processes started together on one config (the ranks of a
	// distributed run) convert one at a time: the others wait, then find
	// the store converted.
	unlock, err := lockMirror(dir)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	rep := &MirrorReport{Dir: dir}
	rep.Reason = mirrorStale(mc, filepath.Join(dir, MirrorRecordName), now)
	if rep.Reason == "" {
		return mc, rep, nil
	}
	if rep.Import, err = Import(ctx, mc, cfg.EntityPath, cfg.EdgePaths); err != nil {
		return nil, nil, err
	}
	st, err := edgestore.Open(mc)
	if err != nil {
		return nil, nil, err
	}
	rec := mirrorRecord{Version: 1, Files: now, Fingerprint: st.Fingerprint()}
	st.Close()
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	if err := atomicfile.Write(filepath.Join(dir, MirrorRecordName), append(b, '\n'), 0o644); err != nil {
		return nil, nil, fmt.Errorf("pbg: writing %s: %w", filepath.Join(dir, MirrorRecordName), err)
	}
	rep.Built = true
	return mc, rep, nil
}

// MirrorLockName is the file in MirrorDir that a conversion locks.
const MirrorLockName = "pbg-convert.lock"

// lockMirror waits for and takes the conversion lock of dir (flock; it
// dies with its process).
func lockMirror(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pbg: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, MirrorLockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pbg: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("pbg: locking %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

// mirrorStale says why the store of mc must be converted again, or ""
// when it is the conversion of PBG's files as they are now.
func mirrorStale(mc *config.Config, recPath string, now []fileStamp) string {
	b, err := os.ReadFile(recPath)
	if errors.Is(err, os.ErrNotExist) {
		return "no store converted from them yet"
	}
	var rec mirrorRecord
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err != nil || dec.Decode(&rec) != nil || rec.Version != 1 {
		return fmt.Sprintf("%s is unreadable", recPath)
	}
	if !reflect.DeepEqual(rec.Files, now) {
		return "PBG's files changed since the last conversion" + stampChange(rec.Files, now)
	}
	st, err := edgestore.Open(mc)
	if err != nil {
		return fmt.Sprintf("the converted store does not open (%v)", err)
	}
	defer st.Close()
	if st.Fingerprint() != rec.Fingerprint {
		return "the converted store was changed since it was written"
	}
	return ""
}

// stampChange names the first file that differs between two listings.
func stampChange(old, now []fileStamp) string {
	was := map[string]fileStamp{}
	for _, s := range old {
		was[s.Path] = s
	}
	for _, s := range now {
		o, ok := was[s.Path]
		switch {
		case !ok:
			return fmt.Sprintf(" (%s is new)", s.Path)
		case o.Size != s.Size:
			return fmt.Sprintf(" (%s: %d bytes, was %d)", s.Path, s.Size, o.Size)
		case o.MtimeNs != s.MtimeNs:
			return fmt.Sprintf(" (%s was modified)", s.Path)
		}
		delete(was, s.Path)
	}
	for p := range was {
		return fmt.Sprintf(" (%s is gone)", p)
	}
	return ""
}
