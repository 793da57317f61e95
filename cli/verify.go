package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/internal/plural"
)

const verifyDescription = `
Check what batchprep wrote, without training or printing batches: every
file is read and compared with its manifest (sizes, headers, checksums),
and every problem is listed, one per line, naming the file and what is
wrong. Checks that pass are listed as "ok".

What is checked:
  store        --config CFG (and --set key=value as given to train):
               entity manifest and files, every edge set's manifest and
               bucket files; directories left by killed imports are noted
               (the next import removes them)
  plan state   --plan-state FILE (with --config: also that it fits the
               config and the store)
  read state   --read-state FILE: its format (the fingerprint is checked
               against the corpus when read resumes from it)
  index cache  --index-cache CORPUS: the cache for the --stream (and
               chunking) flags that read and inspect would use (a CTF
               file's index, a Parquet file's counts)
  checkpoint   --checkpoint DIR (a problem when DIR is missing), or with
               --config its checkpoint_path when that directory exists:
               the manifest and every file it names (sizes, SHA-256,
               layouts), the training log, and with --config that the
               checkpoint was made with that config
  export       --export FILE: a binary embeddings export (checksum, layout)

Exit codes: 0 no problem, 1 at least one problem, 2 usage.

Examples:
  batchprep verify --config fb15k.toml
  batchprep verify --config fb15k.toml --plan-state plan.json
  batchprep verify --config fb15k.toml --set checkpoint_path=model/run2
  batchprep verify --read-state st.json
  batchprep verify --checkpoint model/fb15k
  batchprep verify --export embeddings.bin
  batchprep verify --index-cache corpus.ctf --stream S0:943:sparse --stream S1:26:sparse`

