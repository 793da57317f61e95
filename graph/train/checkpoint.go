package train

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
		data := encodeTable(tab)
		ref, err := writeRef(t.dir, fmt.Sprintf("emb_%d_%d.v%d.bin", k.typ, k.part, seq), data)
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
	if err := writeManifest(t.dir, &nm); err != nil {
		return err
	}
	t.man = &nm
	clear(t.dirty)
	return t.removeStray()
}

// dataFile matches the names of the files checkpoints write.
var dataFile = regexp.MustCompile(`^(emb_\d+_\d+|model)\.v\d+\.bin$`)

// removeStray deletes the checkpoint files the manifest does not name
// (superseded ones, and those of a checkpoint interrupted before its
// manifest was written), and the temporaries of data-file writes a kill
// interrupted (.NAME.tmp-*: each data file name is written once, so no
// later write of the same name would remove them).
func (t *Trainer) removeStray() error {
	keep := map[string]bool{t.man.Model.File: true}
	for _, r := range t.man.Tables {
		keep[r.File] = true
	}
	ents, err := os.ReadDir(t.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if n, i := e.Name(), strings.Index(e.Name(), ".tmp-"); strings.HasPrefix(n, ".") && i > 1 && dataFile.MatchString(n[1:i]) {
			os.Remove(filepath.Join(t.dir, n))
			continue
		}
		if dataFile.MatchString(e.Name()) && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(t.dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
