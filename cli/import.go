package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/internal/plural"
)

const importDescription = `
Import edge lists into the partitioned edge store named by a PyTorch-BigGraph
config (keys: docs/config.md; paths in it are relative to its directory).
The i-th FILE becomes edge set edge_paths[i], with the role edge_roles[i]
(train, valid or test); all files share one entity dictionary. Columns are
0-based; without --rel-col every edge has relation 0. Lines that are empty or
start with '#' are skipped and not counted in edge ordinals. Bad lines are
reported with file, line and column; up to --max-errors of them are skipped,
one more fails the import. The store is replaced atomically: an error or an
interruption (Ctrl-C exits 130, SIGTERM 143) leaves the previous store as it
was; directories a killed import left beside the store are removed by the
next successful one.

--from pbg converts PyTorch-BigGraph's imported data instead: the first
argument is PBG's entity_path directory, then one PBG edge directory
(edges_{lhs}_{rhs}.h5 files) per edge_paths[i]; partitions, offsets and
relation ids are kept (docs/formats-pbg.md).

Examples:
  batchprep import --config fb15k.toml --rel-col 1 train.txt valid.txt test.txt   # edge_roles: train, valid, test
  batchprep import --config fb15k.toml --from pbg data/FB15k data/FB15k/train_partitioned data/FB15k/valid_partitioned
  batchprep import --config snap.toml --delimiter tab ca-GrQc.txt   # two columns: rhs is column 1`

func runImport(env *Env, args []string) error {
	fs := newFlagSet(env, "import", "--config CFG FILE...", importDescription)
	cfgPath := fs.String("config", "", "PBG config `file` (TOML, JSON or PBG's Python) (required, no default)")
	lhs := fs.Int("lhs-col", 0, "column of the lhs entity")
	rel := fs.Int("rel-col", -1, "column of the relation name (-1: none, every edge has relation 0)")
	rhs := fs.Int("rhs-col", 2, "column of the rhs entity (default: 2, or 1 when neither --rel-col nor --rhs-col is given and the first edge line has two fields, as in a SNAP edge list)")
	weight := fs.Int("weight-col", -1, "column of the edge weight, a float (-1: none)")
	delim := fs.String("delimiter", "tab", "field separator: tab, comma, or space (any run of spaces and tabs)")
	maxErrors := fs.Int("max-errors", 0, "bad lines to skip before failing")
	quiet := fs.Bool("quiet", false, "no progress and no summary on stderr")
	var sets stringList
	fs.Var(&sets, "set", "override a config key: key=value (repeatable), as given to train")
	from := fs.String("from", "text", "input: text (edge lists) or pbg (PyTorch-BigGraph's data: ENTITY_DIR EDGE_DIR...)")
	files, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *from == "pbg" {
		return importPBG(env, *cfgPath, sets, files, *quiet)
	} else if *from != "text" {
		return usagef("--from %q: want text or pbg", *from)
	}
	if *cfgPath == "" {
		return usagef("--config is required")
	}
	if len(files) == 0 {
		return usagef("no input FILE given")
	}
	d, err := importer.ParseDelimiter(*delim)
	if err != nil {
		return usagef("--delimiter %q is not one of tab, comma, space", *delim)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !set["rhs-col"] && !set["rel-col"] && !set["weight-col"] {
		// A two-column edge list (SNAP's "FromNodeId ToNodeId") has its rhs
		// in column 1.
		if n, err := importer.FirstLineFields(files[0], d); err == nil && n == 2 {
			*rhs = 1
		}
	}
	opts := importer.DefaultOptions()
	opts.LhsCol, opts.RelCol, opts.RhsCol, opts.WeightCol = *lhs, *rel, *rhs, *weight
	opts.Delimiter, opts.MaxErrors = d, *maxErrors
	if err := opts.Validate(); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "importer: "))
	}
	cfg, err := loadConfig(env, *cfgPath, sets)
	if err != nil {
		return err
	}
	if len(files) != len(cfg.EdgePaths) {
		return usagef("%d input files for %d edge_paths in %s (the i-th FILE becomes edge set edge_paths[i])", len(files), len(cfg.EdgePaths), *cfgPath)
	}
	if cfg.DynamicRelations && !set["rel-col"] {
		warnRelationColumn(env, files, opts)
	}
	var total int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			total += fi.Size()
		}
	}
	parse := newProgress(env, "import: parse", "bytes", total, *quiet)
	var write *progress
	var lastFileBytes int64
	lastFile := -1
	var lastBuckets int
	opts.Progress = func(p importer.Progress) {
		switch p.Phase {
		case "parse":
			if p.File != lastFile {
				lastFile, lastFileBytes = p.File, 0
			}
			parse.Add(p.Bytes - lastFileBytes)
			lastFileBytes = p.Bytes
		case "write":
			if write == nil {
				parse.Done()
				L, R := cfg.BucketShape()
				write = newProgress(env, "import: write", "buckets", int64(L*R*len(files)), *quiet)
			}
			write.Add(int64(p.Buckets - lastBuckets))
			lastBuckets = p.Buckets
		}
	}
	rep, err := importer.Import(env.Ctx, cfg, opts, files)
	if write != nil {
		write.Done()
	} else {
		parse.Done()
	}
	if err != nil {
		return columnHint(err, opts)
	}
	if !*quiet {
		printImportSummary(env, rep)
	}
	if n := len(rep.RemovedLeftovers); n > 0 {
		fmt.Fprintf(env.Stderr, "batchprep import: removed %s left by an interrupted import: %s\n", plural.Count(n, "directory", "directories"), strings.Join(rep.RemovedLeftovers, ", "))
	}
	return nil
}