func runVerify(env *Env, args []string) error {
	fs := newFlagSet(env, "verify", "", verifyDescription)
	cfgPath := fs.String("config", "", "graph config `file` whose store to check")
	var sets stringList
	fs.Var(&sets, "set", "with --config: override a config key, key=value (repeatable), as given to train")
	planState := fs.String("plan-state", "", "plan state `file` to check")
	readState := fs.String("read-state", "", "read state `file` to check")
	cache := fs.String("index-cache", "", "the `CORPUS` whose index cache to check")
	ckpt := fs.String("checkpoint", "", "checkpoint `directory` to check (default with --config: its checkpoint_path, when present)")
	exported := fs.String("export", "", "binary embeddings export `file` to check")
	var streams stringList
	fs.Var(&streams, "stream", "with --index-cache: stream `NAME:DIM[:sparse]` (repeatable)")
	mb := fs.String("defines-mb-size", "", "with --index-cache: the `NAME` of the stream whose lines count as samples (default: every line is a sample)")
	label := fs.String("label", "", "with --index-cache: the `NAME` of the label stream (default: the minibatch-size count)")
	chunkBytesV := byteSize(defaultReadChunkBytes)
	fs.Var(&chunkBytesV, "chunk-bytes", "with --index-cache: chunk `size` in bytes, as given to read (default: 1MiB, read's; give 32MiB for a cache that read --randomize cntk wrote without a chunk flag)")
	chunkSeqs := fs.Int("chunk-sequences", 0, "with --index-cache: sequences per chunk (instead of --chunk-bytes)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *cfgPath == "" && *planState == "" && *readState == "" && *cache == "" && *ckpt == "" && *exported == "":
		return usagef("nothing to verify: give --config, --plan-state, --read-state, --index-cache, --checkpoint or --export")
	case *cache != "" && len(streams) == 0:
		return usagef("--index-cache needs the --stream flags the cache was built for")
	case len(sets) > 0 && *cfgPath == "":
		return usagef("--set needs --config")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	rep := &verifyReport{env: env}
	var cfg *config.Config
	var store *edgestore.Store
	if *cfgPath != "" {
		var err error
		if cfg, store, err = verifyStore(rep, *cfgPath, sets); err != nil {
			return err
		}
		if store != nil {
			defer store.Close()
		}
	}
	if *planState != "" {
		verifyPlanState(rep, *planState, cfg, store)
	}
	dir := *ckpt
	if dir == "" && cfg != nil && cfg.CheckpointPath != "" {
		if _, err := os.Stat(cfg.CheckpointPath); err == nil {
			dir = cfg.CheckpointPath
		}
	}
	switch fi, err := os.Stat(*ckpt); {
	case *ckpt == "":
	case os.IsNotExist(err):
		rep.problem(fmt.Errorf("--checkpoint %s: no such directory", *ckpt))
		dir = ""
	case err != nil:
		rep.problem(fmt.Errorf("--checkpoint %s: %w", *ckpt, err))
		dir = ""
	case !fi.IsDir():
		rep.problem(fmt.Errorf("--checkpoint %s: not a directory (give the checkpoint_path directory)", *ckpt))
		dir = ""
	}
	if dir != "" {
		verifyCheckpoint(rep, dir, cfg, store)
	}
	if *exported != "" {
		verifyExport(rep, *exported)
	}
	if *readState != "" {
		if err := checkStateKind(*readState, "read"); err != nil {
			rep.problem(err)
		} else if _, err := source.ReadStateFile(*readState); err != nil {
			rep.problem(err)
		} else {
			rep.ok("%s: a well-formed read state", *readState)
		}
	}
	if *cache != "" {
		cc := ctf.Config{DefinesMBSize: *mb, Label: *label, ChunkBytes: int64(chunkBytesV), ChunkSequences: *chunkSeqs}
		if !set["chunk-bytes"] && *chunkSeqs > 0 {
			cc.ChunkBytes = 0
		}
		for _, s := range streams {
			st, err := ctf.ParseStreamFlag(s)
			if err != nil {
				return usagef("%v", err)
			}
			cc.Streams = append(cc.Streams, st)
		}
		err := file.VerifyIndexCache(*cache, cc)
		switch {
		case err == nil:
			rep.ok("%s: index cache matches %s", file.IndexCachePath(*cache, cc), *cache)
		case os.IsNotExist(err):
			rep.problem(fmt.Errorf("%s: no index cache for these flags (read --cache-index writes one)", file.IndexCachePath(*cache, cc)))
		default:
			rep.problem(err)
		}
	}
	if rep.problems > 0 {
		return fmt.Errorf("%s found", plural.Count(rep.problems, "problem"))
	}
	return nil
}

// verifyReport prints the checks on stdout as they are made.
type verifyReport struct {
	env      *Env
	problems int
}

func (r *verifyReport) ok(format string, a ...any) {
	fmt.Fprintf(r.env.Stdout, "ok       %s\n", fmt.Sprintf(format, a...))
}

func (r *verifyReport) note(format string, a ...any) {
	fmt.Fprintf(r.env.Stdout, "note     %s\n", fmt.Sprintf(format, a...))
}

func (r *verifyReport) problem(err error) {
	r.problems++
	fmt.Fprintf(r.env.Stdout, "problem  %s\n", oneprefix("verify", err.Error()))
}

// verifyStore checks the store of the config at path, with the --set
// overrides; it returns the config and the open store when both could be
// opened, and an error only for a --set that is a usage mistake.
func verifyStore(rep *verifyReport, path string, sets []string) (*config.Config, *edgestore.Store, error) {
	cfg, err := readConfig(rep.env, path)
	if err == nil {
		cfg, err = applySets(cfg, sets)
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return nil, nil, err
	}
	if err != nil {
		rep.problem(err)
		return nil, nil, nil
	}
	left, err := edgestore.Leftovers(cfg)
	if err != nil {
		rep.problem(err)
	}
	for _, d := range left {
		rep.note("%s: left by an interrupted import; never read, the next import removes it", d)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		rep.problem(err)
		return cfg, nil, nil
	}
	probs := st.Problems()
	for _, p := range probs {
		rep.problem(p)
	}
	if len(probs) == 0 {
		var edges int64
		for i := 0; i < st.NumEdgeSets(); i++ {
			edges += st.TotalEdges(i)
		}
		L, R := st.Partitions()
		rep.ok("%s: store sound: entity_path %s, %s, %dx%d buckets each, %s, every checksum matches",
			path, cfg.EntityPath, plural.Count(st.NumEdgeSets(), "edge set"), L, R, plural.Count(edges, "edge"))
	}
	return cfg, st, nil
}

// verifyPlanState checks a plan state file, and with a config and store
// that it fits them.
func verifyPlanState(rep *verifyReport, path string, cfg *config.Config, store *edgestore.Store) {
	if err := checkStateKind(path, "plan"); err != nil {
		rep.problem(err)
		return
	}
	s, err := plan.ReadStateFile(path)
	if err != nil {
		rep.problem(err)
		return
	}
	if cfg == nil || store == nil {
		rep.ok("%s: a well-formed plan state (give a sound --config to check that it fits)", path)
		return
	}
	p, err := plan.New(store, plan.OptionsFromConfig(cfg))
	if err != nil {
		rep.problem(err)
		return
	}
	if _, err := p.Iter(*s); err != nil {
		rep.problem(fmt.Errorf("%s: %w", path, err))
		return
	}
	rep.ok("%s: a plan state that fits the config and the store", path)
}
