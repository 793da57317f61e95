package importer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/internal/mix"
)

// GenerateTSV writes a synthetic edge list of the given size for tests and
// benchmarks: lines "e<lhs>\tr<rel>\te<rhs>" (columns 0, 1, 2) with
// entities drawn uniformly from [0, entities) and relations from
// [0, relations), all from the stream of seed. The output depends only on
// the arguments.
func GenerateTSV(w io.Writer, edges, relations, entities int, seed uint64) error {
	names := make([]string, relations)
	for i := range names {
		names[i] = "r" + strconv.Itoa(i)
	}
	return generate(w, edges, names, entities, seed)
}

func generate(w io.Writer, edges int, relations []string, entities int, seed uint64) error {
	if edges < 0 || len(relations) < 1 || entities < 1 {
		return fmt.Errorf("importer: generate: need edges >= 0, relations >= 1, entities >= 1")
	}
	r := mix.Rand(seed, 0x67656e) // "gen"
	bw := bufio.NewWriterSize(w, 1<<20)
	line := make([]byte, 0, 64)
	for i := 0; i < edges; i++ {
		line = append(line[:0], 'e')
		line = strconv.AppendUint(line, boundedUint64(r, uint64(entities)), 10)
		line = append(line, '\t')
		line = append(line, relations[boundedUint64(r, uint64(len(relations)))]...)
		line = append(line, '\t', 'e')
		line = strconv.AppendUint(line, boundedUint64(r, uint64(entities)), 10)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// GenerateStore fills the store of cfg with a synthetic graph: one
// generated file of edges edges per edge set (written in tmpDir, then
// imported with relation column 1 using cfg's relation names), entities
// drawn from [0, entities) for every type. It is meant for the benchmarks
// of the packages that read stores: it skips fsync, so the store is not
// crash-safe.
func GenerateStore(ctx context.Context, cfg *config.Config, tmpDir string, edges, entities int, seed uint64) (Report, error) {
	names := make([]string, len(cfg.Relations))
	for i, r := range cfg.Relations {
		names[i] = r.Name
	}
	var files []string
	for i := range cfg.EdgePaths {
		p := filepath.Join(tmpDir, fmt.Sprintf("generated-%d.tsv", i))
		f, err := os.Create(p)
		if err != nil {
			return Report{}, err
		}
		err = generate(f, edges, names, entities, mix.Seed(seed, uint64(i)))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return Report{}, err
		}
		files = append(files, p)
	}
	opts := DefaultOptions()
	opts.RelCol = 1
	opts.noSync = true // throw-away data: no fsync
	return Import(ctx, cfg, opts, files)
}
