// Command gengraph writes a generated power-law edge list as TSV to stdout
// (lines "e<lhs>\tr<rel>\te<rhs>": import it with --rel-col 1). The output
// depends only on the flags. See package graph/gen for the model.
//
//	go run ./bench/gengraph -entities 4800000 -edges 69000000 -zipf 0.8 -seed 1 > lj.tsv
//	go run ./bench/gengraph -entities 100000 -edges 2000000 -communities 100 -p-in 0.8 > planted.tsv
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/batchprep/batchprep/graph/gen"
)

func main() {
	var p gen.Params
	flag.IntVar(&p.Entities, "entities", 1_000_000, "number of entities (e0 .. e<N-1>)")
	flag.IntVar(&p.Edges, "edges", 10_000_000, "number of edges (lines)")
	flag.IntVar(&p.Relations, "relations", 1, "number of relations (r0 .. r<R-1>), drawn uniformly")
	flag.Float64Var(&p.Zipf, "zipf", 0.8, "rank exponent: entity i is drawn with weight (i+1)^-zipf (0: uniform); degree tail P(D >= d) ~ d^(-1/zipf)")
	flag.IntVar(&p.Communities, "communities", 0, "planted communities (entity i in community i mod C); 0: none")
	flag.Float64Var(&p.PIn, "p-in", 0, "fraction of edges whose rhs is drawn inside the lhs's community")
	flag.Uint64Var(&p.Seed, "seed", 1, "random seed")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "gengraph: unexpected argument %q (the graph goes to stdout)\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := gen.WriteTSV(os.Stdout, p); err != nil {
		fmt.Fprintln(os.Stderr, "gengraph:", err)
		os.Exit(1)
	}
}
