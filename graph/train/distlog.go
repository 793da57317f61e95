package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/batchprep/batchprep/graph"
)

// claimLine is the log line of a claim, written before its bucket is
// trained.
type claimLine struct {
	Kind  string `json:"kind"`
	Rank  int    `json:"rank"`
	Pass  int    `json:"pass"`
	Claim int64  `json:"claim"`
	Position
	Bucket graph.Bucket `json:"bucket"`
}

func (d *distRun) log(ev DistEvent) { d.logLine(ev) }

// logLine writes one line with one write (the log is shared by the ranks
// and opened for appending).
func (d *distRun) logLine(v any) {
	if d.o.Log == nil {
		return
	}
	line, _ := json.Marshal(v)
	d.o.Log.Write(append(line, '\n'))
}

// finalManifest reads the manifest a finished run left, refusing one that
// names a missing file: success is never reported over missing files.
func finalManifest(dir string) (*Manifest, error) {
	man, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if man == nil {
		return nil, fmt.Errorf("%w: %s: the run ended but the directory holds no %s", ErrCheckpoint, dir, ManifestName)
	}
	refs := []FileRef{man.Model}
	for _, r := range man.Tables {
		refs = append(refs, r.FileRef)
	}
	for _, r := range refs {
		if r.File == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, r.File)); err != nil {
			return nil, fmt.Errorf("%w: %s names %s: %v", ErrCheckpoint, filepath.Join(dir, ManifestName), r.File, err)
		}
	}
	return man, nil
}
