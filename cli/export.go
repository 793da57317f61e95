package cli

import (
	"bytes"
	"fmt"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/eval"
	"github.com/batchprep/batchprep/graph/export"
	"github.com/batchprep/batchprep/graph/pbg"
	"github.com/batchprep/batchprep/internal/atomicfile"
)

const exportDescription = `
Export a trained checkpoint: every entity's embedding with its name (the
type's global embedding added, as the model uses them), the comparator, and
every relation's operator parameters with its name (both sides with dynamic
relations). docs/training.md gives the layouts and the scoring function.

Formats:
  tsv     one line per entity: type, name, then the values (the default);
          then "@comparator" and "@relation" lines
  binary  a checksummed little-endian file
  pbg     PyTorch-BigGraph's checkpoint layout in the directory --out DIR:
          HDF5 embeddings and model files, checkpoint_version.txt,
          config.json and PBG's entity files (docs/formats-pbg.md)

--out FILE writes the file atomically; --out - writes to stdout, as TSV
does without --out.

Examples:
  batchprep export --config fb15k.toml > embeddings.tsv
  batchprep export --config fb15k.toml --format binary --out embeddings.bin
  batchprep export --config fb15k.toml --format binary --out - | python3 read.py
  batchprep export --config fb15k.toml --format pbg --out pbg-checkpoint/`

func runExport(env *Env, args []string) (err error) {
	fs := newFlagSet(env, "export", "", exportDescription)
	cfgPath := fs.String("config", "", "graph config of the trained model (required)")
	format := fs.String("format", "tsv", "output: tsv, binary or pbg")
	out := fs.String("out", "", "output file, or - for stdout (TSV's default; binary needs --out); a directory for pbg")
	var sets stringList
	fs.Var(&sets, "set", "override a config key: key=value (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *cfgPath == "":
		return usagef("--config is required")
	case *format != "tsv" && *format != "binary" && *format != "pbg":
		return usagef("--format %q: want tsv, binary or pbg", *format)
	case *format == "binary" && *out == "":
		return usagef("--format binary needs --out FILE (or --out - for stdout)")
	case *format == "pbg" && (*out == "" || *out == "-"):
		return usagef("--format pbg needs --out DIR")
	}
	cfg, err := loadConfig(env, *cfgPath, sets)
	if err != nil {
		return err
	}
	store, err := openTrainedStore(*cfgPath, cfg, false)
	if err != nil {
		return err
	}
	defer store.Close()
	if *format == "pbg" {
		return exportPBG(env, *out, cfg, store)
	}
	ev, err := eval.Open(cfg, store)
	if err != nil {
		return err
	}
	if note := ev.Unfinished(); note != "" {
		defer func() {
			if err == nil {
				fmt.Fprintf(env.Stderr, "export: %s\n", note)
			}
		}()
	}
	relNames, err := store.RelationNames()
	if err != nil {
		return err
	}
	exp, err := export.FromCheckpoint(cfg, ev, relNames)
	if err != nil {
		return err
	}
	toStdout := *out == "" || *out == "-"
	var data []byte
	switch {
	case *format == "binary":
		data = export.Encode(exp)
	case toStdout:
		if err := export.WriteTSV(env.Stdout, exp); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	default:
		var buf bytes.Buffer
		if err := export.WriteTSV(&buf, exp); err != nil {
			return err
		}
		data = buf.Bytes()
	}
	if toStdout {
		if _, err := atomicfile.Pieces(env.Stdout).Write(data); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	}
	if err := atomicfile.Write(*out, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	n := 0
	for _, t := range exp.Types {
		n += len(t.Names)
	}
	fmt.Fprintf(env.Stderr, "export: %d entities of dimension %d to %s (%s)\n", n, cfg.Dimension, *out, humanBytes(int64(len(data))))
	return nil
}

// exportPBG writes the checkpoint in PyTorch-BigGraph's layout into dir.
func exportPBG(env *Env, dir string, cfg *config.Config, store *edgestore.Store) error {
	sum, err := pbg.WriteCheckpoint(dir, cfg, store)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "export: %d entities of dimension %d to %s as PBG checkpoint version %d (%d files, %s)\n",
		sum.Entities, cfg.Dimension, dir, sum.Version, sum.Files, humanBytes(sum.Bytes))
	if !sum.Finished {
		fmt.Fprintf(env.Stderr, "export: the run has not finished: PBG would resume it at iteration %d\n", sum.Version)
	}
	return nil
}
