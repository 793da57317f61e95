package cli

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/pbg"
)

// importPBG converts PBG's data directories (import --from pbg). Without
// directories, or with the config's own entity_path and edge_paths, the
// PBG data the config names are converted into the store beside
// entity_path that the other commands read (usePBGData).
func importPBG(env *Env, cfgPath string, sets, dirs []string, quiet bool) error {
	if cfgPath == "" {
		return usagef("--config is required")
	}
	cfg, err := loadConfigAsWritten(env, cfgPath, sets)
	if err != nil {
		return err
	}
	if len(dirs) == 0 || sameDirs(dirs, append([]string{cfg.EntityPath}, cfg.EdgePaths...)) {
		return importPBGInPlace(env, cfgPath, cfg, quiet)
	}
	if len(dirs) < 2 {
		return usagef("--from pbg needs PBG's entity directory, then one PBG edge directory per edge_paths entry (or no directory: the PBG data the config names)")
	}
	if len(dirs)-1 != len(cfg.EdgePaths) {
		return usagef("%d PBG edge directories for %d edge_paths in %s (the i-th becomes edge set edge_paths[i])", len(dirs)-1, len(cfg.EdgePaths), cfgPath)
	}
	rep, err := pbg.Import(env.Ctx, cfg, dirs[0], dirs[1:])
	if err != nil {
		return err
	}
	if !quiet {
		printPBGImport(env, cfg, rep, dirs[1:])
	}
	if n := len(rep.Removed); n > 0 {
		fmt.Fprintf(env.Stderr, "batchprep import: removed %d directories left by an interrupted import: %s\n", n, strings.Join(rep.Removed, ", "))
	}
	return nil
}

// importPBGInPlace converts the PBG data cfg names into the store beside
// entity_path, or says it is already converted.
func importPBGInPlace(env *Env, cfgPath string, cfg *config.Config, quiet bool) error {
	if !pbg.IsData(cfg) {
		return fmt.Errorf("%s: entity_path %s and edge_paths hold no PyTorch-BigGraph data (entity_count_*.txt files and edges_{lhs}_{rhs}.h5 buckets): give PBG's directories after --from pbg",
			cfgPath, cfg.EntityPath)
	}
	mc, rep, err := pbg.EnsureMirror(env.Ctx, cfg)
	if err != nil {
		return err
	}
	if !rep.Built {
		if !quiet {
			fmt.Fprintf(env.Stderr, "import: the store %s is the conversion of PBG's files as they are now: nothing to do\n", rep.Dir)
		}
		return nil
	}
	if !quiet {
		fmt.Fprintf(env.Stderr, "import: PBG's data in %s converted into the store %s (%s); train, eval, export and plan with %s read it\n",
			cfg.EntityPath, rep.Dir, rep.Reason, cfgPath)
		printPBGImport(env, mc, rep.Import, cfg.EdgePaths)
	}
	return nil
}

// printPBGImport prints what was converted.
func printPBGImport(env *Env, cfg *config.Config, rep *pbg.ImportReport, edgeDirs []string) {
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
			i, cfg.EdgePaths[i], n, edgeDirs[i], rep.Buckets[i], L*R, rep.Weights[i])
	}
}

// sameDirs reports whether a and b name the same directories in order.
func sameDirs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, err1 := filepath.Abs(a[i])
		y, err2 := filepath.Abs(b[i])
		if err1 != nil || err2 != nil || x != y {
			return false
		}
	}
	return true
}
