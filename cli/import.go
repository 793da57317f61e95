package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/internal/objstore"
	"github.com/batchprep/batchprep/internal/plural"
)

const importDescription = `
Import edge lists into the partitioned edge store named by a PyTorch-BigGraph
config (keys: docs/config.md; paths in it are relative to its directory).
The i-th FILE becomes edge set edge_paths[i], with the role edge_roles[i]
(train, valid or test); all files share one entity dictionary. A FILE is a
text edge list (TSV, CSV or blank-separated) or a Parquet file, told apart by
its first bytes (PAR1) or a .parquet name unless --format says which
(docs/formats-parquet.md). A FILE may name an object, s3://BUCKET/KEY, read
with the --fetch-* and --cache-* flags (docs/object-storage.md). Columns are 0-based indexes; in a Parquet file a
column can also be named (--lhs-col src), and integer ids are the entities
named by their decimal digits. Without --rel-col every edge has relation 0.
Lines that are empty or start with '#' are skipped and not counted in edge
ordinals. Bad lines (bad rows, for Parquet: a null, an empty string) are
reported with file, line and column (row group, row and column name); up to
--max-errors of them are skipped, one more fails the import. The store is
replaced atomically: an error or an interruption (Ctrl-C exits 130, SIGTERM
143) leaves the previous store as it was; directories a killed import left
beside the store are removed by the next successful one.

--from pbg converts PyTorch-BigGraph's imported data instead: the first
argument is PBG's entity_path directory, then one PBG edge directory
(edges_{lhs}_{rhs}.h5 files) per edge_paths[i]; partitions, offsets and
relation ids are kept (docs/formats-pbg.md). A config whose entity_path
and edge_paths hold PBG's data needs no import: train, eval, export and
plan convert them once into a store beside entity_path (entity_path +
".batchprep") and reuse it until PBG's files change; --from pbg without
directories does that conversion now.

Examples:
  batchprep import --config fb15k.toml --rel-col 1 train.txt valid.txt test.txt   # edge_roles: train, valid, test
  batchprep import --config fb15k.toml --lhs-col src --rel-col rel --rhs-col dst train.parquet valid.parquet test.parquet
  batchprep import --config fb15k.toml --from pbg data/FB15k data/FB15k/train_partitioned data/FB15k/valid_partitioned
  batchprep import --config snap.toml --delimiter tab ca-GrQc.txt   # two columns: rhs is column 1`

