package importer

import (
	"context"
	"fmt"
	"hash/maphash"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
)

// Report says what an import did. Every input line is accounted for:
// Lines = CommentLines + EdgeLines and EdgeLines = Edges + Skipped for each
// edge set (invariant 2).
type Report struct {
	EdgeSets        []EdgeSetReport
	Entities        map[string]int // entities per type
	Relations       []string       // relation names by id
	Partitions      [2]int         // lhs, rhs partitions
	Buckets         int            // buckets per edge set (lhs * rhs), empty ones included
	Skipped         int            // bad lines skipped, all files
	SkippedByReason map[Reason]int
	BadLines        []*LineError // the first 100 bad lines
	// RemovedLeftovers are directories that earlier, interrupted imports
	// left beside the store, removed once this one succeeded.
	RemovedLeftovers []string
	Elapsed          time.Duration
}

// EdgeSetReport describes one input file and its edge set.
type EdgeSetReport struct {
	File          string // input file
	Path          string // edge set directory (edge_paths[i])
	Lines         int64  // lines read
	CommentLines  int64  // comment and empty lines (not counted in ordinals)
	EdgeLines     int64  // the other lines; ordinals run over these
	Edges         int64  // edges stored
	Skipped       int64  // bad edge lines skipped
	Parquet       bool   // the file is Parquet: its lines are rows, none a comment
	EmptyBuckets  int
	LargestBucket int64
}

// Import reads files (the i-th becomes edge set cfg.EdgePaths[i]), builds
// the entity dictionaries, partitions the entities and writes the store
// atomically (see the package documentation). On error nothing is changed
// on disk, and the returned Report counts what was read.
func Import(ctx context.Context, cfg *config.Config, opts Options, files []string) (rep Report, err error) {
	start := time.Now()
	rep = Report{Entities: map[string]int{}}
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	if len(files) != len(cfg.EdgePaths) {
		return rep, fmt.Errorf("importer: %d input files for %d edge_paths in the config (the i-th file becomes edge set edge_paths[i])", len(files), len(cfg.EdgePaths))
	}
	made := missingDirs(cfg)
	w, err := edgestore.Create(cfg, edgestore.WriteOptions{Hook: opts.hook, NoSync: opts.noSync})
	if err != nil {
		removeMade(made)
		return rep, err
	}
	defer func() {
		w.Abort()
		if err != nil {
			removeMade(made)
		}
	}()

	p := newParser(cfg, &opts)
	edges := make([]*fileEdges, len(files))
	var parsed int64
	for i, name := range files {
		fe, err := parseFile(ctx, p, name, i, parsed, &opts)
		edges[i] = fe
		if fe != nil {
			rep.EdgeSets = append(rep.EdgeSets, setReport(name, cfg.EdgePaths[i], fe))
			parsed += int64(fe.len())
		}
		rep.Skipped, rep.SkippedByReason, rep.BadLines = p.budget.bad, p.budget.reasons, p.budget.samples
		if err != nil {
			rep.Elapsed = time.Since(start)
			return rep, err
		}
	}

	// Partition every entity type (types without edges get empty files).
	for _, t := range cfg.EntityTypes() {
		d := p.dicts[t]
		parts := d.partition(cfg.Seed, cfg.Entities[t].NumPartitions)
		if err := w.WriteEntities(t, parts); err != nil {
			return rep, err
		}
		rep.Entities[t] = len(d.names)
	}
	rep.Relations = p.relationNames(cfg)
	if err := w.WriteRelationNames(rep.Relations); err != nil {
		return rep, err
	}
	L, R := cfg.BucketShape()
	rep.Partitions, rep.Buckets = [2]int{L, R}, L*R
	var written int64
	buckets := 0
	for i := range files {
		if err := writeSet(ctx, w, p, cfg, i, files[i], edges[i], &rep.EdgeSets[i], &opts, &written, &buckets); err != nil {
			return rep, err
		}
		edges[i] = nil // release the memory
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if err := w.Commit(); err != nil {
		return rep, err
	}
	rep.RemovedLeftovers = w.Removed()
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func setReport(file, path string, fe *fileEdges) EdgeSetReport {
	return EdgeSetReport{File: file, Path: path, Lines: fe.lines, CommentLines: fe.comments,
		EdgeLines: fe.edgeLines, Edges: int64(fe.len()), Skipped: int64(len(fe.bad)), Parquet: fe.parquet}
}

func newParser(cfg *config.Config, opts *Options) *parser {
	p := &parser{opts: opts, needed: opts.needed(), relByCfg: map[string]uint32{}, dynamic: cfg.DynamicRelations,
		dynRel: map[string]uint32{}, budget: budget{max: opts.MaxErrors}, dicts: map[string]*dict{}}
	// One hash seed for every dictionary, so that a name's hash does not
	// depend on its type (Parquet dictionaries are hashed once per value).
	seed := maphash.MakeSeed()
	iseed := maphash.String(seed, "integer ids")
	for _, t := range cfg.EntityTypes() {
		p.dicts[t] = newDict(t)
		p.dicts[t].seed, p.dicts[t].iseed = seed, iseed
	}
	for i, r := range cfg.Relations {
		p.relByCfg[r.Name] = uint32(i)
		p.relDicts = append(p.relDicts, [2]*dict{p.dicts[r.Lhs], p.dicts[r.Rhs]})
	}
	return p
}

// relationNames returns the names of the relation ids: the config's
// relations, or in dynamic mode the names found in the data in order of
// first appearance (relation 0's config name when there is no relation
// column).
func (p *parser) relationNames(cfg *config.Config) []string {
	if !p.dynamic {
		names := make([]string, len(cfg.Relations))
		for i, r := range cfg.Relations {
			names[i] = r.Name
		}
		return names
	}
	if !p.opts.hasRel() {
		return []string{cfg.Relations[0].Name}
	}
	return append([]string{}, p.dynNames...)
}

func parseFile(ctx context.Context, p *parser, name string, idx int, before int64, opts *Options) (*fileEdges, error) {
	open := opts.Open
	if open == nil {
		open = func(ctx context.Context, path string) (Input, error) { return OpenInput(ctx, path, opts.Objects) }
	}
	f, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	fe := &fileEdges{}
	p.size = size
	var progress func(int64)
	if opts.Progress != nil {
		progress = func(b int64) {
			opts.Progress(Progress{Phase: "parse", File: idx, Path: name, Bytes: b, TotalBytes: size, Edges: before + int64(fe.len())})
		}
	}
	format, err := formatOf(opts, f, name)
	if err != nil {
		return fe, err
	}
	if format == FormatParquet {
		fe.parquet = true
		return fe, p.parseParquet(ctx, f, size, name, fe, progress)
	}
	if opts.names() {
		return fe, fmt.Errorf("importer: %s is a text edge list, which has no column names: choose its columns by 0-based index", name)
	}
	r := sequential(f)
	defer r.Close()
	err = p.parse(ctx, r, name, fe, progress)
	return fe, err
}
