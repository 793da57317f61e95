package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/parquet"
)

const convertDescription = `
Convert a sequence corpus between CTF and Parquet: a CTF input is written
as Parquet, a Parquet input as CTF (the input's format is detected from its
first bytes or a .parquet name). The output is written to a temporary file
beside OUT, fsynced and renamed over OUT, so a failed conversion leaves OUT
as it was. IN and OUT may name objects, s3://BUCKET/KEY, read with the
--fetch-* and --cache-* flags (docs/object-storage.md); an object OUT is
written to a local temporary file ($TMPDIR) and then put in one request
(at most 5 GiB), so a failed conversion leaves it as it was too.

Parquet layout (docs/formats-parquet-corpus.md): one row per sequence, a
string column "id", and one column per stream: a dense stream as a list of
lists of floats (one inner list of DIM values per sample); a sparse stream
as a list of int32 indices, one per sample, when every sample is one index
with value 1 (one-hot), plus a list of floats NAME_values when the values
are not all 1; as lists of lists when a sample has several entries. The
streams are recorded in the file's metadata, so reading it back needs no
--stream flags for inspect and convert.

Without --stream, the streams of a CTF input are inferred from a scan (as
inspect does; the dimensions are the largest seen) and printed; those of a
Parquet input come from its metadata or its schema. A bad sequence stops
the conversion: nothing is dropped.

Examples:
  batchprep convert atis.train.ctf atis.train.parquet --stream S0:943:sparse --stream S1:26:sparse --stream S2:129:sparse
  batchprep convert atis.train.parquet back.ctf
  batchprep convert s3://corpora/atis.train.ctf s3://corpora/atis.train.parquet`

func runConvert(env *Env, args []string) error {
	fs := newFlagSet(env, "convert", "IN OUT [--stream NAME:DIM[:sparse] ...]", convertDescription)
	var streams stringList
	fs.Var(&streams, "stream", "a stream `NAME:DIM[:sparse]` (repeatable; default: inferred from IN)")
	rgBytes := byteSize(parquet.DefaultRowGroupBytes)
	fs.Var(&rgBytes, "row-group-bytes", "Parquet output: end a row group once its sequences hold this `size` of data in memory (4 bytes a value or index), e.g. 64MiB")
	rgRows := fs.Int("row-group-rows", 0, "Parquet output: also end a row group after this many sequences (0: no limit)")
	readChunk := byteSize(parquet.DefaultChunkBytes)
	fs.Var(&readChunk, "read-chunk-bytes", "Parquet output: end the pages of the larger columns where a read of the output with --chunk-bytes `SIZE` ends its chunks, so that loading a chunk reads only its own pages")
	objects := objectFlags(fs, env)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want IN and OUT, got %d arguments", len(pos))
	}
	in, out := pos[0], pos[1]
	if rgBytes < 1 || *rgRows < 0 || readChunk < 1 {
		return usagef("--row-group-bytes and --read-chunk-bytes must be positive and --row-group-rows >= 0")
	}
	if same, _ := sameFile(in, out); same || file.IsObject(in) && in == out {
		return usagef("IN and OUT are the same file (%s)", in)
	}
	cfg := ctf.Config{ChunkBytes: ctf.DefaultChunkBytes}
	for _, s := range streams {
		st, err := ctf.ParseStreamFlag(s)
		if err != nil {
			return usagef("%v", err)
		}
		cfg.Streams = append(cfg.Streams, st)
	}
	dst, err := newConvertOutput(out)
	if err != nil {
		return err
	}
	defer dst.close()
	src := newCorpusFiles(env.Ctx, *objects)
	defer src.close()
	format, err := src.detect(in)
	if err != nil {
		return err
	}
	if len(cfg.Streams) == 0 {
		if cfg.Streams, err = convertStreams(env, src, in, format); err != nil {
			return err
		}
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	r, err := src.open(in, cfg)
	if err != nil {
		return err
	}
	defer r.Close()
	if format == file.CTF {
		st, err := file.ToParquet(r, dst.path, parquet.WriterOptions{RowGroupBytes: int64(rgBytes), RowGroupRows: *rgRows, ChunkBytes: int64(readChunk)})
		if err != nil {
			return fmt.Errorf("%s: %w", out, err)
		}
		if err := dst.upload(env.Ctx, *objects); err != nil {
			return err
		}
		var forms []string
		for s, f := range st.Forms {
			forms = append(forms, fmt.Sprintf("%s %s", cfg.Streams[s].Name, f))
		}
		fmt.Fprintf(env.Stderr, "batchprep convert: wrote %d sequences to %s as Parquet (%s)\n", st.Sequences, out, strings.Join(forms, ", "))
		return nil
	}
	st, err := file.ToCTF(r, dst.path)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := dst.upload(env.Ctx, *objects); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "batchprep convert: wrote %d sequences to %s as CTF\n", st.Sequences, out)
	if st.RenumberedIDs > 0 {
		fmt.Fprintf(env.Stderr, "batchprep convert: %d sequence ids were not digits (or repeated the previous id) and were replaced by their row numbers\n", st.RenumberedIDs)
	}
	return nil
}

// convertStreams infers the streams of IN and says which on stderr.
func convertStreams(env *Env, src corpusFiles, in string, format file.Format) ([]corpus.Stream, error) {
	var streams []corpus.Stream
	var err error
	if format == file.Parquet {
		var inf *parquet.Inference
		if inf, err = src.inferParquet(in); err == nil {
			streams = inf.Streams
		}
	} else {
		streams, err = src.inferCTF(in)
		if err == nil && len(streams) == 0 {
			err = fmt.Errorf("%s: no \"|name\" samples found; cannot infer streams (is it a CTF file?)", in)
		}
	}
	if err != nil {
		return nil, err
	}
	var flags []string
	for _, s := range streams {
		flags = append(flags, "--stream "+ctf.FormatStreamFlag(s))
	}
	fmt.Fprintf(env.Stderr, "batchprep convert: streams inferred from %s: %s\n", in, strings.Join(flags, " "))
	return streams, nil
}

// sameFile reports whether a and b name one existing file.
func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return filepath.Clean(a) == filepath.Clean(b), nil
	}
	return os.SameFile(sa, sb), nil
}
