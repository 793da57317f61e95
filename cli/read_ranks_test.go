package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/shared"
)

// TestReadRanksUnion: the sequence half across machines, through the command line: W
// `batchprep read --workers W --rank R` runs, as torchrun (RANK,
// WORLD_SIZE) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) would
// start them, need no coordinator: at every step the ranks' minibatches,
// concatenated in rank order, are the single-worker minibatch, and every
// rank reports the same step, positions and flags.
func TestReadRanksUnion(t *testing.T) {
	tiny := tinyCTF(t)
	cases := [][]string{
		{tiny, "--stream", "x:2", "--stream", "y:1", "--mb", "7", "--epochs", "2", "--seed", "4", "--chunk-sequences", "4"},
		{tiny, "--stream", "x:2", "--stream", "y:1", "--defines-mb-size", "y", "--mb", "3*2:5", "--epoch-size", "20", "--epochs", "3", "--randomize", "none"},
	}
	for i, args := range cases {
		t.Run(fmt.Sprintf("tiny%d", i), func(t *testing.T) { checkRanksUnion(t, args) })
	}
}

// TestReadRanksUnionATIS is the same on ATIS (shared data), 40 minibatches.
func TestReadRanksUnionATIS(t *testing.T) {
	if testing.Short() {
		t.Skip("shared data")
	}
	atis := shared.Need(t, "ctf", "atis", "atis.train.ctf")
	checkRanksUnion(t, []string{atis, "--stream", "S0:943:sparse", "--stream", "S2:129:sparse", "--mb", "512",
		"--max-minibatches", "40", "--chunk-bytes", "65536"})
}

func checkRanksUnion(t *testing.T, args []string) {
	single, _ := mustRead(t, append(args, "--format", "jsonl")...)
	for _, w := range []int{2, 3, 5} {
		ranks := make([][]readRec, w)
		for r := 0; r < w; r++ {
			ranks[r], _ = mustRead(t, append(args, "--workers", strconv.Itoa(w), "--rank", strconv.Itoa(r), "--format", "jsonl")...)
		}
		for r := range ranks {
			if len(ranks[r]) != len(single) {
				t.Fatalf("W=%d rank %d: %d minibatches, single worker %d", w, r, len(ranks[r]), len(single))
			}
		}
		for step, want := range single {
			var seqs []int
			var ids []string
			samples := map[string]int{}
			for r := range ranks {
				got := ranks[r][step]
				if got.Step != want.Step || got.Start != want.Start || got.End != want.End || got.Epoch != want.Epoch ||
					got.Sweep != want.Sweep || got.EndOfSweep != want.EndOfSweep || got.EndOfEpoch != want.EndOfEpoch {
					t.Fatalf("W=%d step %d rank %d: header %+v, single worker %+v", w, step, r, got, want)
				}
				seqs, ids = append(seqs, got.Sequences...), append(ids, got.IDs...)
				for k, v := range got.Samples {
					samples[k] += v
				}
			}
			if !slices.Equal(seqs, want.Sequences) || !slices.Equal(ids, want.IDs) {
				t.Fatalf("W=%d step %d: union of ranks %v, single worker %v", w, step, seqs, want.Sequences)
			}
			for k, v := range want.Samples {
				if samples[k] != v {
					t.Fatalf("W=%d step %d stream %s: ranks hold %d samples, single worker %d", w, step, k, samples[k], v)
				}
			}
		}
	}
}

// TestReadRanksSplitChunks: with --split chunks (4 sequences per chunk,
// so sequence o is in chunk o/4), rank r of 3 gets, at every step, exactly
// the single worker's sequences whose chunk is r's (chunk mod 3), in the
// single worker's order; the header is the single worker's. File order is
// refused as a usage error.
func TestReadRanksSplitChunks(t *testing.T) {
	args := []string{tinyCTF(t), "--stream", "x:2", "--stream", "y:1", "--mb", "7", "--epochs", "2", "--seed", "4",
		"--chunk-sequences", "4", "--window-chunks", "2", "--format", "jsonl"}
	single, _ := mustRead(t, args...)
	const w = 3
	got := 0
	for r := 0; r < w; r++ {
		rank, _ := mustRead(t, append(args, "--workers", "3", "--rank", strconv.Itoa(r), "--split", "chunks")...)
		if len(rank) != len(single) {
			t.Fatalf("rank %d: %d minibatches, single worker %d", r, len(rank), len(single))
		}
		for step, want := range single {
			var own []int
			for _, o := range want.Sequences {
				if (o/4)%w == r {
					own = append(own, o)
				}
			}
			if g := rank[step]; !slices.Equal(g.Sequences, own) || g.Start != want.Start || g.End != want.End {
				t.Fatalf("rank %d step %d: %v [%d, %d), want %v [%d, %d)", r, step, g.Sequences, g.Start, g.End, own, want.Start, want.End)
			}
			got += len(own)
		}
	}
	if got == 0 {
		t.Fatal("no sequence delivered")
	}
	code, _, stderr := run(t, append([]string{"read"}, append(args, "--workers", "2", "--split", "chunks", "--randomize", "none")...)...)
	if code != 2 || !strings.Contains(stderr, "--split chunks needs a randomized order") {
		t.Errorf("file order split by chunks: exit %d, %q", code, stderr)
	}
}
