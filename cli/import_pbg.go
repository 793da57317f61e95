package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/batchprep/batchprep/graph/pbg"
)

// importPBG converts PBG's data directories (import --from pbg).
func importPBG(env *Env, cfgPath string, sets, dirs []string, quiet bool) error {
	if cfgPath == "" {
		return usagef("--config is required")
	}
	if len(dirs) < 2 {
		return usagef("--from pbg needs PBG's entity directory, then one PBG edge directory per edge_paths entry")
	}
	cfg, err := loadConfig(env, cfgPath, sets)
	if err != nil {
		return err
	}
	if len(dirs)-1 != len(cfg.EdgePaths) {
		return usagef("%d PBG edge directories for %d edge_paths in %s (the i-th becomes edge set edge_paths[i])", len(dirs)-1, len(cfg.EdgePaths), cfgPath)
	}
	rep, err := pbg.Import(env.Ctx, cfg, dirs[0], dirs[1:])
	if err != nil {
		return err
	}
	if !quiet {
		var edges int64
		for _, n := range rep.Edges {
			edges += n
		}
		types := make([]string, 0, len(rep.Entities))
		for t, n := range rep.Entities {
			types = append(types, fmt.Sprintf("%s %d", t, n))
		}
		sort.Strings(types)
		fmt.Fprintf(env.Stderr, "import: %d edges in %d edge sets from PBG's files, entities: %s\n", edges, len(rep.Edges), strings.Join(types, ", "))
		L, R := cfg.BucketShape()
		for i, n := range rep.Edges {
			fmt.Fprintf(env.Stderr, "  edge set %d %s: %d edges from %s (%d of %d bucket files present, weights %v)\n",
				i, cfg.EdgePaths[i], n, dirs[1+i], rep.Buckets[i], L*R, rep.Weights[i])
		}
	}
	if n := len(rep.Removed); n > 0 {
		fmt.Fprintf(env.Stderr, "batchprep import: removed %d directories left by an interrupted import: %s\n", n, strings.Join(rep.Removed, ", "))
	}
	return nil
}