func runImport(env *Env, args []string) error {
	fs := newFlagSet(env, "import", "--config CFG FILE...", importDescription)
	cfgPath := fs.String("config", "", "PBG config `file` (TOML, JSON or PBG's Python) (required, no default)")
	lhs := fs.String("lhs-col", "0", "column of the lhs entity: a 0-based index, or a Parquet column's name")
	rel := fs.String("rel-col", "-1", "column of the relation name: an index or a Parquet column's name (-1: none, every edge has relation 0)")
	rhs := fs.String("rhs-col", "2", "column of the rhs entity: an index or a Parquet column's name (default: 2, or 1 when neither --rel-col nor --rhs-col is given and the first edge line has two fields, or the Parquet file two columns, as in a SNAP edge list)")
	weight := fs.String("weight-col", "-1", "column of the edge weight, a number: an index or a Parquet column's name (-1: none)")
	format := fs.String("format", "auto", "input format: auto (Parquet when a file starts with PAR1 or is named *.parquet, else text), text, or parquet")
	delim := fs.String("delimiter", "tab", "field separator of text files: tab, comma, or space (any run of spaces and tabs)")
	maxErrors := fs.Int("max-errors", 0, "bad lines to skip before failing")
	quiet := fs.Bool("quiet", false, "no progress and no summary on stderr")
	var sets stringList
	fs.Var(&sets, "set", "override a config key: key=value (repeatable), as given to train")
	from := fs.String("from", "text", "input: text (edge lists) or pbg (PyTorch-BigGraph's data: ENTITY_DIR EDGE_DIR...)")
	objects := objectFlags(fs, env)
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
	fmtSel, err := importer.ParseFormat(*format)
	if err != nil {
		return usagef("--format %q is not one of auto, text, parquet", *format)
	}
	opts := importer.DefaultOptions()
	opts.Format, opts.Objects = fmtSel, *objects
	inputs := newEdgeInputs(*objects)
	defer inputs.close()
	opts.Open = inputs.open
	for _, c := range []struct {
		flag string
		val  string
		idx  *int
		name *string
	}{{"lhs-col", *lhs, &opts.LhsCol, &opts.LhsName}, {"rel-col", *rel, &opts.RelCol, &opts.RelName},
		{"rhs-col", *rhs, &opts.RhsCol, &opts.RhsName}, {"weight-col", *weight, &opts.WeightCol, &opts.WeightName}} {
		if err := columnFlag(c.flag, c.val, c.idx, c.name); err != nil {
			return err
		}
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !set["rhs-col"] && !set["rel-col"] && !set["weight-col"] && opts.LhsName == "" {
		// A two-column edge list (SNAP's "FromNodeId ToNodeId") has its rhs
		// in column 1.
		if n := firstFileColumns(env.Ctx, files[0], fmtSel, d, inputs.open); n == 2 {
			opts.RhsCol = 1
		}
	}
	opts.Delimiter, opts.MaxErrors = d, *maxErrors
	if err := opts.Validate(); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "importer: "))
	}
	cfg, err := loadConfigAsWritten(env, *cfgPath, sets)
	if err != nil {
		return err
	}
	if len(files) != len(cfg.EdgePaths) {
		return usagef("%d input files for %d edge_paths in %s (the i-th FILE becomes edge set edge_paths[i])", len(files), len(cfg.EdgePaths), *cfgPath)
	}
	if cfg.DynamicRelations && !set["rel-col"] {
		warnRelationColumn(env, files, opts)
	}
	total := inputBytes(env.Ctx, files, inputs.open)
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

// columnFlag reads a column flag: a 0-based index (-1: none) or a Parquet
// column's name.
func columnFlag(flag, val string, idx *int, name *string) error {
	if n, err := strconv.Atoi(val); err == nil {
		*idx = n
		return nil
	}
	if strings.TrimSpace(val) == "" {
		return usagef("--%s is empty: give a 0-based column index or a Parquet column's name", flag)
	}
	*name = val
	return nil
}

// firstFileColumns is the number of fields of path's first edge line, or
// of its top-level columns for a Parquet file; 0 when unknown.
func firstFileColumns(ctx context.Context, path string, f importer.Format, d importer.Delimiter, open inputOpener) int {
	in, err := open(ctx, path)
	if err != nil {
		return 0
	}
	defer in.Close()
	if f == importer.FormatAuto {
		if f, err = importer.DetectFormatOf(in, path); err != nil {
			return 0
		}
	}
	if f == importer.FormatParquet {
		cols, err := importer.ParquetColumnsOf(in, path)
		if err != nil {
			return 0
		}
		return len(cols)
	}
	n, err := importer.FirstLineFieldsOf(in, path, d)
	if err != nil {
		return 0
	}
	return n
}

// inputBytes is the size of the edge files (of those that can be
// opened), for the progress line.
func inputBytes(ctx context.Context, files []string, open inputOpener) int64 {
	var total int64
	for _, f := range files {
		if in, err := open(ctx, f); err == nil {
			if fi, err := in.Stat(); err == nil {
				total += fi.Size()
			}
			in.Close()
		}
	}
	return total
}

