package cli

import (
	"bytes"
	"fmt"

	"github.com/batchprep/batchprep/graph/eval"
	"github.com/batchprep/batchprep/graph/export"
	"github.com/batchprep/batchprep/internal/atomicfile"
)

const exportDescription = `
Export a trained checkpoint's entity embeddings with their names (the
type's global embedding added, as the model uses them).

Formats:
  tsv     one line per entity: type, name, then the values (the default)
  binary  a checksummed little-endian file; layout in docs/training.md

--out FILE writes the file atomically; without it, TSV goes to stdout.

Examples:
  batchprep export --config fb15k.toml > embeddings.tsv
  batchprep export --config fb15k.toml --format binary --out embeddings.bin`

func runExport(env *Env, args []string) (err error) {
	fs := newFlagSet(env, "export", "", exportDescription)
	cfgPath := fs.String("config", "", "graph config of the trained model (required)")
	format := fs.String("format", "tsv", "output: tsv or binary")
	out := fs.String("out", "", "output file (required for binary)")
	var sets stringList
	fs.Var(&sets, "set", "override a config key: key=value (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *cfgPath == "":
		return usagef("--config is required")
	case *format != "tsv" && *format != "binary":
		return usagef("--format %q: want tsv or binary", *format)
	case *format == "binary" && *out == "":
		return usagef("--format binary needs --out FILE")
	}
	cfg, err := loadConfig(*cfgPath, sets)
	if err != nil {
		return err
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
	if note := ev.Unfinished(); note != "" {
		defer func() {
			if err == nil {
				fmt.Fprintf(env.Stderr, "export: %s\n", note)
			}
		}()
	}
	var types []export.Type
	for _, typ := range cfg.EntityTypes() {
		names, emb, err := ev.Entities(typ)
		if err != nil {
			return err
		}
		types = append(types, export.Type{Name: typ, Names: names, Dim: cfg.Dimension, Emb: emb})
	}
	var data []byte
	if *format == "binary" {
		data = export.Encode(types)
	} else {
		var buf bytes.Buffer
		if *out == "" {
			if err := export.WriteTSV(env.Stdout, types); err != nil {
				return fmt.Errorf("writing output: %w", err)
			}
			return nil
		}
		if err := export.WriteTSV(&buf, types); err != nil {
			return err
		}
		data = buf.Bytes()
	}
	if err := atomicfile.Write(*out, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	n := 0
	for _, t := range types {
		n += len(t.Names)
	}
	fmt.Fprintf(env.Stderr, "export: %d entities of dimension %d to %s (%s)\n", n, cfg.Dimension, *out, humanBytes(int64(len(data))))
	return nil
}
