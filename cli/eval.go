package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/eval"
	"github.com/batchprep/batchprep/graph/importer"
)

const evalDescription = `
Rank test edges with a trained checkpoint (filtered link prediction): each
edge's rhs among all entities of its type, and its lhs likewise; candidates
that form a known true edge other than the ranked one are removed; ties
count against the true entity. Prints count, mrr, hits@1, hits@3, hits@10
and mean_rank over the ranked sides, and the edge sets the checkpoint was
trained on. With several partitions it also prints the same ranking among
the true entity's partition only (the entities a partitioned run trains it
against), which tells how much of the rank entities of other partitions
take.

The test edges are an imported edge set (--edge-set NAME: a valid or test
edge set of edge_roles, by the last element of its path or its role), or a
file (--edges FILE). A file's columns and delimiter are those the store's
text files were imported with (recorded at import; a store imported before
that record, or from Parquet or PBG's files, uses import's defaults); a
--lhs-col, --rel-col, --rhs-col or --delimiter given here wins. An edge set
is filtered against every imported edge set; a file against itself; both
also against each --filter file. Evaluating edges the checkpoint was
trained on is warned about.

--filter none ranks without filtering: every entity of the type but the
true one is a candidate, whatever edges are known. These are the raw
ranks that PBG's torchbiggraph_eval reports for a relation with
all_negs (with several partitions, compare PBG's figure with the
within-partition line), so old PBG logs can be set beside new figures.
A filter file named "none" is given as ./none.

Every entity of an imported file is ranked, trained or not. Edges of a
file naming an entity or relation that no imported file holds are not
ranked: they are counted and reported ("unknown"). Nothing ranked at all
is an error.

Examples:
  batchprep eval --config fb15k.toml --edge-set test
  batchprep eval --config fb15k.toml --edge-set valid --format json
  batchprep eval --config fb15k.toml --edges new.txt --rel-col 1 --filter train.txt
  batchprep eval --config fb15k.toml --edge-set test --filter none`

