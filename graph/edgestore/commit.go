package edgestore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// This file holds the last step of a write: Commit (manifests, fsync, the
// swaps into place) and Abort.

// Commit writes the manifests and moves the staged directories into place
// (invariant 6). On an error it puts back the old directories it had moved
// and removes the staged ones.
func (w *Writer) Commit() error {
	if w.done {
		return fmt.Errorf("edgestore: Commit after Commit or Abort")
	}
	err := w.commit()
	if errors.Is(err, errSimulatedCrash) {
		w.done = true
		return err
	}
	if err != nil {
		w.Abort()
	}
	return err
}

func (w *Writer) commit() error {
	for _, t := range w.cfg.EntityTypes() {
		if _, ok := w.entCounts[t]; !ok {
			return fmt.Errorf("edgestore: entities of type %q were not written", t)
		}
	}
	if !w.relNames {
		return fmt.Errorf("edgestore: relation names were not written")
	}
	for s, st := range w.sets {
		if !st.started {
			return fmt.Errorf("edgestore: edge set %d was not written", s)
		}
		for i, ok := range st.closed {
			if !ok {
				return fmt.Errorf("edgestore: bucket (%d,%d) of edge set %d was not written", i/w.rhs, i%w.rhs, s)
			}
		}
	}
	if err := w.hook("manifests"); err != nil {
		return err
	}
	sort.Slice(w.entFiles, func(i, j int) bool { return w.entFiles[i].Name < w.entFiles[j].Name })
	em := EntityManifest{Format: entityFormat, Version: Version, StorageFingerprint: w.cfg.StorageFingerprint(),
		DynamicRelations: w.cfg.DynamicRelations, NumRelations: w.numRels, Entities: w.entCounts, Files: w.entFiles}
	emBytes := encodeManifest(em)
	if _, err := w.writeFile(w.ent.tmp, EntityManifestName, func(wr io.Writer) error { _, err := wr.Write(emBytes); return err }); err != nil {
		return err
	}
	entID := sha256.Sum256(emBytes)
	for _, st := range w.sets {
		var total int64
		for _, b := range st.buckets {
			total += b.Edges
		}
		m := EdgeManifest{Format: edgeFormat, Version: Version, StorageFingerprint: w.cfg.StorageFingerprint(),
			EntitiesID: hex.EncodeToString(entID[:]), Partitions: [2]int{w.lhs, w.rhs}, Weights: st.weights,
			Columns: Columns(st.weights), Source: st.source, SourceColumns: st.columns, Edges: total, Buckets: st.buckets}
		mb := encodeManifest(m)
		if _, err := w.writeFile(st.tmp, EdgeManifestName, func(wr io.Writer) error { _, err := wr.Write(mb); return err }); err != nil {
			return err
		}
	}
	if err := w.syncPending(); err != nil {
		return err
	}
	targets := []*target{&w.ent}
	for _, st := range w.sets {
		targets = append(targets, &st.target)
	}
	for _, t := range targets {
		if w.opts.NoSync {
			break
		}
		if err := syncDir(t.tmp); err != nil {
			return err
		}
	}
	// Every rename is logged so that an error can undo them all.
	var moves [][2]string
	var olds []string
	move := func(from, to string) error {
		if err := os.Rename(from, to); err != nil {
			return &Error{Path: from, Err: err}
		}
		moves = append(moves, [2]string{from, to})
		return nil
	}
	fail := func(err error) error {
		if errors.Is(err, errSimulatedCrash) {
			return err // leave everything as a crash would
		}
		for i := len(moves) - 1; i >= 0; i-- {
			os.Rename(moves[i][1], moves[i][0])
		}
		for _, o := range olds {
			os.RemoveAll(o) // emptied by the undo
		}
		return err
	}
	reserve := func(path string) (string, error) {
		d, err := os.MkdirTemp(filepath.Dir(filepath.Clean(path)), "."+filepath.Base(path)+oldInfix)
		if err != nil {
			return "", &Error{Path: path, Err: err}
		}
		olds = append(olds, d)
		return d, nil
	}

	// 1. entity_path, file by file: it may hold other files (PBG's examples
	// keep the edge directories and the input there), which are never
	// touched. The manifest goes first (old) and last (new), so that a
	// crash in between leaves a directory without manifest, which Open
	// refuses; the replaced files wait in .NAME.batchprep-old-*.
	if err := w.hook("rename entity_path"); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(w.ent.path, 0o755); err != nil {
		return fail(&Error{Path: w.ent.path, Err: err})
	}
	oldEnt, err := reserve(w.ent.path)
	if err != nil {
		return fail(err)
	}
	newNames := map[string]bool{EntityManifestName: true}
	for _, f := range w.entFiles {
		newNames[f.Name] = true
	}
	var stale []string
	manifest := filepath.Join(w.ent.path, EntityManifestName)
	if b, err := os.ReadFile(manifest); err == nil {
		if m, err := DecodeEntityManifest(b); err == nil {
			for _, f := range m.Files {
				if !newNames[f.Name] {
					stale = append(stale, f.Name)
				}
			}
		}
		if err := move(manifest, filepath.Join(oldEnt, EntityManifestName)); err != nil {
			return fail(err)
		}
	}
	replace := func(name string, staged bool) error {
		dst := filepath.Join(w.ent.path, name)
		if _, err := os.Lstat(dst); err == nil {
			if err := move(dst, filepath.Join(oldEnt, name)); err != nil {
				return err
			}
		}
		if staged {
			return move(filepath.Join(w.ent.tmp, name), dst)
		}
		return nil
	}
	for _, f := range w.entFiles {
		if err := w.hook("entity file " + f.Name); err != nil {
			return fail(err)
		}
		if err := replace(f.Name, true); err != nil {
			return fail(err)
		}
	}
	for _, name := range stale {
		if err := replace(name, false); err != nil {
			return fail(err)
		}
	}
	if err := w.hook("entity manifest"); err != nil {
		return fail(err)
	}
	if err := move(filepath.Join(w.ent.tmp, EntityManifestName), manifest); err != nil {
		return fail(err)
	}
	if err := syncDir(w.ent.path); err != nil {
		return fail(err)
	}

	// 2. Each edge set directory (only batchprep files inside) is swapped
	// whole: old -> hidden name, staged -> target.
	for _, st := range w.sets {
		t := &st.target
		if err := w.hook("rename " + t.key); err != nil {
			return fail(err)
		}
		if _, err := os.Stat(t.path); err == nil {
			d, err := reserve(t.path)
			if err != nil {
				return fail(err)
			}
			// os.Rename refuses an existing directory as the destination:
			// free the reserved name, then move the old data there.
			os.Remove(d)
			if err := move(t.path, d); err != nil {
				return fail(err)
			}
		}
		if err := move(t.tmp, t.path); err != nil {
			return fail(err)
		}
		if err := syncDir(filepath.Dir(filepath.Clean(t.path))); err != nil {
			return fail(err)
		}
	}
	w.done = true
	if err := w.hook("cleanup"); err != nil {
		return err
	}
	for _, o := range olds {
		os.RemoveAll(o)
	}
	os.RemoveAll(w.ent.tmp) // empty now
	// The new store is in place: what interrupted imports left beside it
	// is of no use any more (invariant 8).
	for _, d := range w.leftovers {
		if os.RemoveAll(d) == nil {
			w.removed = append(w.removed, d)
		}
	}
	return nil
}

