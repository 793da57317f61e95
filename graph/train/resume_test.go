package train_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
)

const resumeSettings = `dimension = 32
num_epochs = 3
batch_size = 20
num_batch_negs = 10
num_uniform_negs = 20
comparator = "cos"
loss_fn = "ranking"
lr = 0.05
eval_fraction = 0.1
bucket_order = "affinity"
workers = 1
seed = 3
`

// childEnv names the config a child test process trains (TestTrainChild).
const childEnv = "BATCHPREP_TRAIN_CHILD"

// TestTrainChild is not a test on its own: run by TestKillAndResume in a
// child process, it trains the config named by $BATCHPREP_TRAIN_CHILD.
func TestTrainChild(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("child process of TestKillAndResume only")
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(cfg, openStore(t, cfg), train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// withCheckpoint writes a copy of the config at path with another
// checkpoint_path (and extra lines appended) and loads it.
func withCheckpoint(t *testing.T, path, ckpt, extra string) (string, *config.Config) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "checkpoint_path") {
			l = "checkpoint_path = " + strconv.Quote(ckpt)
		}
		lines = append(lines, l)
		if l == "" && extra != "" {
			lines, extra = append(lines, extra), ""
		}
	}
	out := filepath.Join(filepath.Dir(ckpt), filepath.Base(ckpt)+".toml")
	if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, cfg
}

// Invariant 4: a child process training the same config is killed
// (SIGKILL) at random moments and restarted until it finishes; its final
// checkpoint equals, file digest for file digest, an uninterrupted run's
// (one worker: deterministic, invariant 2). BATCHPREP_KILL_ROUNDS sets
// how many kills (default 4). Also with the buffer order, a buffer of 4
// and buffer negatives at P = 6 (the buffer's content is replayed), and
// with interleaved buckets (groups form again where the run resumes).
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Run("affinity/P=2", func(t *testing.T) { killAndResume(t, resumeSettings, 2, 200) })
	buffered := strings.Replace(resumeSettings, `bucket_order = "affinity"`,
		"bucket_order = \"buffer\"\npartition_buffer = 4\nnegatives = \"buffer\"", 1)
	t.Run("buffer/P=6/c=4", func(t *testing.T) { killAndResume(t, buffered, 6, 1200) })
	t.Run("buffer/P=6/c=4/interleave", func(t *testing.T) { killAndResume(t, buffered+"interleave_buckets = true\n", 6, 1200) })
	t.Run("buffer/P=6/c=4/degree", func(t *testing.T) {
		killAndResume(t, strings.Replace(buffered, `negatives = "buffer"`, `negatives = "buffer_degree"`, 1), 6, 1200)
	})
}

func killAndResume(t *testing.T, settings string, parts, edges int) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(edges), settings, parts)
	base := filepath.Join(dir, "config.toml")
	tr, err := train.New(cfg, openStore(t, cfg), train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	full := time.Since(start)
	want := tr.Manifest()

	rounds := 4
	if s := os.Getenv("BATCHPREP_KILL_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	path, _ := withCheckpoint(t, base, filepath.Join(dir, "killed"), "")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	kills := 0
	for attempt := 0; ; attempt++ {
		if attempt > rounds+50 {
			t.Fatalf("no finish after %d attempts", attempt)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestTrainChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if kills < rounds {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("child failed: %v", err)
				}
				t.Logf("child finished before its kill (%d kills)", kills)
				goto finished
			case <-time.After(time.Duration(rng.Int64N(int64(full)+int64(50*time.Millisecond))) + 30*time.Millisecond):
				cmd.Process.Kill()
				<-done
				kills++
				continue
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("child failed: %v", err)
		}
		break
	}
finished:
	got, err := train.ReadManifest(filepath.Join(dir, "killed"))
	if err != nil || got == nil {
		t.Fatalf("manifest: %v", err)
	}
	if !got.Done || got.Buckets != want.Buckets || got.Edges != want.Edges {
		t.Fatalf("killed run: done %v, %d buckets %d edges; uninterrupted %d, %d", got.Done, got.Buckets, got.Edges, want.Buckets, want.Edges)
	}
	digests := func(m *train.Manifest) map[string]string {
		d := map[string]string{"model": m.Model.SHA256}
		for _, r := range m.Tables {
			d[r.Type+"/"+strconv.Itoa(r.Partition)] = r.SHA256
		}
		return d
	}
	g, w := digests(got), digests(want)
	for k, v := range w {
		if g[k] != v {
			t.Errorf("%s differs after %d kills", k, kills)
		}
	}
	if len(g) != len(w) {
		t.Errorf("killed run has %d files, uninterrupted %d", len(g), len(w))
	}
	t.Logf("%d kills; uninterrupted run %v", kills, full)
}

// Invariant 5: a checkpoint from a different config is refused, naming
// every differing key with both values; num_epochs may grow.
func TestCheckpointFromOtherConfigRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20), strings.Replace(tinySettings, "num_epochs = 40", "num_epochs = 1", 1), 1)
	st := openStore(t, cfg)
	tr, err := train.New(cfg, st, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "config.toml")
	data, _ := os.ReadFile(base)
	other := strings.NewReplacer("lr = 0.1", "lr = 0.2", `operator = "complex_diagonal"`, `operator = "diagonal"`).Replace(string(data))
	if err := os.WriteFile(base, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg2, err := config.Load(base)
	if err != nil {
		t.Fatal(err)
	}
	_, err = train.New(cfg2, st, train.Options{})
	if !errors.Is(err, train.ErrCheckpoint) {
		t.Fatalf("got %v, want ErrCheckpoint", err)
	}
	for _, k := range []string{"lr: checkpoint has 0.1, config has 0.2", "relations[0].operator", "relations[1].operator"} {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("error does not name %q:\n%v", k, err)
		}
	}
	// More epochs continue the same run.
	more := strings.Replace(string(data), "num_epochs = 1", "num_epochs = 2", 1)
	os.WriteFile(base, []byte(more), 0o644)
	cfg3, _ := config.Load(base)
	tr3, err := train.New(cfg3, st, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr3.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := tr3.Manifest(); m.Buckets != 2 || !m.Done || len(m.History) != 2 {
		t.Fatalf("after growing num_epochs: %d buckets, done %v, %d epochs of history", m.Buckets, m.Done, len(m.History))
	}
}

