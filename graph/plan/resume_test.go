package plan

import (
	"errors"
	"strings"
	"testing"
)

// Invariant 8: stop after every batch of a small plan, save the state
// through its JSON encoding, restore, and compare the rest with the
// uninterrupted run. A bucket interrupted mid-way is announced again with
// Resumed set and otherwise identical.
func TestResumeAtEveryBatch(t *testing.T) {
	cases := []struct {
		dyn   bool
		order string
		c     int
		l, r  int
	}{{false, "affinity", 0, 2, 3}, {true, "affinity", 0, 2, 3}, {false, "buffer", 3, 4, 4}}
	for _, tc := range cases {
		dyn := tc.dyn
		g := testGraph(tc.l, tc.r, 2, 14, 3, true, 8)
		o := testOptions()
		o.DynamicRelations, o.NumEdgeChunks, o.Workers, o.BatchSize = dyn, 2, 2, 3
		o.BucketOrder, o.PartitionBuffer = tc.order, tc.c
		p := mustPlan(t, g, o)
		full := collect(t, mustIter(t, p, p.Start()), -1)
		var batchAt []int // index in full of each batch record
		for i, l := range full {
			if strings.Contains(l, " w") {
				batchAt = append(batchAt, i)
			}
		}
		if len(batchAt) < 20 {
			t.Fatalf("only %d batches", len(batchAt))
		}
		for k := 1; k <= len(batchAt); k++ {
			it := mustIter(t, p, p.Start())
			head := collect(t, it, k)
			if len(head) != batchAt[k-1]+1 {
				t.Fatalf("stop after %d batches: %d records, want %d", k, len(head), batchAt[k-1]+1)
			}
			st, err := DecodeState(it.State().Encode())
			if err != nil {
				t.Fatal(err)
			}
			p2 := mustPlan(t, g, o) // a fresh plan, as after a restart
			rest := collect(t, mustIter(t, p2, *st), -1)
			want := full[len(head):]
			if len(rest) > 0 && strings.HasSuffix(rest[0], " resumed") {
				ann := strings.TrimSuffix(rest[0], " resumed")
				found := false
				for i := len(head) - 1; i >= 0; i-- {
					if strings.Contains(head[i], " bucket ") {
						found = head[i] == ann
						break
					}
				}
				if !found {
					t.Fatalf("stop after %d: resumed bucket record %q does not match the original", k, ann)
				}
				rest = rest[1:]
			}
			if strings.Join(rest, "\n") != strings.Join(want, "\n") {
				i := 0
				for i < len(rest) && i < len(want) && rest[i] == want[i] {
					i++
				}
				t.Fatalf("dyn=%v stop after %d batches: resumed run differs at record %d of %d/%d:\n got %q\nwant %q", dyn, k, i, len(rest), len(want), rest[min(i, len(rest)-1)], want[min(i, len(want)-1)])
			}
		}
		// The state after the last record is the end.
		it := mustIter(t, p, p.Start())
		collect(t, it, -1)
		if st := it.State(); st.Position.Epoch != o.NumEpochs {
			t.Fatalf("final state %+v", st.Position)
		}
		if rest := collect(t, mustIter(t, p, it.State()), -1); len(rest) != 0 {
			t.Fatalf("resuming a finished plan yields %d records", len(rest))
		}
		// A finished plan extended by one epoch continues with that epoch.
		o2 := o
		o2.NumEpochs++
		p3 := mustPlan(t, g, o2)
		more := collect(t, mustIter(t, p3, it.State()), -1)
		all := collect(t, mustIter(t, p3, p3.Start()), -1)
		if strings.Join(all[len(full):], "\n") != strings.Join(more, "\n") {
			t.Fatal("extending num_epochs after the end does not continue the longer plan")
		}
	}
}

// Invariant 9: a different setup is refused, naming each differing field.
func TestResumeMismatch(t *testing.T) {
	g := testGraph(2, 2, 1, 10, 3, false, 9)
	o := testOptions()
	p := mustPlan(t, g, o)
	st := p.Start()
	o2 := o
	o2.Workers, o2.Seed, o2.BucketOrder = 5, 8, "random"
	_, err := mustPlan(t, g, o2).Iter(st)
	var me *MismatchError
	if !errors.As(err, &me) || !errors.Is(err, ErrState) {
		t.Fatalf("mismatch not reported: %v", err)
	}
	for _, f := range []string{"workers: state 3, plan 5", "seed: state 7, plan 8", "bucket_order: state affinity, plan random"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not name %q", err, f)
		}
	}
	if len(me.Fields) != 3 {
		t.Errorf("fields %v, want 3", me.Fields)
	}
	// The buffer order depends on c: a state of c = 3 does not resume c = 4.
	ob := o
	ob.BucketOrder, ob.PartitionBuffer = "buffer", 3
	sb, err := DecodeState(mustPlan(t, g, ob).Start().Encode())
	if err != nil {
		t.Fatal(err)
	}
	ob.PartitionBuffer = 4
	if _, err := mustPlan(t, g, ob).Iter(*sb); err == nil || !strings.Contains(err.Error(), "partition_buffer: state 3, plan 4") {
		t.Fatalf("another partition_buffer accepted: %v", err)
	}
	// With another order, c does not change the plan: not recorded.
	if st.Fingerprint.PartitionBuffer != 0 || strings.Contains(string(st.Encode()), "partition_buffer") {
		t.Fatalf("partition_buffer recorded for the affinity order: %s", st.Encode())
	}
	// Other store content.
	g2 := testGraph(2, 2, 1, 10, 3, false, 10)
	if _, err := mustPlan(t, g2, o).Iter(st); err == nil || !strings.Contains(err.Error(), "store:") {
		t.Fatalf("other store accepted: %v", err)
	}
	// Positions outside the plan.
	for _, pos := range []Position{{EdgeSet: 1}, {Chunk: 1}, {Index: 4}, {Worker: 3}, {Worker: 1, Batch: 999}} {
		s := st
		s.Position = pos
		it, err := p.Iter(s)
		if err == nil {
			for it.Next() {
			}
			err = it.Err()
		}
		if !errors.Is(err, ErrState) {
			t.Errorf("position %+v: %v", pos, err)
		}
	}
}