// warnRelationColumn warns when, under dynamic_relations, an input file
// has a column that no flag reads beside lhs and rhs: without --rel-col
// every edge gets one relation, and the relations of a head, relation,
// tail file would be lost (eval would find none of its edges).
func warnRelationColumn(env *Env, files []string, o importer.Options) {
	for _, f := range files {
		n, err := importer.FirstLineFields(f, o.Delimiter)
		if err != nil || n < 3 {
			continue
		}
		for c := range n {
			if c != o.LhsCol && c != o.RhsCol && c != o.WeightCol {
				fmt.Fprintf(env.Stderr, "import: warning: %s has %d columns and no --rel-col was given: under dynamic_relations every edge gets one relation and column %d is ignored; pass --rel-col %d if it holds the relation\n", f, n, c, c)
				return
			}
		}
	}
}

// columnHint adds to a wrong-column-count error which flags choose the
// columns, and their values in this run.
func columnHint(err error, o importer.Options) error {
	var le *importer.LineError
	if !errors.As(err, &le) || le.Reason != importer.ReasonColumns {
		return err
	}
	return fmt.Errorf("%w (columns in use: --lhs-col %d --rel-col %d --rhs-col %d --weight-col %d, --delimiter %s; set them to match the file, e.g. --rhs-col 1 for a two-column edge list)",
		err, o.LhsCol, o.RelCol, o.RhsCol, o.WeightCol, o.Delimiter)
}

func printImportSummary(env *Env, rep importer.Report) {
	w := env.Stderr
	var edges int64
	for _, s := range rep.EdgeSets {
		edges += s.Edges
	}
	var ents int
	for _, n := range rep.Entities {
		ents += n
	}
	rate := 0.0
	if s := rep.Elapsed.Seconds(); s > 0 {
		rate = float64(edges) / s
	}
	fmt.Fprintf(w, "import: %s in %s, %s, %s, %dx%d buckets per edge set, %s skipped, %.2fs (%.0f edges/s)\n",
		plural.Count(edges, "edge"), plural.Count(len(rep.EdgeSets), "edge set"), plural.Count(ents, "entity", "entities"),
		plural.Count(len(rep.Relations), "relation"), rep.Partitions[0], rep.Partitions[1], plural.Count(rep.Skipped, "bad line"), rep.Elapsed.Seconds(), rate)
	for i, s := range rep.EdgeSets {
		fmt.Fprintf(w, "  edge set %d %s: %s from %s (%s: %s, %d comment or empty; %d skipped), %s, largest bucket %d\n",
			i, s.Path, plural.Count(s.Edges, "edge"), s.File, plural.Count(s.Lines, "line"), plural.Count(s.EdgeLines, "edge line"),
			s.CommentLines, s.Skipped, plural.Count(s.EmptyBuckets, "empty bucket"), s.LargestBucket)
	}
	types := make([]string, 0, len(rep.Entities))
	for t := range rep.Entities {
		types = append(types, t)
	}
	sort.Strings(types)
	var parts []string
	for _, t := range types {
		parts = append(parts, fmt.Sprintf("%s %d", t, rep.Entities[t]))
	}
	fmt.Fprintf(w, "  entities: %s\n", strings.Join(parts, ", "))
	if rep.Skipped > 0 {
		reasons := make([]string, 0, len(rep.SkippedByReason))
		for r, n := range rep.SkippedByReason {
			reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
		}
		sort.Strings(reasons)
		fmt.Fprintf(w, "  skipped lines by reason: %s\n", strings.Join(reasons, ", "))
		for i, e := range rep.BadLines {
			if i == 20 {
				fmt.Fprintf(w, "    ... (%d more)\n", rep.Skipped-20)
				break
			}
			fmt.Fprintf(w, "    %s\n", strings.TrimPrefix(e.Error(), "importer: "))
		}
	}
}
