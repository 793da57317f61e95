package cli

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/train"
)

// train predicts its memory and disk before it starts and prints the
// terms; --memory-limit (or memory_limit) is the budget it checks, a run
// over it is refused naming the smallest num_partitions that fits, and
// within it the Go heap is held under it. A bad size is a usage mistake.
func TestTrainMemoryLimit(t *testing.T) {
	_, cfgPath := trainFixture(t)
	if code, _, e := run(t, "train", "--config", cfgPath, "--memory-limit", "lots"); code != 2 || !strings.Contains(e, `--memory-limit "lots" is not a size`) {
		t.Errorf("bad --memory-limit: exit %d, %s", code, e)
	}
	if code, _, e := run(t, "train", "--config", cfgPath, "--set", "memory_limit=lots"); code != 1 || !strings.Contains(e, "memory_limit") {
		t.Errorf("bad memory_limit: exit %d, %s", code, e)
	}
	// The prediction at dimension 60000: two partitions of 7 rows of 240
	// KB, plus the runtime; a budget that holds a third less of the
	// partitions (and no prefetch) needs more of them.
	cfg, err := loadConfig(&Env{Ctx: context.Background()}, cfgPath, []string{"dimension=60000", "num_epochs=1"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := train.Predict(cfg, st, 0, "")
	if err == nil {
		pr, err = train.Predict(cfg, st, pr.Peak-1, "") // without prefetch
	}
	st.Close()
	if err != nil || pr.Prefetch {
		t.Fatal(err, pr)
	}
	budget := pr.Peak - pr.PartBytes/3
	code, _, e := run(t, "train", "--config", cfgPath, "--set", "dimension=60000", "--set", "num_epochs=1", "--set", fmt.Sprintf("memory_limit=%dB", budget))
	want := regexp.MustCompile(`batchprep train: does not fit: it needs about [0-9.]+ [KMG]iB of memory at its peak, more than the [0-9.]+ [KMG]iB of memory_limit; num_partitions = [3-9] \(now 2\) would fit`)
	if code != 1 || !want.MatchString(e) || !strings.Contains(e, "memory: ") || !strings.Contains(e, "  partitions  ") {
		t.Errorf("over memory_limit: exit %d, stderr\n%s", code, e)
	}
	code, _, e = run(t, "train", "--config", cfgPath, "--memory-limit", "1MiB")
	if code != 1 || !strings.Contains(e, "more than the 1.0 MiB of --memory-limit; no num_partitions up to 4096 fits") {
		t.Errorf("1 MiB: exit %d, stderr\n%s", code, e)
	}
	// A budget below a MiB is written with its own unit, never as "0 MiB".
	code, _, e = run(t, "train", "--config", cfgPath, "--memory-limit", "1KiB")
	if code != 1 || !strings.Contains(e, "more than the 1.0 KiB of --memory-limit") || strings.Contains(e, " 0 MiB") {
		t.Errorf("1 KiB: exit %d, stderr\n%s", code, e)
	}
	defer debug.SetMemoryLimit(math.MaxInt64)
	code, _, e = run(t, "train", "--config", cfgPath, "--memory-limit", "3GiB", "--set", "num_epochs=1")
	for _, term := range []string{"memory: ", "of 3.0 GiB (--memory-limit)", "  partitions  ", "  prefetch  ", "  workers  ", "  edges  ", "  runtime  ", "disk: "} {
		if !strings.Contains(e, term) {
			t.Errorf("the prediction lacks %q:\n%s", term, e)
		}
	}
	// The Go heap's limit is the budget less the partitions, which are
	// mapped outside it (a few KiB here).
	if lim := debug.SetMemoryLimit(-1); code != 0 || lim >= 3<<30 || lim < 3<<30-1<<20 {
		t.Errorf("within 3 GiB: exit %d, Go memory limit %d\n%s", code, lim, e)
	}
}

// plan --simulate alone prints train's prediction and whether it would
// start; --memory-limit goes with it only.
func TestPlanSimulateMemory(t *testing.T) {
	_, cfgPath := trainFixture(t)
	code, out, e := run(t, "plan", "--config", cfgPath, "--simulate")
	if code != 0 || !strings.HasPrefix(out, "train from no checkpoint, ") || !strings.Contains(out, "\ntotal disk: read ") || !strings.Contains(out, "\nmemory: ") || !strings.Contains(out, "  partitions  ") || !strings.Contains(out, "\ndisk: ") || !strings.HasSuffix(out, "train would start\n") {
		t.Errorf("plan --simulate: exit %d, stdout\n%s\nstderr %s", code, out, e)
	}
	code, out, _ = run(t, "plan", "--config", cfgPath, "--simulate", "--memory-limit", "1MiB")
	if code != 0 || !strings.Contains(out, "of 1.0 MiB (--memory-limit)") || !strings.Contains(out, "train would refuse to start: does not fit: it needs about") {
		t.Errorf("plan --simulate --memory-limit 1MiB: exit %d, stdout\n%s", code, out)
	}
	if code, _, e := run(t, "plan", "--config", cfgPath, "--memory-limit", "1MiB"); code != 2 || !strings.Contains(e, "--memory-limit goes with --simulate") {
		t.Errorf("plan --memory-limit alone: exit %d, %s", code, e)
	}
	cfg, _ := config.Load(cfgPath)
	if cfg.MemoryLimit != "" {
		t.Errorf("the fixture sets memory_limit")
	}
}
