package train

import (
	"fmt"
	"testing"
)

// Buffer negatives: at every bucket of a pass, the pools the workers draw
// uniform negatives from hold every resident partition of the type (the
// buffer's content, up to 4 here), the bucket's own among them, as the
// tables the trainer holds; with negatives = "bucket", no pool (each side
// draws from its own partition, PBG's rule).
func TestNegativePoolsHoldEveryResidentPartition(t *testing.T) {
	for _, neg := range []string{"buffer", "bucket"} {
		tr := ringTrainer(t, 120, 6, fmt.Sprintf("bucket_order = \"buffer\"\npartition_buffer = 4\nnegatives = %q\n", neg))
		l, r := tr.plan.Shape()
		full := 0
		for pos := (Position{}); pos.Epoch == 0; pos = tr.advance(pos, l*r) {
			b := tr.bucketAt(pos)
			if pos.Index == 0 {
				tr.replayResidency(pos)
			} else {
				tr.admitAt(pos, b)
			}
			if err := tr.swapIn(b); err != nil {
				t.Fatal(err)
			}
			pools := tr.negativePools()
			if neg == "bucket" {
				if pools != nil {
					t.Fatalf("negatives = bucket: pools %v", pools)
				}
				continue
			}
			keys := tr.res.keys()
			if len(pools) != 1 || len(pools[0].Tabs) != len(keys) || len(tr.tables) != len(keys) {
				t.Fatalf("bucket %v: %d resident partitions, %d tables held, pools %v", b, len(keys), len(tr.tables), pools)
			}
			for i, k := range keys {
				if pools[0].Tabs[i] != tr.tables[k] || tr.tables[k] == nil {
					t.Fatalf("bucket %v: pool table %d is not resident partition %v", b, i, k)
				}
			}
			for _, k := range tr.needed(b) {
				if !tr.res.has(k) {
					t.Fatalf("bucket %v: its partition %v is not resident", b, k)
				}
			}
			if len(keys) == 4 {
				full++
			}
		}
		if neg == "buffer" && full < 10 {
			t.Fatalf("%d buckets with a full buffer of 4", full)
		}
	}
}