// Invariant 4: a corrupted file of the checkpoint is refused, not used.
func TestCorruptCheckpointRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20), strings.Replace(tinySettings, "num_epochs = 40", "num_epochs = 1", 1), 1)
	st := openStore(t, cfg)
	tr, _ := train.New(cfg, st, train.Options{})
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(cfg.CheckpointPath, tr.Manifest().Model.File)
	data, _ := os.ReadFile(mpath)
	data[len(data)-1] ^= 1
	os.WriteFile(mpath, data, 0o644)
	if _, err := train.New(cfg, st, train.Options{}); !errors.Is(err, train.ErrCheckpoint) {
		t.Fatalf("corrupt model file: got %v", err)
	}
	man := filepath.Join(cfg.CheckpointPath, train.ManifestName)
	mdata, _ := os.ReadFile(man)
	edited := strings.Replace(string(mdata), `"seq": 1,`, `"seq": 7,`, 1)
	if edited == string(mdata) {
		t.Fatalf("no seq in the manifest:\n%s", mdata)
	}
	os.WriteFile(man, []byte(edited), 0o644)
	if _, err := train.ReadManifest(cfg.CheckpointPath); !errors.Is(err, train.ErrCheckpoint) {
		t.Fatalf("edited manifest: got %v", err)
	}
}

// Invariant 4 with a commit every P x c/2 buckets (the default, W6; P = 4
// with a buffer of 2, P = 6 with a buffer of 4 and the buffer order):
// a run whose context is canceled at various batches stops with a
// committed checkpoint that equals, digest for digest, the uninterrupted
// run's state after the same bucket (a run that commits after every
// bucket gives it), and a new run from it ends with the uninterrupted
// run's embeddings and model. A cancel during a bucket that follows
// buckets not yet committed lets that bucket finish and commits after it
// (off the every-P schedule); one right after a commit stops between
// batches, leaving that commit. A cancel in the run's last batch ends the
// run as if it had not come.
func TestInterruptBetweenCommits(t *testing.T) {
	for _, tc := range []struct {
		order, extra string
		c, parts     int
	}{{"inside_out", "", 2, 4}, {"buffer", "", 4, 6}, {"buffer", "negatives = \"buffer\"\n", 4, 6},
		{"buffer", "negatives = \"buffer_degree\"\n", 4, 6}} {
		t.Run(fmt.Sprintf("%s/c=%d/%s", tc.order, tc.c, strings.NewReplacer("\n", "", `"`, "", " ", "").Replace(tc.extra)), func(t *testing.T) {
			interruptBetweenCommits(t, tc.order, tc.extra, tc.c, tc.parts)
		})
	}
}

