package train_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/gen"
)

// BenchmarkQualityPartitioned measures what partitioning
// costs in quality: filtered MRR on held-out edges of a graph with planted
// communities, for each setting (partitions, bucket order, partition
// buffer, negatives), with the `batchprep` binary as a user runs it
// (import, train, eval), once per seed. Behind BATCHPREP_QUALITY=1. The
// graph is graph/gen's: power-law degrees (rank exponent 0.5), entity i in
// community i mod C, a fraction p_in of the edges inside the lhs's
// community, so a held-out edge is predictable from the others. Every
// 100th generated edge is held out as the test set (imported with the
// training set: one entity dictionary, never trained on). Parameters
// (environment, with defaults):
//
//	BATCHPREP_QUALITY_ENTITIES     20000
//	BATCHPREP_QUALITY_EDGES        400000
//	BATCHPREP_QUALITY_COMMUNITIES  200 (p_in 0.9)
//	BATCHPREP_QUALITY_EPOCHS       10
//	BATCHPREP_QUALITY_PARTITIONS   1,4,16
//	BATCHPREP_QUALITY_ORDERS       inside_out,outside_in,affinity,random (for P > 1)
//	BATCHPREP_QUALITY_BUFFERS      2 (partition_buffer, for P > 1)
//	BATCHPREP_QUALITY_NEGATIVES    bucket (negatives, for P > 1)
//	BATCHPREP_QUALITY_SETTINGS     instead of the four above: P/order/c/negatives[/interleave],...
//	                               e.g. 1/inside_out/2/bucket,16/buffer/8/buffer/interleave
//	BATCHPREP_QUALITY_SEEDS        3 (config seed 1..N: each its own import)
//	BATCHPREP_QUALITY_SET          more train settings, KEY=VALUE separated by spaces
//
// The training settings are FB15k-237's at d = 100 (ComplEx, softmax, 50
// batch and 50 uniform negatives, lr 0.1, 2 workers). Per setting it
// reports the mean over seeds of `mrr`, its spread `mrr-spread` (half the
// range), for P > 1 `mrr-vs-P1-%` (the change of the means against P =
// 1's in the same run) and `mrr-within-partition` (eval's
// within_partition: the candidates restricted to the true entity's
// partition), and logs a table row.
//
//	BATCHPREP_QUALITY=1 go test ./graph/train -run '^$' -bench QualityPartitioned -benchtime 1x -timeout 6h
func BenchmarkQualityPartitioned(b *testing.B) {
	skipUnlessSet(b, "BATCHPREP_QUALITY", "set BATCHPREP_QUALITY=1 to train a generated community graph for each partition count and bucket order (see the comment)")
	p := gen.Params{
		Entities:    envInt(b, "BATCHPREP_QUALITY_ENTITIES", 20000),
		Edges:       envInt(b, "BATCHPREP_QUALITY_EDGES", 400000),
		Relations:   1,
		Zipf:        0.5,
		Communities: envInt(b, "BATCHPREP_QUALITY_COMMUNITIES", 200),
		PIn:         0.9,
		Seed:        1,
	}
	epochs := envInt(b, "BATCHPREP_QUALITY_EPOCHS", 10)
	seeds := envInt(b, "BATCHPREP_QUALITY_SEEDS", 3)
	dir := b.TempDir()
	bin := buildBatchprep(b, dir)
	trainTSV, testTSV := filepath.Join(dir, "train.tsv"), filepath.Join(dir, "test.tsv")
	if err := writeHeldOut(p, trainTSV, testTSV, 100); err != nil {
		b.Fatal(err)
	}
	var base float64 // P = 1's mean MRR in this run
	imported := map[string]string{}
	for _, s := range qualitySettings(b) {
		name := fmt.Sprintf("P=%d/order=%s/c=%d/negatives=%s", s.parts, s.order, s.buffer, s.negatives)
		if s.interleave {
			name += "/interleave"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				var mrrs, within []float64
				for seed := 1; seed <= seeds; seed++ {
					sub := filepath.Join(dir, fmt.Sprintf("p%d-seed%d", s.parts, seed))
					cfgPath, ok := imported[sub]
					if !ok {
						text := fmt.Sprintf("seed = %d\n", seed) + benchConfig{dir: sub, sets: []string{"train", "test"}, roles: []string{"train", "test"},
							typ: "node", parts: s.parts, epochs: epochs, negs: 50}.text()
						cfgPath = importWithBinary(b, bin, sub, text, trainTSV, testTSV)
						imported[sub] = cfgPath
					}
					mrr, in := trainAndEval(b, bin, cfgPath, sub, s)
					mrrs, within = append(mrrs, mrr), append(within, in)
					b.Logf("%s seed %d: filtered MRR %.4f (within the partition %.4f)", s, seed, mrr, in)
				}
				mean, spread := meanSpread(mrrs)
				b.ReportMetric(mean, "mrr")
				b.ReportMetric(spread, "mrr-spread")
				vs := ""
				if s.parts == 1 {
					base = mean
				} else {
					in, _ := meanSpread(within)
					b.ReportMetric(in, "mrr-within-partition")
					if base > 0 {
						b.ReportMetric(100*(mean/base-1), "mrr-vs-P1-%")
						vs = fmt.Sprintf("%+.1f %%", 100*(mean/base-1))
					}
				}
				b.Logf("| %d | %s | %d | %s | %v | %.4f ± %.4f (%d seeds) | %s |", s.parts, s.order, s.buffer, s.negatives, s.interleave, mean, spread, len(mrrs), vs)
			}
		})
	}
}

