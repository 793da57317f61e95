package train_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/train"
)

// Invariant 10: a parameter that becomes NaN stops the run at the next
// bucket, naming it, before that bucket's checkpoint: the checkpoint of
// the buckets before stays the latest and sound. (The NaN is put into a
// relation operator after the second bucket's checkpoint, in the Bucket
// hook; SequentialIO makes the hook run before the third bucket trains,
// not once its checkpoint is written behind.)
func TestNonFiniteStopsBeforeCheckpoint(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(10), strings.Replace(tinySettings, "num_epochs = 40", "num_epochs = 4", 1), 1)
	st := openStore(t, cfg)
	var tr *train.Trainer
	var logged int
	tr, err := train.New(cfg, st, train.Options{SequentialIO: true, Bucket: func(ev train.Event) {
		logged++
		if ev.Done == 2 {
			tr.Model().Params[1][0].P[0] = float32(math.NaN())
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Run(context.Background())
	if !errors.Is(err, train.ErrNotFinite) || !strings.Contains(err.Error(), "epoch 3 of 4, edge set 0, chunk 0, bucket (0, 0)") ||
		!strings.Contains(err.Error(), "the checkpoint holds the last good state (2 buckets trained)") {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(err.Error(), "the loss is NaN") && !strings.Contains(err.Error(), "holds NaN") {
		t.Fatalf("the message names neither the loss nor a parameter: %v", err)
	}
	man, err := train.ReadManifest(cfg.CheckpointPath)
	if err != nil || man.Buckets != 2 || man.Next.Epoch != 2 || logged != 2 {
		t.Fatalf("checkpoint after the stop: %+v %v (buckets logged %d)", man, err, logged)
	}
	if c := train.VerifyCheckpoint(cfg.CheckpointPath); len(c.Problems) > 0 {
		t.Fatalf("checkpoint after the stop: %v", c.Problems)
	}
	m, err := train.LoadModel(cfg, st.NumRelations(), st.Fingerprint(), cfg.CheckpointPath, man)
	if err != nil || math.IsNaN(float64(m.Params[1][0].P[0])) {
		t.Fatalf("the checkpoint's model: %v", err)
	}
}

// A learning rate that makes training overflow stops the run with a
// message naming the bucket and what is not finite (regression: the run
// failed writing its manifest with "json: unsupported value: NaN").
func TestHugeLearningRateStops(t *testing.T) {
	dir := t.TempDir()
	settings := strings.Replace(tinySettings, "lr = 0.1", "lr = 1e30", 1)
	cfg := fixture(t, dir, ringEdges(10), strings.Replace(settings, "num_epochs = 40", "num_epochs = 3", 1), 2)
	tr, err := train.New(cfg, openStore(t, cfg), train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Run(context.Background())
	if !errors.Is(err, train.ErrNotFinite) || !strings.Contains(err.Error(), "bucket (") || !strings.Contains(err.Error(), "lr (now 1e+30)") ||
		strings.Contains(err.Error(), "json") {
		t.Fatalf("run: %v", err)
	}
	t.Log(err)
}
