package train_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/gen"
)

// BenchmarkQualityPartitioned measures what partitioning
// costs in quality: filtered MRR on held-out edges of a graph with planted
// communities, for P = 1, 4 and 16 partitions and each bucket order, with
// the `batchprep` binary as a user runs it (import, train, eval). Behind
// BATCHPREP_QUALITY=1. The graph is graph/gen's: power-law degrees (rank
// exponent 0.5), entity i in community i mod C, a fraction p_in of the
// edges inside the lhs's community, so a held-out edge is predictable from
// the others. Every 100th generated edge is held out as the test set
// (imported with the training set: one entity dictionary, never trained
// on). Parameters (environment, with defaults):
//
//	BATCHPREP_QUALITY_ENTITIES     20000
//	BATCHPREP_QUALITY_EDGES        400000
//	BATCHPREP_QUALITY_COMMUNITIES  200 (p_in 0.9)
//	BATCHPREP_QUALITY_EPOCHS       10
//	BATCHPREP_QUALITY_PARTITIONS   1,4,16
//	BATCHPREP_QUALITY_ORDERS       inside_out,outside_in,affinity,random (for P > 1)
//
// The training settings are FB15k-237's at d = 100 (ComplEx, softmax, 50
// batch and 50 uniform negatives, lr 0.1, 2 workers). It reports `mrr` and,
// for P > 1, `mrr-vs-P1-%` (the change against P = 1 in the same run) and
// `mrr-within-partition` (eval's within_partition: the candidates
// restricted to the true entity's partition).
//
//	BATCHPREP_QUALITY=1 go test ./graph/train -run '^$' -bench QualityPartitioned -benchtime 1x -timeout 3h
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
	parts := envCounts(b, "BATCHPREP_QUALITY_PARTITIONS", []int{1, 4, 16})
	dir := b.TempDir()
	bin := buildBatchprep(b, dir)
	trainTSV, testTSV := filepath.Join(dir, "train.tsv"), filepath.Join(dir, "test.tsv")
	if err := writeHeldOut(p, trainTSV, testTSV, 100); err != nil {
		b.Fatal(err)
	}
	var base float64 // P = 1's MRR in this run
	for _, np := range parts {
		orders := []string{"inside_out", "outside_in", "affinity", "random"}
		if s := os.Getenv("BATCHPREP_QUALITY_ORDERS"); s != "" {
			orders = strings.Split(s, ",")
		}
		if np == 1 {
			orders = orders[:1] // one bucket: every order is the same
		}
		sub := filepath.Join(dir, fmt.Sprintf("p%d", np))
		text := benchConfig{dir: sub, sets: []string{"train", "test"}, roles: []string{"train", "test"}, typ: "node", parts: np, epochs: epochs, negs: 50}.text()
		cfgPath := importWithBinary(b, bin, sub, text, trainTSV, testTSV)
		for _, order := range orders {
			b.Run(fmt.Sprintf("P=%d/order=%s", np, order), func(b *testing.B) {
				for range b.N {
					if err := os.RemoveAll(filepath.Join(sub, "ckpt")); err != nil {
						b.Fatal(err)
					}
					set := "bucket_order=" + order
					if out, err := exec.Command(bin, "train", "--quiet", "--config", cfgPath, "--set", set).CombinedOutput(); err != nil {
						b.Fatalf("train: %v\n%s", err, out)
					}
					out, err := exec.Command(bin, "eval", "--config", cfgPath, "--set", set, "--edge-set", "test", "--format", "json").Output()
					if err != nil {
						b.Fatalf("eval: %v\n%s", err, out)
					}
					var rep struct {
						MRR             float64 `json:"mrr"`
						Hits10          float64 `json:"hits@10"`
						Unknown         int64   `json:"unknown"`
						WithinPartition *struct {
							MRR float64 `json:"mrr"`
						} `json:"within_partition"`
					}
					if err := json.Unmarshal(out, &rep); err != nil {
						b.Fatalf("eval's JSON: %v\n%s", err, out)
					}
					b.ReportMetric(rep.MRR, "mrr")
					if rep.WithinPartition != nil {
						b.ReportMetric(rep.WithinPartition.MRR, "mrr-within-partition")
					}
					if np == 1 {
						base = rep.MRR
					} else if base > 0 {
						b.ReportMetric(100*(rep.MRR/base-1), "mrr-vs-P1-%")
					}
					b.Logf("P=%d %s: filtered MRR %.4f on the held-out edges (%d unknown)", np, order, rep.MRR, rep.Unknown)
				}
			})
		}
	}
}