// qualitySetting is one configuration BenchmarkQualityPartitioned trains.
type qualitySetting struct {
	parts            int
	order, negatives string
	buffer           int
	interleave       bool // interleave_buckets
}

func (s qualitySetting) String() string {
	v := fmt.Sprintf("P=%d %s c=%d negatives=%s", s.parts, s.order, s.buffer, s.negatives)
	if s.interleave {
		v += " interleaved"
	}
	return v
}

// qualitySettings lists the settings the environment asks for.
func qualitySettings(b *testing.B) []qualitySetting {
	var out []qualitySetting
	if v := os.Getenv("BATCHPREP_QUALITY_SETTINGS"); v != "" {
		for _, f := range strings.Split(v, ",") {
			x := strings.Split(f, "/")
			if len(x) != 4 && (len(x) != 5 || x[4] != "interleave") {
				b.Fatalf("BATCHPREP_QUALITY_SETTINGS: %q: want P/order/c/negatives[/interleave]", f)
			}
			np, err1 := strconv.Atoi(x[0])
			c, err2 := strconv.Atoi(x[2])
			if err1 != nil || err2 != nil {
				b.Fatalf("BATCHPREP_QUALITY_SETTINGS: %q: P and c are integers", f)
			}
			out = append(out, qualitySetting{np, x[1], x[3], c, len(x) == 5})
		}
		return out
	}
	list := func(name, def string) []string {
		if v := os.Getenv(name); v != "" {
			return strings.Split(v, ",")
		}
		return strings.Split(def, ",")
	}
	for _, np := range envCounts(b, "BATCHPREP_QUALITY_PARTITIONS", []int{1, 4, 16}) {
		if np == 1 { // one bucket: every order, buffer and negatives the same
			out = append(out, qualitySetting{1, "inside_out", "bucket", 2, false})
			continue
		}
		for _, order := range list("BATCHPREP_QUALITY_ORDERS", "inside_out,outside_in,affinity,random") {
			for _, c := range envCounts(b, "BATCHPREP_QUALITY_BUFFERS", []int{2}) {
				for _, neg := range list("BATCHPREP_QUALITY_NEGATIVES", "bucket") {
					out = append(out, qualitySetting{np, order, neg, c, false})
				}
			}
		}
	}
	return out
}

// trainAndEval trains cfgPath from scratch with setting s and returns
// eval's filtered MRR on the test edge set, and within the partition.
func trainAndEval(b *testing.B, bin, cfgPath, sub string, s qualitySetting) (mrr, within float64) {
	if err := os.RemoveAll(filepath.Join(sub, "ckpt")); err != nil {
		b.Fatal(err)
	}
	sets := []string{"--set", "bucket_order=" + s.order, "--set", fmt.Sprintf("partition_buffer=%d", s.buffer), "--set", "negatives=" + s.negatives}
	if s.interleave {
		sets = append(sets, "--set", "interleave_buckets=true")
	}
	for _, kv := range strings.Fields(os.Getenv("BATCHPREP_QUALITY_SET")) {
		sets = append(sets, "--set", kv)
	}
	if out, err := exec.Command(bin, append([]string{"train", "--quiet", "--config", cfgPath}, sets...)...).CombinedOutput(); err != nil {
		b.Fatalf("train: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, append([]string{"eval", "--config", cfgPath, "--edge-set", "test", "--format", "json"}, sets...)...).Output()
	if err != nil {
		b.Fatalf("eval: %v\n%s", err, out)
	}
	var rep struct {
		MRR             float64 `json:"mrr"`
		WithinPartition *struct {
			MRR float64 `json:"mrr"`
		} `json:"within_partition"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		b.Fatalf("eval's JSON: %v\n%s", err, out)
	}
	if rep.WithinPartition != nil {
		within = rep.WithinPartition.MRR
	}
	return rep.MRR, within
}

// meanSpread is the mean of xs and half their range.
func meanSpread(xs []float64) (mean, spread float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		mean += x / float64(len(xs))
		lo, hi = min(lo, x), max(hi, x)
	}
	return mean, (hi - lo) / 2
}
