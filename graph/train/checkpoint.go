package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

// checkpoint commits the state after a bucket (invariant 4): the
// partitions the bucket changed and the model go to new files named with
// the next sequence number, each written atomically; then the manifest,
// naming them with their SHA-256 and the position next, replaces the old
// one atomically; only then are the files no manifest names removed. A
// crash at any point leaves the old or the new checkpoint, whole. A failed
// write (a full disk) removes the files this checkpoint wrote, which the
// old manifest does not name.
func (t *Trainer) checkpoint(next Position) (err error) {
	defer func() {
		if err != nil {
			t.removeStray()
		}
	}()
	seq := t.man.Seq + 1
	nm := *t.man
	nm.Seq, nm.Next = seq, next
	nm.Done = next.Epoch >= t.cfg.NumEpochs
	nm.Tables = append([]TableRef(nil), t.man.Tables...)
	for k, tab := range t.tables {
		if !t.dirty[k] {
			continue
		}
		ref, err := writeTableRef(t.dir, fmt.Sprintf("emb_%d_%d.v%d.bin", k.typ, k.part, seq), tab)
		if err != nil {
			return err
		}
		nm.IO.Saves++
		nm.IO.SaveBytes += ref.Bytes
		tr := TableRef{Type: t.types[k.typ], Partition: k.part, Rows: tab.Rows, FileRef: ref}
		replaced := false
		for i := range nm.Tables {
			if nm.Tables[i].Type == tr.Type && nm.Tables[i].Partition == tr.Partition {
				nm.Tables[i], replaced = tr, true
			}
		}
		if !replaced {
			nm.Tables = append(nm.Tables, tr)
		}
	}
	ref, err := writeRef(t.dir, fmt.Sprintf("model.v%d.bin", seq), encodeModel(t.m))
	if err != nil {
		return err
	}
	nm.Model = ref
	nm.Superseded = nil
	keep := named(&nm)
	for f := range named(t.man) {
		if !keep[f] {
			nm.Superseded = append(nm.Superseded, f)
		}
	}
	sort.Strings(nm.Superseded)
	if err := writeManifest(t.dir, &nm); err != nil {
		return err
	}
	old := t.man
	t.man = &nm
	clear(t.dirty)
	return removeSuperseded(t.dir, old, &nm)
}

// removeSuperseded deletes the files manifest old names and new does not:
// a checkpoint of this directory wrote them, and the new one replaced
// them.
func removeSuperseded(dir string, old, new *Manifest) error {
	keep := named(new)
	for f := range named(old) {
		if keep[f] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// named is the set of files manifest m names.
func named(m *Manifest) map[string]bool {
	keep := map[string]bool{}
	if m.Model.File != "" {
		keep[m.Model.File] = true
	}
	for _, r := range m.Tables {
		keep[r.File] = true
	}
	return keep
}

// dataFile matches the names of the files checkpoints write.
var dataFile = regexp.MustCompile(`^(emb_\d+_\d+|model)\.v\d+\.bin$`)

// removeStray deletes the checkpoint files the manifest does not name
// (superseded ones, and those of a checkpoint interrupted before its
// manifest was written), and the temporaries of data-file writes a kill
// interrupted (.NAME.tmp-*: each data file name is written once, so no
// later write of the same name would remove them) — but only files a run
// of this directory wrote: of the next checkpoint's number (the one an
// interrupted checkpoint was writing), or of a number the training log
// records (ownVersions). Any other such file is left alone and reported
// through Options.Note: it came from elsewhere.
func (t *Trainer) removeStray() error {
	keep := named(t.man)
	own := ownVersions(t.dir)
	own[t.man.Seq+1] = true
	gone := map[string]bool{}
	for _, f := range t.man.Superseded {
		gone[f] = true
	}
	ents, err := os.ReadDir(t.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		base, temp := dataFileOf(n)
		if base == "" || (!temp && keep[n]) {
			continue
		}
		if !own[fileVersion(base)] && !(gone[n] && !temp) {
			if t.opts.Note != nil {
				t.opts.Note(fmt.Sprintf("%s: not part of the checkpoint and not written by a run of this directory (its training log does not name version %d): left alone; delete it if it is not needed",
					filepath.Join(t.dir, n), fileVersion(base)))
			}
			continue
		}
		if err := os.Remove(filepath.Join(t.dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
