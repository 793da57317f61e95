package importer

import (
	"os"
	"path/filepath"
	"sort"

	"github.com/batchprep/batchprep/graph/config"
)

// missingDirs lists the directories above the store's paths (entity_path
// and every edge path) that do not exist yet: the import makes them for
// its staging directories, and removes them again when it fails, so that
// a failed import leaves nothing behind.
func missingDirs(cfg *config.Config) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range append([]string{cfg.EntityPath}, cfg.EdgePaths...) {
		for d := filepath.Dir(filepath.Clean(p)); !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			if _, err := os.Lstat(d); err == nil {
				break
			}
			out = append(out, d)
		}
	}
	return out
}

// removeMade removes the directories of dirs that are empty, deepest
// first (a directory something else has written into since is kept).
func removeMade(dirs []string) {
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		os.Remove(d)
	}
}
