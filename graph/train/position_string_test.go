package train

import (
	"fmt"
	"testing"
)

// Messages show a position in words, never as Go struct syntax, whatever
// verb formats it.
func TestPositionString(t *testing.T) {
	p := Position{Epoch: 6, EdgeSet: 1, Chunk: 2, Index: 3}
	want := "(epoch 7, edge set 1, chunk 2, bucket 3 of the pass)"
	for _, verb := range []string{"%v", "%+v", "%s"} {
		if got := fmt.Sprintf(verb, p); got != want {
			t.Errorf("%s: %q, want %q", verb, got, want)
		}
	}
}
