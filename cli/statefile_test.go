package cli

import (
	"testing"

	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/graph/plan"
)

// FuzzStateKind: stateKind never panics, and never calls a state the other
// command's decoder accepts by the wrong name: a file read's decoder accepts
// is not called "plan", and one plan's decoder accepts is not called "read".
func FuzzStateKind(f *testing.F) {
	f.Add([]byte(`{"version":1,"position":2,"step":1,"epoch":1,"fingerprint":{"seed":"0"}}`))
	f.Add([]byte(`{"version":1,"position":{"epoch":0,"edge_set":0,"chunk":0,"index":0,"worker":0,"batch":3},"fingerprint":{}}`))
	f.Add([]byte(`{"position":-1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		k := stateKind(data)
		if _, err := source.DecodeState(data); err == nil && k == "plan" {
			t.Fatalf("a read state called a plan state: %q", data)
		}
		if _, err := plan.DecodeState(data); err == nil && k == "read" {
			t.Fatalf("a plan state called a read state: %q", data)
		}
	})
}
