package train_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/batchprep/batchprep/graph/train"
)

// pipelineSettings: one worker (deterministic, invariant 2), two epochs of
// two edge chunks each, so that bucket orders, passes and epochs all
// change which partitions are held.
const pipelineSettings = `dimension = 8
num_epochs = 2
num_edge_chunks = 2
batch_size = 10
num_batch_negs = 5
num_uniform_negs = 5
lr = 0.05
eval_fraction = 0.1
workers = 1
seed = 11
bucket_order = %q
`

// trainRun trains cfg (with the extra config lines) from scratch in ckpt
// and returns the digests of every checkpoint it committed (by number),
// the run's I/O by epoch and the last manifest.
func trainRun(t *testing.T, dir, order, ckpt string, seq bool, extra string) (map[int64]string, []train.EpochIO, *train.Manifest) {
	t.Helper()
	_, cfg := withCheckpoint(t, filepath.Join(dir, "config.toml"), filepath.Join(dir, ckpt), extra)
	var tr *train.Trainer
	sums := map[int64]string{}
	events := 0
	var waits float64
	tr, err := train.New(cfg, openStore(t, cfg), train.Options{SequentialIO: seq, Bucket: func(ev train.Event) {
		m := tr.Manifest()
		// Events come one per bucket, in order, once the checkpoint that
		// holds the bucket is committed.
		if m.Seq != ev.Checkpoint || ev.Done != int64(events)+1 || ev.Done > m.Buckets {
			t.Errorf("%s: event of bucket %d in checkpoint %d while the committed one is %d (%d buckets), after %d events", order, ev.Done, ev.Checkpoint, m.Seq, m.Buckets, events)
		}
		events++
		if seq && (ev.WriteWait < 0 || ev.LoadWait < 0) {
			t.Errorf("%s: bucket %d written in turn reports an I/O wait of %gs (loads) and %gs (writes)", order, ev.Done, ev.LoadWait, ev.WriteWait)
		}
		waits += ev.LoadWait + ev.WriteWait
		sums[m.Seq] = digestLine(m, true)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if int64(events) != tr.TotalBuckets() {
		t.Errorf("%s: %d events for %d buckets", order, events, tr.TotalBuckets())
	}
	if load, write := tr.IOWait(); (load + write).Seconds() < waits-1e-6 {
		t.Errorf("%s: the run's I/O wait %v is less than its buckets' %gs", order, load+write, waits)
	}
	return sums, tr.EpochIO(), tr.Manifest()
}

// digestLine describes a checkpoint by the digests of its files, and with
// counters set, its I/O counters and position.
func digestLine(m *train.Manifest, counters bool) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "model %s", m.Model.SHA256)
	for _, r := range m.Tables {
		fmt.Fprintf(&sb, " %s/%d %s", r.Type, r.Partition, r.SHA256)
	}
	if counters {
		fmt.Fprintf(&sb, " io %+v next %+v", m.IO, m.Next)
	}
	return sb.String()
}

// Invariants 3 and 4 with the partition I/O behind training (pipeline.go,
// W1-W6): for every bucket order, with P = 4 and a buffer of 2, and for
// buffers of 3 and 4 partitions (P = 5 and 6, inside_out and the buffer
// order, with bucket and buffer negatives; interleaved buckets with 3 of
// 6), with a commit after every
// bucket, every 3 buckets and every P (the default), every checkpoint a
// run commits (embeddings, model, counters, position) is bit for bit the
// one of a run with no overlap (Options.SequentialIO), the run's disk
// counters per epoch equal PredictIO's exactly, and the trained values
// do not depend on how often checkpoints are committed.
func TestPartitionIOBehindTraining(t *testing.T) {
	cases := []struct {
		order    string
		c, parts int
		neg      string
	}{{"inside_out", 2, 4, "bucket"}, {"outside_in", 2, 4, "bucket"}, {"affinity", 2, 4, "bucket"}, {"random", 2, 4, "bucket"},
		{"buffer", 2, 4, "bucket"}, {"inside_out", 3, 5, "bucket"}, {"buffer", 4, 6, "bucket"}, {"buffer", 4, 6, "buffer"},
		{"buffer", 3, 6, "interleave"}}
	for _, tc := range cases {
		order := tc.order
		t.Run(fmt.Sprintf("%s/c=%d/negatives=%s", order, tc.c, tc.neg), func(t *testing.T) {
			dir := t.TempDir()
			settings := fmt.Sprintf(pipelineSettings, order) + fmt.Sprintf("partition_buffer = %d\nnegatives = %q\n", tc.c, tc.neg)
			if tc.neg == "interleave" {
				settings = fmt.Sprintf(pipelineSettings, order) + fmt.Sprintf("partition_buffer = %d\nnegatives = \"buffer\"\ninterleave_buckets = true\n", tc.c)
			}
			fixture(t, dir, ringEdges(150), settings, tc.parts)
			final := map[string]string{}
			var saved []int64
			for _, every := range []int{1, 3, 0} {
				extra := fmt.Sprintf("checkpoint_buckets = %d", every)
				ck := fmt.Sprintf("k%d", every)
				overlapped, io, man := trainRun(t, dir, order, ck+"-overlap", false, extra)
				sequential, ioSeq, _ := trainRun(t, dir, order, ck+"-sequential", true, extra)
				if len(overlapped) != len(sequential) || len(overlapped) != int(man.Seq) {
					t.Fatalf("k = %d: %d checkpoints overlapped, %d in turn, %d committed", every, len(overlapped), len(sequential), man.Seq)
				}
				// (Interleaved buckets commit only at a group's end.)
				if every == 1 && tc.neg != "interleave" && man.Seq != man.Buckets || every != 1 && man.Seq >= man.Buckets/2 {
					t.Errorf("k = %d: %d commits for %d buckets", every, man.Seq, man.Buckets)
				}
				for s, want := range sequential {
					if overlapped[s] != want {
						t.Errorf("k = %d: checkpoint %d differs:\noverlapped %s\nin turn    %s", every, s, overlapped[s], want)
					}
				}
				_, cfg := withCheckpoint(t, filepath.Join(dir, "config.toml"), filepath.Join(dir, ck+"-overlap"), extra)
				want, err := train.PredictIO(cfg, openStore(t, cfg))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(io, want) || !reflect.DeepEqual(ioSeq, want) {
					t.Errorf("k = %d: disk I/O by epoch:\noverlapped %+v\nin turn    %+v\npredicted  %+v", every, io, ioSeq, want)
				}
				if want[1].Loads == 0 || want[0].Saves == 0 {
					t.Errorf("k = %d: the prediction counts no loads or saves: %+v", every, want)
				}
				final[ck] = digestLine(man, false)
				saved = append(saved, man.IO.SaveBytes)
			}
			if final["k3"] != final["k1"] || final["k0"] != final["k1"] {
				t.Errorf("the trained values depend on checkpoint_buckets:\nk = 1 %s\nk = 3 %s\nk = 4 %s", final["k1"], final["k3"], final["k0"])
			}
			if !(saved[2] < saved[0] && saved[1] < saved[0]) {
				t.Errorf("bytes written with a commit every 1, 3, 4 buckets: %v; want fewer than every bucket", saved)
			}
		})
	}
}

// Invariant 4 and W1-W2, W6 (pipeline.go): a run SIGKILLed while a
// partition is being written behind (its file durable, the model file and
// the manifest not yet written, the next bucket training), with a commit
// every 4 buckets (the default for P = 4), so most kills come between
// commits, leaves the last commit sound, equal to the uninterrupted run's
// of the same number, beside files of the next number that no manifest
// names (or, before the first commit, those files alone); the run started
// again removes them and ends with the uninterrupted run's checkpoint bit
// for bit.
func TestKillDuringWriteBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	fixture(t, dir, ringEdges(150), fmt.Sprintf(pipelineSettings, "inside_out"), 4)
	ref, _, want := trainRun(t, dir, "inside_out", "ref", false, "")
	path, cfg := withCheckpoint(t, filepath.Join(dir, "config.toml"), filepath.Join(dir, "killed"), "")
	child := func(kill int) error {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTrainChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+path, fmt.Sprintf("%s=%d", train.KillWriteBehindEnv, kill))
		return cmd.Run()
	}
	for _, kill := range []int{1, 9, 5} {
		err := child(kill)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("kill in write behind %d: the child was not killed (%v)", kill, err)
		}
		c := train.VerifyCheckpoint(cfg.CheckpointPath)
		if len(c.Problems) > 0 {
			t.Fatalf("kill in write behind %d: the checkpoint left is not sound: %v", kill, c.Problems)
		}
		man := c.Manifest
		if man == nil { // killed before the first commit (W6)
			first, _ := filepath.Glob(filepath.Join(cfg.CheckpointPath, "emb_*.v1.bin"))
			if len(first) == 0 || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "the first one is not committed") {
				t.Errorf("kill in write behind %d, before the first commit: files %v, notes %v", kill, first, c.Notes)
			}
			t.Logf("kill in write behind %d: no commit yet, %d files of the first", kill, len(first))
			continue
		}
		// The digests of the committed checkpoint, as trainRun records
		// them. (The counters differ after a resume: its first bucket
		// loads all its partitions.)
		if r := ref[man.Seq]; !strings.HasPrefix(r, digestLine(man, false)+" io ") || !strings.HasSuffix(r, fmt.Sprintf(" next %+v", man.Next)) {
			t.Errorf("kill in write behind %d: checkpoint %d differs from the uninterrupted run's", kill, man.Seq)
		}
		uncommitted, _ := filepath.Glob(filepath.Join(cfg.CheckpointPath, fmt.Sprintf("emb_*.v%d.bin", man.Seq+1)))
		if len(uncommitted) == 0 {
			t.Errorf("kill in write behind %d: no partition file of checkpoint %d: the kill did not come while it was written behind", kill, man.Seq+1)
		}
		t.Logf("kill in write behind %d: checkpoint %d committed, %d files of the next", kill, man.Seq, len(uncommitted))
	}
	if err := child(0); err != nil {
		t.Fatalf("the run started again failed: %v", err)
	}
	got, err := train.ReadManifest(cfg.CheckpointPath)
	if err != nil || got == nil || !got.Done || got.Model.SHA256 != want.Model.SHA256 || !reflect.DeepEqual(got.Tables, want.Tables) {
		t.Fatalf("the resumed run's checkpoint differs from the uninterrupted run's (%v)", err)
	}
	if c := train.VerifyCheckpoint(cfg.CheckpointPath); len(c.Problems) > 0 {
		t.Fatalf("final checkpoint: %v", c.Problems)
	}
	files, _ := filepath.Glob(filepath.Join(cfg.CheckpointPath, "*.bin"))
	if len(files) != len(got.Tables)+1 {
		t.Errorf("%d data files left for a checkpoint of %d", len(files), len(got.Tables)+1)
	}
}