func runEval(env *Env, args []string) error {
	fs := newFlagSet(env, "eval", "", evalDescription)
	cfgPath := fs.String("config", "", "graph config of the trained model (required)")
	edges := fs.String("edges", "", "test edges, one per line (this or --edge-set)")
	edgeSet := fs.String("edge-set", "", "an imported edge set to rank, by name or role (this or --edges)")
	var filters, sets stringList
	fs.Var(&filters, "filter", "file of known true edges to filter out (repeatable); none: rank unfiltered, as torchbiggraph_eval does (default: filtered against the known edges, see above)")
	fs.Var(&sets, "set", "override a config key: key=value (repeatable)")
	format := fs.String("format", "text", "output: text or json")
	def := importer.DefaultOptions()
	cols := eval.Columns{Lhs: def.LhsCol, Rel: def.RelCol, Rhs: def.RhsCol, Delimiter: def.Delimiter.String()}
	fs.IntVar(&cols.Lhs, "lhs-col", cols.Lhs, "0-based column of the lhs entity (default: the store's import column, else 0)")
	fs.IntVar(&cols.Rel, "rel-col", cols.Rel, "0-based column of the relation, -1: none, the first relation (default: the store's import column, else -1)")
	fs.IntVar(&cols.Rhs, "rhs-col", cols.Rhs, "0-based column of the rhs entity (default: the store's import column, else 2, or 1 for a two-column file, as for import)")
	fs.StringVar(&cols.Delimiter, "delimiter", cols.Delimiter, "field separator: tab, comma or space (default: the store's import delimiter, else tab)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *cfgPath == "" || (*edges == "") == (*edgeSet == ""):
		return usagef("--config and one of --edges or --edge-set are required")
	case cols.Lhs < 0 || cols.Rhs < 0 || cols.Rel < -1:
		return usagef("--lhs-col %d, --rel-col %d, --rhs-col %d: columns are 0-based (--rel-col -1: none)", cols.Lhs, cols.Rel, cols.Rhs)
	case cols.Delimiter != "tab" && cols.Delimiter != "comma" && cols.Delimiter != "space":
		return usagef("--delimiter %q: want tab, comma or space", cols.Delimiter)
	case *format != "text" && *format != "json":
		return usagef("--format %q: want text or json", *format)
	}
	unfiltered := false
	for _, f := range filters {
		unfiltered = unfiltered || f == filterNone
	}
	if unfiltered && len(filters) > 1 {
		return usagef("--filter none ranks without filtering: it takes no filter file beside it (a file named none: --filter ./none)")
	}
	if unfiltered {
		filters = nil
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	cfg, err := loadConfig(env, *cfgPath, sets)
	if err != nil {
		return err
	}
	var target config.EdgeSet
	if *edgeSet != "" {
		if target, err = cfg.FindEdgeSet(*edgeSet); err != nil {
			return fmt.Errorf("--edge-set: %w", err)
		}
	}
	store, err := openTrainedStore(*cfgPath, cfg, false)
	if err != nil {
		return err
	}
	defer store.Close()
	imported := importedColumns(store, &cols, given)
	read := func(path string) ([]eval.Triple, error) {
		c := cols
		if !imported && !given["rhs-col"] && !given["rel-col"] {
			d, _ := importer.ParseDelimiter(c.Delimiter)
			if n, err := importer.FirstLineFields(path, d); err == nil && n == 2 {
				c.Rhs = 1 // a two-column edge list, as import reads it
			}
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return eval.ReadTriples(path, f, c)
	}
	var test []eval.Triple
	if *edges != "" {
		if test, err = read(*edges); err != nil {
			return err
		}
	}
	knownFiles := make([][]eval.Triple, len(filters))
	for i, p := range filters {
		if knownFiles[i], err = read(p); err != nil {
			return err
		}
	}
	ev, err := eval.Open(cfg, store)
	if err != nil {
		return err
	}
	unfinished := ev.Unfinished()
	if cols.Rel < 0 && store.NumRelations() > 1 && (*edges != "" || len(filters) > 0) {
		return fmt.Errorf("no relation column (--rel-col -1), but the store has %d relations: pass the relation's column (--rel-col 1 for head, relation, tail lines)", store.NumRelations())
	}
	var filterEdges []eval.Edges
	for i, f := range knownFiles {
		x := ev.Resolve(f)
		if x.Len() == 0 {
			return fmt.Errorf("--filter %s: %s", filters[i], nothingKnown(len(f), x, cols))
		}
		filterEdges = append(filterEdges, x)
	}
	trainedOn := trainingSets(cfg)
	var testEdges eval.Edges
	what := *edges
	if *edges != "" {
		testEdges = ev.Resolve(test)
		if s, ok := sourceOfTrainingSet(cfg, store, *edges); ok {
			warnTrainedOn(env, fmt.Sprintf("%s was imported as edge set %s, which this checkpoint was trained on", *edges, s))
		}
	} else {
		what = "edge set " + target.String()
		if testEdges, err = ev.StoredEdges(target.Index); err != nil {
			return err
		}
		if target.Role == config.RoleTrain {
			warnTrainedOn(env, fmt.Sprintf("this checkpoint was trained on edge set %s", target))
		}
		for _, s := range cfg.EdgeSets() {
			if s.Index == target.Index || unfiltered {
				continue
			}
			x, err := ev.StoredEdges(s.Index)
			if err != nil {
				return err
			}
			filterEdges = append(filterEdges, x)
		}
	}
	var rep eval.Report
	if unfiltered {
		rep = ev.RankEdgesUnfiltered(testEdges)
	} else {
		rep = ev.RankEdges(testEdges, filterEdges...)
	}
	if rep.Count == 0 {
		if rep.Edges == 0 {
			return fmt.Errorf("%s holds no edge: nothing to rank", what)
		}
		return fmt.Errorf("%s: %s", what, nothingKnown(int(rep.Edges), testEdges, cols))
	}
	if rep.Unknown > 0 {
		fmt.Fprintf(env.Stderr, "eval: %d of %d edges of %s name an entity or relation that no imported file holds; not ranked (names: %s; first edge: %q)\n",
			rep.Unknown, rep.Edges, what, strings.Join(rep.UnknownNames, ", "), rep.UnknownExamples[0])
	}
	if rep.NonFinite > 0 {
		fmt.Fprintf(env.Stderr, "eval: warning: %d ranked sides scored NaN or infinity for the true entity and were ranked last (first edge: %q); the model has diverged\n",
			rep.NonFinite, rep.NonFiniteExamples[0])
	}
	if *format == "json" {
		out := struct {
			eval.Report
			EdgeSet   string   `json:"edge_set,omitempty"`
			File      string   `json:"edges_file,omitempty"`
			TrainedOn []string `json:"trained_on"`
			// Unfinished says how far an unfinished checkpoint got.
			Unfinished string `json:"unfinished,omitempty"`
		}{rep, target.Name, *edges, nil, unfinished}
		for _, s := range trainedOn {
			out.TrainedOn = append(out.TrainedOn, s.Name)
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
		return err
	}
	sides := "both sides"
	if rep.Sides != "both" {
		sides = "the " + rep.Sides + " side only"
	}
	fmt.Fprintf(env.Stdout, "count      %d (ranks over %s of %d edges)\n", rep.Count, sides, rep.Edges-rep.Unknown)
	if unfiltered {
		fmt.Fprintf(env.Stdout, "filter     none (raw ranks: no known edge removed, as torchbiggraph_eval ranks all_negs relations)\n")
	}
	fmt.Fprintf(env.Stdout, "mrr        %.4f\nhits@1     %.4f\nhits@3     %.4f\nhits@10    %.4f\nmean_rank  %.1f\n",
		rep.MRR, rep.Hits1, rep.Hits3, rep.Hits10, rep.MeanRank)
	if m := rep.WithinPartition; m != nil {
		fmt.Fprintf(env.Stdout, "within the true entity's partition: mrr %.4f, hits@10 %.4f, mean_rank %.1f\n", m.MRR, m.Hits10, m.MeanRank)
	}
	fmt.Fprintf(env.Stdout, "unknown    %d\n", rep.Unknown)
	if rep.FilterUnknown > 0 {
		fmt.Fprintf(env.Stdout, "filter edges with unknown names (skipped): %d\n", rep.FilterUnknown)
	}
	var names []string
	for _, s := range trainedOn {
		names = append(names, s.String())
	}
	fmt.Fprintf(env.Stdout, "trained on %s\n", strings.Join(names, ", "))
	if unfinished != "" {
		fmt.Fprintf(env.Stdout, "note       %s\n", unfinished)
	}
	return nil
}

// importedColumns sets the columns and delimiter of cols that no flag
// gave to those the store's text files were imported with (the first edge
// set with a record), and reports whether there was a record.
func importedColumns(store *edgestore.Store, cols *eval.Columns, given map[string]bool) bool {
	for i := range store.NumEdgeSets() {
		rec := store.SourceColumns(i)
		if rec == nil {
			continue
		}
		for flag, c := range map[string][2]*int{"lhs-col": {&cols.Lhs, &rec.Lhs}, "rel-col": {&cols.Rel, &rec.Rel}, "rhs-col": {&cols.Rhs, &rec.Rhs}} {
			if !given[flag] {
				*c[0] = *c[1]
			}
		}
		if !given["delimiter"] {
			cols.Delimiter = rec.Delimiter
		}
		return true
	}
	return false
}

// filterNone is the --filter value that turns filtering off.
const filterNone = "none"

// nothingKnown explains why none of n edges could be ranked.
func nothingKnown(n int, x eval.Edges, c eval.Columns) string {
	if n == 0 {
		return "holds no edge line"
	}
	what := fmt.Sprintf("none of its %d edges names only entities and relations of the imported files", n)
	if n == 1 {
		what = "its one edge names an entity or relation that is in no imported file"
	}
	return fmt.Sprintf("%s (names: %s; first edge: %q); check the columns (in use: --lhs-col %d --rel-col %d --rhs-col %d --delimiter %s)",
		what, strings.Join(x.UnknownNames, ", "), x.UnknownExamples[0], c.Lhs, c.Rel, c.Rhs, c.Delimiter)
}

// trainingSets lists the edge sets a checkpoint of cfg was trained on (the
// checkpoint's fingerprint holds edge_roles, so eval's config agrees).
func trainingSets(cfg *config.Config) []config.EdgeSet {
	var out []config.EdgeSet
	for _, s := range cfg.EdgeSets() {
		if s.Role == config.RoleTrain {
			out = append(out, s)
		}
	}
	return out
}

// sourceOfTrainingSet returns the training edge set imported from file.
func sourceOfTrainingSet(cfg *config.Config, store *edgestore.Store, file string) (config.EdgeSet, bool) {
	fi, err := os.Stat(file)
	if err != nil {
		return config.EdgeSet{}, false
	}
	abs, _ := filepath.Abs(file)
	for _, s := range trainingSets(cfg) {
		src := store.Source(s.Index)
		if si, err := os.Stat(src); err == nil && os.SameFile(fi, si) {
			return s, true
		}
		if a, _ := filepath.Abs(src); a == abs {
			return s, true
		}
	}
	return config.EdgeSet{}, false
}

// warnTrainedOn warns, loudly, that the evaluated edges were trained on.
func warnTrainedOn(env *Env, what string) {
	fmt.Fprintf(env.Stderr, "eval: WARNING: %s: these figures measure the fit to training edges, not link prediction; rank a valid or test edge set (edge_roles)\n", what)
}

// warnTrainingOnEvalSets warns, loudly, when train is about to train on an
// edge set whose name says it is for evaluation (valid, test, dev, eval):
// the usual sign of a config without edge_roles that lists every file of
// a benchmark.
func warnTrainingOnEvalSets(env *Env, cfg *config.Config) {
	for _, s := range trainingSets(cfg) {
		words := strings.FieldsFunc(strings.ToLower(s.Name), func(r rune) bool { return r < 'a' || r > 'z' })
		for _, w := range words {
			role := ""
			switch {
			case strings.HasPrefix(w, "test"):
				role = config.RoleTest
			case strings.HasPrefix(w, "valid"), w == "dev", strings.HasPrefix(w, "eval"):
				role = config.RoleValid
			}
			if role != "" {
				fmt.Fprintf(env.Stderr, "train: WARNING: training on edge set %s, whose name says it holds evaluation edges; give it the role %q in edge_roles (e.g. edge_roles = [\"train\", \"valid\", \"test\"]) so that it is imported but never trained on\n", s, role)
				break
			}
		}
	}
}
