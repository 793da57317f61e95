package train

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Check is the result of VerifyCheckpoint: the manifest when it could be
// read, every problem found (each naming its file and what is wrong), and
// notes on files that are harmless (superseded files and temporaries of an
// interrupted checkpoint, which the next run removes).
type Check struct {
	Manifest *Manifest
	Problems []error
	Notes    []string
}

// VerifyCheckpoint checks the checkpoint in dir without training: the
// manifest's own checksum and version, then every file it names (present,
// its size and SHA-256, a table or model file that decodes, a table with
// the rows the manifest records, one dimension for all tables), then the
// training log beside it (CheckLog). A directory with checkpoint files but
// no manifest is a problem (the manifest was lost), unless they are only
// partition files of number 1 (the first checkpoint is not committed yet:
// a note); one with neither holds no checkpoint yet (a note). While a run trains in dir, the check is of
// one commit: when it finds problems and the manifest changed meanwhile,
// it checks the new commit (as ReadConsistent does).
func VerifyCheckpoint(dir string) Check {
	for attempt := 1; ; attempt++ {
		c := verifyOnce(dir)
		if c.Manifest != nil {
			if err := CheckLog(filepath.Join(dir, LogName), c.Manifest); err != nil {
				c.Problems = append(c.Problems, err)
			}
		}
		if len(c.Problems) == 0 || c.Manifest == nil || attempt >= readAttempts {
			return c
		}
		if now, err := ReadManifest(dir); err != nil || now == nil || sameCheckpoint(c.Manifest, now) {
			return c
		}
	}
}

// verifyOnce is VerifyCheckpoint of the manifest on disk now, without
// the log.
func verifyOnce(dir string) Check {
	var c Check
	man, err := ReadManifest(dir)
	switch {
	case err != nil:
		c.Problems = append(c.Problems, err)
		return c
	case man == nil:
		// Files of a checkpoint without the manifest that names them: it
		// was deleted or lost. Only partition files of number 1: the first
		// checkpoint is not committed yet (partitions that left memory
		// before it, W6; its model file is written last, just before the
		// manifest). No files at all: no checkpoint yet (a run stopped
		// before its first bucket ended).
		ents, _ := os.ReadDir(dir)
		var first string
		for _, e := range ents {
			n := e.Name()
			if !dataFile.MatchString(n) {
				continue
			}
			if strings.HasPrefix(n, "emb_") && fileVersion(n) == 1 {
				first = n
				continue
			}
			c.Problems = append(c.Problems, fmt.Errorf("%w: %s: no %s, but checkpoint files such as %s: the manifest was lost", ErrCheckpoint, dir, ManifestName, n))
			return c
		}
		if first != "" {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: no checkpoint yet: the first one is not committed (partition files such as %s are written before it; the next run removes them)", dir, first))
			return c
		}
		c.Notes = append(c.Notes, fmt.Sprintf("%s: no checkpoint yet (no %s and no checkpoint files)", dir, ManifestName))
		return c
	}
	c.Manifest = man
	dim := -1
	for _, r := range man.Tables {
		data, err := readRef(dir, r.FileRef)
		if err != nil {
			c.Problems = append(c.Problems, err)
			continue
		}
		tab, err := decodeTable(data)
		switch {
		case err != nil:
			c.Problems = append(c.Problems, fmt.Errorf("%w: %s: %v", ErrCheckpoint, filepath.Join(dir, r.File), err))
		case tab.Rows != r.Rows:
			c.Problems = append(c.Problems, fmt.Errorf("%w: %s: %d rows, the manifest says %d", ErrCheckpoint, filepath.Join(dir, r.File), tab.Rows, r.Rows))
		case dim >= 0 && tab.Dim != dim:
			c.Problems = append(c.Problems, fmt.Errorf("%w: %s: dimension %d, other tables have %d", ErrCheckpoint, filepath.Join(dir, r.File), tab.Dim, dim))
		default:
			dim = tab.Dim
		}
	}
	if man.Model.File == "" {
		c.Problems = append(c.Problems, fmt.Errorf("%w: %s: names no model file", ErrCheckpoint, filepath.Join(dir, ManifestName)))
	} else if data, err := readRef(dir, man.Model); err != nil {
		c.Problems = append(c.Problems, err)
	} else if err := checkModelFile(data); err != nil {
		c.Problems = append(c.Problems, fmt.Errorf("%w: %s: %v", ErrCheckpoint, filepath.Join(dir, man.Model.File), err))
	}
	named := map[string]bool{man.Model.File: true}
	for _, r := range man.Tables {
		named[r.File] = true
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		switch n := e.Name(); {
		case dataFile.MatchString(n) && !named[n]:
			c.Notes = append(c.Notes, fmt.Sprintf("%s: not part of the checkpoint (superseded, or written by an interrupted checkpoint); the next train removes it if a run of this directory wrote it, else reports it", filepath.Join(dir, n)))
		case strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp-"):
			c.Notes = append(c.Notes, fmt.Sprintf("%s: temporary file of an interrupted write; the next train removes it if a run of this directory wrote it", filepath.Join(dir, n)))
		}
	}
	return c
}

// checkModelFile checks a model file's structure without the config that
// gives its layout: the magic, then the vectors it counts, each complete,
// and nothing after them.
func checkModelFile(b []byte) error {
	if len(b) < 12 || string(b[:8]) != modelMagic {
		return fmt.Errorf("not a model file")
	}
	n := binary.LittleEndian.Uint32(b[8:])
	b = b[12:]
	for i := range n {
		if len(b) < 4 {
			return fmt.Errorf("model file truncated at vector %d of %d", i, n)
		}
		k := uint64(binary.LittleEndian.Uint32(b))
		if uint64(len(b)-4) < 8*k {
			return fmt.Errorf("model file vector %d: %d values do not fit in the %d bytes left", i, k, len(b)-4)
		}
		b = b[4+8*k:]
	}
	if len(b) != 0 {
		return fmt.Errorf("model file has %d trailing bytes", len(b))
	}
	return nil
}
