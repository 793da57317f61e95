package train_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/graph/train/model"
)

// Invariant 3 with the partition I/O behind training (docs/training.md,
// "Memory"): for every bucket order, with P = 4 and the default buffer of
// 2, and with buffers of 3 and 4 (P = 5 and 6), a run never holds more
// than its buffer's c partitions and one in flight (loaded ahead or
// written behind), counted by the table allocator at every allocation and
// release rather than read from the process's RSS; the memory model's
// Resident and partition bytes bound the same count; with the load ahead
// the (c+1)-th is reached (the I/O still overlaps training); written in
// turn, c. When Run returns, every table is given back, and so are the
// workers' mapped arrays (model.NewMappedWorker).
func TestResidentPartitionsBound(t *testing.T) {
	cases := []struct {
		order    string
		c, parts int
	}{{"inside_out", 2, 4}, {"outside_in", 2, 4}, {"affinity", 2, 4}, {"random", 2, 4}, {"buffer", 4, 6}, {"random", 3, 5}}
	for _, tc := range cases {
		order := tc.order
		for _, seq := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/c=%d/sequential=%v", order, tc.c, seq), func(t *testing.T) {
				dir := t.TempDir()
				cfg := fixture(t, dir, ringEdges(150), fmt.Sprintf(pipelineSettings, order)+fmt.Sprintf("partition_buffer = %d\n", tc.c), tc.parts)
				st := openStore(t, cfg)
				var largest int64
				for p := range tc.parts {
					n, err := st.EntityCount("node", p)
					if err != nil {
						t.Fatal(err)
					}
					largest = max(largest, int64(n)*int64(cfg.Dimension+1)*4)
				}
				pr, err := train.Predict(cfg, st, 0, "")
				if err != nil {
					t.Fatal(err)
				}
				tr, err := train.New(cfg, st, train.Options{SequentialIO: seq})
				if err != nil {
					t.Fatal(err)
				}
				base := model.Resident()
				workBase, _ := model.WorkerMapped()
				model.ResetPeakResident()
				if err := tr.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				peak := model.PeakResident()
				tables, bytes := peak.Tables-base.Tables, peak.Bytes-base.Bytes
				want := tc.c + 1
				if seq {
					want = tc.c
				}
				if tables != want || bytes > int64(want)*largest {
					t.Errorf("at most %d partitions (%d bytes) held at once, want %d (at most %d bytes)", tables, bytes, want, int64(want)*largest)
				}
				if !seq && (pr.Resident != want || pr.PartBytes+pr.PrefetchBytes < uint64(bytes)) {
					t.Errorf("the model predicts %d partitions of %d bytes, the run held %d of %d", pr.Resident, pr.PartBytes+pr.PrefetchBytes, tables, bytes)
				}
				if now := model.Resident(); now != base {
					t.Errorf("after the run %+v tables are held, before it %+v", now, base)
				}
				if now, peak := model.WorkerMapped(); now != workBase || peak <= workBase {
					t.Errorf("workers' mappings: %d bytes after the run, %d at the peak, %d before", now, peak, workBase)
				}
			})
		}
	}
}