// Removed lists the leftover directories of interrupted imports that a
// successful Commit removed.
func (w *Writer) Removed() []string { return w.removed }

// Abort removes the staging directories. It is safe to call more than once
// and after Commit.
func (w *Writer) Abort() error {
	var first error
	for _, d := range append([]string{w.ent.tmp}, w.setTmps()...) {
		if d == "" {
			continue
		}
		if err := os.RemoveAll(d); err != nil && first == nil {
			first = err
		}
	}
	w.done = true
	return first
}

func (w *Writer) setTmps() []string {
	var d []string
	for _, s := range w.sets {
		d = append(d, s.tmp)
	}
	return d
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return &Error{Path: dir, Err: err}
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return &Error{Path: dir, Err: err}
	}
	return nil
}

// syncPending fsyncs every written file, several at a time: the waits for
// the disk overlap (one fsync per file in turn cost seconds for the 256
// buckets of 16 partitions).
func (w *Writer) syncPending() error {
	if w.opts.NoSync {
		w.pending = nil
		return nil
	}
	paths := w.pending
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f, err := os.Open(p)
			if err == nil {
				err = f.Sync()
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				errs[i] = &Error{Path: p, Err: err}
			}
		}()
	}
	wg.Wait()
	w.pending = nil
	return errors.Join(errs...)
}