// warnRelationColumn warns when, under dynamic_relations, an input file
// has a column that no flag reads beside lhs and rhs: without --rel-col
// every edge gets one relation, and the relations of a head, relation,
// tail file would be lost (eval would find none of its edges).
func warnRelationColumn(env *Env, files []string, o importer.Options) {
	for _, f := range files {
		if o.LhsName != "" || o.RhsName != "" || o.RelName != "" || o.WeightName != "" {
			return // columns chosen by name: the user looked at the file
		}
		n := firstFileColumns(env.Ctx, f, o.Format, o.Delimiter, o.Open)
		if n < 3 {
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
	return fmt.Errorf("%w (columns in use: --lhs-col %s --rel-col %s --rhs-col %s --weight-col %s, --delimiter %s; set them to match the file, e.g. --rhs-col 1 for a two-column edge list)",
		err, colShown(o.LhsCol, o.LhsName), colShown(o.RelCol, o.RelName), colShown(o.RhsCol, o.RhsName), colShown(o.WeightCol, o.WeightName), o.Delimiter)
}

func colShown(idx int, name string) string {
	if name != "" {
		return name
	}
	return strconv.Itoa(idx)
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
	// A Parquet file has rows, not lines: an import of Parquet files only
	// counts its bad input in rows; text, or a mix, in lines.
	unit := "line"
	if len(rep.EdgeSets) > 0 && !slices.ContainsFunc(rep.EdgeSets, func(s importer.EdgeSetReport) bool { return !s.Parquet }) {
		unit = "row"
	}
	fmt.Fprintf(w, "import: %s in %s, %s, %s, %dx%d buckets per edge set, %s skipped, %.2fs (%.0f edges/s)\n",
		plural.Count(edges, "edge"), plural.Count(len(rep.EdgeSets), "edge set"), plural.Count(ents, "entity", "entities"),
		plural.Count(len(rep.Relations), "relation"), rep.Partitions[0], rep.Partitions[1], plural.Count(rep.Skipped, "bad "+unit), rep.Elapsed.Seconds(), rate)
	for i, s := range rep.EdgeSets {
		read := fmt.Sprintf("%s: %s, %d comment or empty; %d skipped", plural.Count(s.Lines, "line"), plural.Count(s.EdgeLines, "edge line"), s.CommentLines, s.Skipped)
		if s.Parquet {
			read = fmt.Sprintf("%s; %d skipped", plural.Count(s.Lines, "row"), s.Skipped)
		}
		fmt.Fprintf(w, "  edge set %d %s: %s from %s (%s), %s, largest bucket %d\n",
			i, s.Path, plural.Count(s.Edges, "edge"), s.File, read, plural.Count(s.EmptyBuckets, "empty bucket"), s.LargestBucket)
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
		fmt.Fprintf(w, "  skipped %ss by reason: %s\n", unit, strings.Join(reasons, ", "))
		for i, e := range rep.BadLines {
			if i == 20 {
				fmt.Fprintf(w, "    ... (%d more)\n", rep.Skipped-20)
				break
			}
			fmt.Fprintf(w, "    %s\n", strings.TrimPrefix(e.Error(), "importer: "))
		}
	}
}

// inputOpener opens an edge file (importer.Options.Open).
type inputOpener = func(ctx context.Context, path string) (importer.Input, error)

// edgeInputs opens the edge files of one import: a local file each time,
// an object once (one HEAD) for every step, so that counting its columns,
// sizing the progress bar and importing read one version. close closes
// the objects after the import.
type edgeInputs struct {
	opt    objstore.Options
	opened *objstore.Opened
}

func newEdgeInputs(opt objstore.Options) edgeInputs {
	return edgeInputs{opt: opt, opened: objstore.NewOpened(opt)}
}

func (e edgeInputs) open(ctx context.Context, path string) (importer.Input, error) {
	if !objstore.IsURL(path) {
		return importer.OpenInput(ctx, path, e.opt)
	}
	o, err := e.opened.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return objstore.Kept{Object: o}, nil
}

func (e edgeInputs) close() { e.opened.Close() }
