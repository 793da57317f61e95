package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/batchprep/batchprep/graph/eval"
)

const evalDescription = `
Rank test edges with a trained checkpoint (filtered link prediction): each
edge's rhs among all entities of its type, and its lhs likewise; candidates
that form a known true edge (in a --filter file or in --edges) other than
the ranked one are removed; ties count against the true entity. Prints
count, mrr, hits@1, hits@3, hits@10 and mean_rank over both sides.

Edges naming an entity or relation the dictionary does not know are not
ranked: they are counted and reported ("unknown"), with examples.

Examples:
  batchprep eval --config fb15k.toml --edges test.txt --filter train.txt --filter valid.txt
  batchprep eval --config fb15k.toml --edges test.txt --format json`

func runEval(env *Env, args []string) error {
	fs := newFlagSet(env, "eval", "", evalDescription)
	cfgPath := fs.String("config", "", "graph config of the trained model (required)")
	edges := fs.String("edges", "", "test edges, one per line (required)")
	var filters, sets stringList
	fs.Var(&filters, "filter", "file of known true edges to filter out (repeatable)")
	fs.Var(&sets, "set", "override a config key: key=value (repeatable)")
	format := fs.String("format", "text", "output: text or json")
	cols := eval.DefaultColumns()
	fs.IntVar(&cols.Lhs, "lhs-col", cols.Lhs, "0-based column of the lhs entity")
	fs.IntVar(&cols.Rel, "rel-col", cols.Rel, "0-based column of the relation (-1: none, the first relation)")
	fs.IntVar(&cols.Rhs, "rhs-col", cols.Rhs, "0-based column of the rhs entity")
	fs.StringVar(&cols.Delimiter, "delimiter", cols.Delimiter, "field separator: tab, comma or space")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *cfgPath == "" || *edges == "":
		return usagef("--config and --edges are required")
	case cols.Lhs < 0 || cols.Rhs < 0 || cols.Rel < -1:
		return usagef("--lhs-col %d, --rel-col %d, --rhs-col %d: columns are 0-based (--rel-col -1: none)", cols.Lhs, cols.Rel, cols.Rhs)
	case cols.Delimiter != "tab" && cols.Delimiter != "comma" && cols.Delimiter != "space":
		return usagef("--delimiter %q: want tab, comma or space", cols.Delimiter)
	case *format != "text" && *format != "json":
		return usagef("--format %q: want text or json", *format)
	}
	cfg, err := loadConfig(*cfgPath, sets)
	if err != nil {
		return err
	}
	read := func(path string) ([]eval.Triple, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return eval.ReadTriples(path, f, cols)
	}
	test, err := read(*edges)
	if err != nil {
		return err
	}
	var known [][]eval.Triple
	for _, p := range filters {
		ts, err := read(p)
		if err != nil {
			return err
		}
		known = append(known, ts)
	}
	store, err := openTrainedStore(*cfgPath, cfg, false)
	if err != nil {
		return err
	}
	defer store.Close()
	ev, err := eval.Open(cfg, store)
	if err != nil {
		return err
	}
	rep := ev.Rank(test, known...)
	if rep.Unknown > 0 {
		fmt.Fprintf(env.Stderr, "eval: %d of %d edges of %s name an entity or relation the dictionary does not know; not ranked (first: %q)\n",
			rep.Unknown, len(test), *edges, rep.UnknownExamples[0])
	}
	if *format == "json" {
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
		return err
	}
	fmt.Fprintf(env.Stdout, "count      %d (ranks over both sides of %d edges)\n", rep.Count, len(test)-int(rep.Unknown))
	fmt.Fprintf(env.Stdout, "mrr        %.4f\nhits@1     %.4f\nhits@3     %.4f\nhits@10    %.4f\nmean_rank  %.1f\n",
		rep.MRR, rep.Hits1, rep.Hits3, rep.Hits10, rep.MeanRank)
	fmt.Fprintf(env.Stdout, "unknown    %d\n", rep.Unknown)
	if rep.FilterUnknown > 0 {
		fmt.Fprintf(env.Stdout, "filter edges with unknown names (skipped): %d\n", rep.FilterUnknown)
	}
	return nil
}
