package edgestore

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
)

// The hidden directories a Writer makes beside a target directory NAME:
// .NAME.batchprep-tmp-* holds the staged new data, .NAME.batchprep-old-*
// the replaced data until the commit ends. Both are removed when a write
// ends, whatever the outcome; only a killed process leaves them.
const (
	tmpInfix = ".batchprep-tmp-"
	oldInfix = ".batchprep-old-"
)

// Leftovers lists the staging directories that interrupted imports left
// beside the targets of cfg (entity_path and every edge_paths[i]), sorted.
// They are never read; a successful import removes them (invariant 8).
func Leftovers(cfg *config.Config) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, target := range append([]string{cfg.EntityPath}, cfg.EdgePaths...) {
		clean := filepath.Clean(target)
		parent, base := filepath.Dir(clean), filepath.Base(clean)
		ents, err := os.ReadDir(parent)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, &Error{Path: parent, Err: err}
		}
		for _, e := range ents {
			n := e.Name()
			if !e.IsDir() || !(strings.HasPrefix(n, "."+base+tmpInfix) || strings.HasPrefix(n, "."+base+oldInfix)) {
				continue
			}
			p := filepath.Join(parent, n)
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
