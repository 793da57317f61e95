package coord

import (
	"testing"

	"github.com/batchprep/batchprep/graph"
)

func TestKeys(t *testing.T) {
	k, err := newKeys("run-1.a_b")
	if err != nil {
		t.Fatal(err)
	}
	if got := k.held(3, graph.Bucket{Lhs: 2, Rhs: 10}); got != "/batchprep/runs/run-1.a_b/held/3/2_10" {
		t.Fatalf("held key %q", got)
	}
	for _, bad := range []string{"", "a/b", "a b", "../x", string(make([]byte, 101))} {
		if _, err := newKeys(bad); err == nil {
			t.Errorf("run name %q accepted", bad)
		}
	}
}

// FuzzParseBucket: any key either fails to parse or names a bucket whose
// key is the input (keys come from etcd, which another program may write).
func FuzzParseBucket(f *testing.F) {
	for _, s := range []string{"d/0_0", "d/12_3", "d/1_", "d/_1", "d/-1_2", "d/1_2_3", "x/1_2", "d/+1_2", "d/01_2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		b, err := parseBucket(key, "d/")
		if err != nil {
			return
		}
		if b.Lhs < 0 || b.Rhs < 0 {
			t.Fatalf("%q: negative bucket %v", key, b)
		}
		if again, err := parseBucket("d/"+bucketName(b), "d/"); err != nil || again != b {
			t.Fatalf("%q: %v does not round-trip: %v %v", key, b, again, err)
		}
	})
}
