package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/export"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/internal/plural"
)

// verifyCheckpoint checks the checkpoint in dir (every file against the
// manifest, the training log against the manifest) and, with a config
// and its store, that the checkpoint was made with that config.
func verifyCheckpoint(rep *verifyReport, dir string, cfg *config.Config, store *edgestore.Store) {
	c := train.VerifyCheckpoint(dir)
	for _, p := range c.Problems {
		rep.problem(p)
	}
	for _, n := range c.Notes {
		rep.note("%s", n)
	}
	if c.Manifest == nil {
		// No manifest: the log must have no line (VerifyCheckpoint checks
		// it against the manifest otherwise).
		if err := train.CheckLog(filepath.Join(dir, train.LogName), nil); err != nil {
			rep.problem(err)
		}
		return
	}
	if cfg != nil && store != nil {
		if diff := train.DiffFingerprints(c.Manifest.Fingerprint, train.Fingerprint(cfg, store.Fingerprint())); len(diff) > 0 {
			rep.problem(fmt.Errorf("%s was made with a different config:\n           %s", dir, strings.Join(diff, "\n           ")))
			return
		}
	}
	if len(c.Problems) == 0 {
		m := c.Manifest
		state := fmt.Sprintf("at epoch %d, bucket %d of its pass", m.Next.Epoch+1, m.Next.Index)
		if m.Done {
			state = "finished"
		}
		fit := ""
		if cfg != nil && store != nil {
			fit = ", made with this config and store"
		}
		rep.ok("%s: checkpoint sound: %s and the model match the manifest (checkpoint number %d), %s trained, %s%s",
			dir, plural.Count(len(m.Tables), "table"), m.Seq, plural.Count(m.Buckets, "bucket"), state, fit)
	}
}

// verifyExport checks a binary export file (batchprep export --format
// binary): its checksum and its layout.
func verifyExport(rep *verifyReport, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		rep.problem(err)
		return
	}
	m, err := export.Decode(data)
	if err != nil {
		rep.problem(fmt.Errorf("%s: %w", path, err))
		return
	}
	n := 0
	for _, t := range m.Types {
		n += len(t.Names)
	}
	rep.ok("%s: a sound embeddings export: %s, %s, %s", path, plural.Count(len(m.Types), "type"), plural.Count(n, "entity", "entities"),
		plural.Count(len(m.Relations), "relation parameter set"))
}