func interruptBetweenCommits(t *testing.T, order, extra string, c, parts int) {
	every := parts * max(c/2, 1) // the default commit interval
	dir := t.TempDir()
	fixture(t, dir, ringEdges(600), fmt.Sprintf(pipelineSettings, order)+fmt.Sprintf("partition_buffer = %d\n", c)+extra, parts)
	base := filepath.Join(dir, "config.toml")
	// The state after every bucket, by buckets trained.
	_, cfg := withCheckpoint(t, base, filepath.Join(dir, "every"), "checkpoint_buckets = 1")
	after := map[int64]string{}
	var ref *train.Trainer
	total := 0
	ref, err := train.New(cfg, openStore(t, cfg), train.Options{Edges: func(int) { total++ }, Bucket: func(ev train.Event) {
		after[ev.Done] = digestLine(ref.Manifest(), false)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	final := digestLine(ref.Manifest(), false)
	offSchedule, onSchedule := 0, 0
	for _, stopAt := range []int{3, 11, 19, 26, 40, 57, 75, 101} {
		_, cfg := withCheckpoint(t, base, filepath.Join(dir, fmt.Sprintf("stop%d", stopAt)), "")
		st := openStore(t, cfg)
		if err := runStoppedAt(t, cfg, st, stopAt); !errors.Is(err, context.Canceled) {
			t.Fatalf("stop at batch %d: Run returned %v", stopAt, err)
		}
		man, err := train.ReadManifest(cfg.CheckpointPath)
		if err != nil {
			t.Fatal(err)
		}
		if man == nil {
			t.Logf("stop at batch %d: no commit yet", stopAt)
		} else {
			if got := digestLine(man, false); got != after[man.Buckets] {
				t.Errorf("stop at batch %d: checkpoint of %d buckets differs from the state after bucket %d:\n%s\n%s", stopAt, man.Buckets, man.Buckets, got, after[man.Buckets])
			}
			if man.Seq >= man.Buckets {
				t.Errorf("stop at batch %d: %d commits for %d buckets: want one every %d", stopAt, man.Seq, man.Buckets, every)
			}
			if man.Buckets%int64(every) == 0 {
				onSchedule++
			} else {
				offSchedule++
			}
			if c := train.VerifyCheckpoint(cfg.CheckpointPath); len(c.Problems) > 0 {
				t.Errorf("stop at batch %d: %v", stopAt, c.Problems)
			}
		}
		if got := resumedDigest(t, cfg, st); got != final {
			t.Errorf("stop at batch %d, then resumed: the final checkpoint differs from the uninterrupted run's", stopAt)
		}
	}
	// A cancel during the run's last bucket (which follows buckets not
	// yet committed) lets it finish: the run is done, not stopped.
	_, cfg = withCheckpoint(t, base, filepath.Join(dir, "stoplast"), "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := 0
	tr, err := train.New(cfg, openStore(t, cfg), train.Options{Edges: func(int) {
		if batches++; batches == total {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(ctx); err != nil || !tr.Manifest().Done || digestLine(tr.Manifest(), false) != final {
		t.Errorf("a cancel in the last batch: %v, done %v", err, tr.Manifest().Done)
	}
	if offSchedule == 0 || onSchedule == 0 {
		t.Errorf("%d stops committed off the every-%d schedule, %d on it: want some of both", offSchedule, every, onSchedule)
	}
}

// Interleaved buckets, stopped by a cancel at various batches: a run stops
// only between groups (a group is trained whole, and the buckets it
// trained are committed), and resumed it ends with the uninterrupted
// run's embeddings and model. That run commits after every group
// (checkpoint_buckets = 1, deferred to the group's end), the others at
// the default interval: the interval changes nothing that is trained.
func TestInterruptInterleaved(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, ringEdges(600), fmt.Sprintf(pipelineSettings, "buffer")+
		"partition_buffer = 4\nnegatives = \"buffer\"\ninterleave_buckets = true\n", 6)
	base := filepath.Join(dir, "config.toml")
	_, cfg := withCheckpoint(t, base, filepath.Join(dir, "whole"), "checkpoint_buckets = 1")
	commits := 0
	ref, err := train.New(cfg, openStore(t, cfg), train.Options{Bucket: func(ev train.Event) { commits = int(ev.Checkpoint) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	final := digestLine(ref.Manifest(), false)
	if m := ref.Manifest(); commits == 0 || int64(commits) >= m.Buckets {
		t.Fatalf("checkpoint_buckets = 1: %d commits for %d buckets; want one per group", commits, m.Buckets)
	}
	stopped := 0
	for _, stopAt := range []int{2, 9, 23, 41, 60, 88} {
		_, cfg := withCheckpoint(t, base, filepath.Join(dir, fmt.Sprintf("stop%d", stopAt)), "")
		st := openStore(t, cfg)
		err := runStoppedAt(t, cfg, st, stopAt)
		if errors.Is(err, context.Canceled) {
			stopped++
		} else if err != nil {
			t.Fatalf("stop at batch %d: %v", stopAt, err)
		}
		if got := resumedDigest(t, cfg, st); got != final {
			t.Errorf("stop at batch %d, then resumed: the final checkpoint differs from the uninterrupted run's", stopAt)
		}
	}
	if stopped < 3 {
		t.Errorf("%d runs stopped: want most of them", stopped)
	}
}

// runStoppedAt trains cfg with a context canceled once stopAt batches
// have been trained, and returns what Run returned.
func runStoppedAt(t *testing.T, cfg *config.Config, st train.Store, stopAt int) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := 0
	tr, err := train.New(cfg, st, train.Options{Edges: func(int) {
		if batches++; batches == stopAt {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Run(ctx)
}

// resumedDigest runs cfg to its end from its checkpoint and returns the
// final checkpoint's digests.
func resumedDigest(t *testing.T, cfg *config.Config, st train.Store) string {
	t.Helper()
	again, err := train.New(cfg, st, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return digestLine(again.Manifest(), false)
}
