package readopts

import (
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus/source"
)

// TestDefaults: invariant 1.
func TestDefaults(t *testing.T) {
	o := Defaults()
	o.Streams = []string{"x:2"}
	b, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	if b.Source.Schedule.At(0) != 256 || b.Source.EpochSize != source.EpochFull || b.Source.Randomize.Kind != "window" ||
		b.Source.Randomize.WindowChunks != 128 || b.Source.Workers != 1 || b.CTF.ChunkBytes != 1<<20 || b.Source.PrefetchChunks != 64 || b.HasStart {
		t.Fatalf("defaults: %+v", b)
	}
}

// TestFieldErrors: invariant 2, in both spellings.
func TestFieldErrors(t *testing.T) {
	cases := []struct {
		field, flag, req string
		edit             func(o *Options)
	}{
		{"stream", "at least one --stream", "at least one stream", func(o *Options) { o.Streams = nil }},
		{"stream", "--stream x", "stream x", func(o *Options) { o.Streams = []string{"x"} }},
		{"mb", "--mb: ", "mb: ", func(o *Options) { o.MB = "0" }},
		{"epoch-size", "--epoch-size: ", "epoch_size: ", func(o *Options) { o.EpochSize = "zero" }},
		{"epochs", "--epochs 0", "epochs 0", func(o *Options) { o.Epochs = 0 }},
		{"randomize", `--randomize "x"`, `randomize "x"`, func(o *Options) { o.Randomize = "x" }},
		{"window-chunks", "--window-chunks and --window-samples", "window_chunks and window_samples", func(o *Options) {
			o.Given = map[string]bool{"window-chunks": true, "window-samples": true}
		}},
		{"window-samples", "--window-samples 0", "window_samples 0", func(o *Options) { o.Given = map[string]bool{"window-samples": true} }},
		{"chunk-sequences", "--chunk-sequences 0", "chunk_sequences 0", func(o *Options) { o.Given = map[string]bool{"chunk-sequences": true} }},
		{"chunk-bytes", "--chunk-bytes 0", "chunk_bytes 0", func(o *Options) { o.ChunkBytes = 0 }},
		{"workers", "--workers 0", "workers 0", func(o *Options) { o.Workers = 0 }},
		{"rank", "--rank 2: must be in [0, 2)", "rank 2", func(o *Options) { o.Workers, o.Rank = 2, 2 }},
		{"split", `--split "x"`, `split "x"`, func(o *Options) { o.Split = "x" }},
		{"split", "--split chunks needs a randomized order (--randomize window", "split chunks needs a randomized order (randomize window", func(o *Options) {
			o.Split, o.Randomize = "chunks", "none"
		}},
		{"start", "--start and --state-in", "start and state exclude", func(o *Options) {
			o.Given, o.HasState = map[string]bool{"start": true}, true
		}},
		{"max-errors", "--max-errors -1", "max_errors -1", func(o *Options) { o.MaxErrors = -1 }},
		{"prefetch-chunks", "--prefetch-chunks -1", "prefetch_chunks -1", func(o *Options) { o.PrefetchChunks = -1 }},
		{"max-minibatches", "--max-minibatches -1", "max_minibatches -1", func(o *Options) { o.MaxMinibatches = -1 }},
	}
	for _, c := range cases {
		o := Defaults()
		o.Streams = []string{"x:2"}
		c.edit(&o)
		_, err := o.Build()
		fe, ok := err.(*FieldError)
		if !ok {
			t.Errorf("%s: error %v, want a *FieldError", c.field, err)
			continue
		}
		if fe.Field != c.field || !strings.Contains(fe.Error(), c.flag) || !strings.Contains(fe.Render(RequestName), c.req) {
			t.Errorf("%s: field %q, flag form %q, request form %q", c.field, fe.Field, fe.Error(), fe.Render(RequestName))
		}
	}
}

func TestRenderUnbalanced(t *testing.T) {
	e := &FieldError{Field: "x", msg: "a {b} c { d"}
	if got := e.Render(RequestName); got != "a b c { d" {
		t.Fatalf("got %q", got)
	}
}

// TestCNTKChunkDefault: invariant 1. The cntk randomizer without a chunk size
// gets CNTK's 32 MiB chunks; a size given, or another randomizer, keeps its
// own.
func TestCNTKChunkDefault(t *testing.T) {
	cases := []struct {
		randomize string
		given     map[string]bool
		bytes     int64
		seqs      int
	}{
		{"cntk", nil, 32 << 20, 0},
		{"window", nil, 1 << 20, 0},
		{"none", nil, 1 << 20, 0},
		{"cntk", map[string]bool{"chunk-bytes": true}, 1 << 20, 0},
		{"cntk", map[string]bool{"chunk-sequences": true}, 0, 5},
	}
	for _, c := range cases {
		o := Defaults()
		o.Streams, o.Randomize, o.Given, o.ChunkSequences = []string{"x:2"}, c.randomize, c.given, 5
		b, err := o.Build()
		if err != nil {
			t.Fatal(err)
		}
		if b.CTF.ChunkBytes != c.bytes || b.CTF.ChunkSequences != c.seqs {
			t.Errorf("%s %v: chunk bytes %d, sequences %d; want %d, %d", c.randomize, c.given, b.CTF.ChunkBytes, b.CTF.ChunkSequences, c.bytes, c.seqs)
		}
	}
}

// TestSplitBuilt: --split chunks sets the source's split by chunks; the
// default and "balanced" keep invariant 6's split.
func TestSplitBuilt(t *testing.T) {
	for split, want := range map[string]bool{"": false, "balanced": false, "chunks": true} {
		o := Defaults()
		o.Streams, o.Split, o.Workers = []string{"x:2"}, split, 2
		b, err := o.Build()
		if err != nil || b.Source.SplitChunks != want {
			t.Errorf("split %q: SplitChunks %v (%v), want %v", split, b.Source.SplitChunks, err, want)
		}
	}
}
