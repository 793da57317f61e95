package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

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
	man := t.man
	if t.last != nil {
		man = t.last // the committed manifest, during Run
	}
	keep := named(man)
	own := ownVersions(t.dir)
	own[man.Seq+1] = true
	gone := map[string]bool{}
	for _, f := range man.Superseded {
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
