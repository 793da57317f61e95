package objstore

import (
	"context"
	"testing"
)

// An Opened set opens an object once (one HEAD), its Kept wrapper's Close
// leaves it readable, and the set's Close closes it.
func TestOpenedOncePerURL(t *testing.T) {
	_, data := serve(t, 3*testBlock)
	set := NewOpened(testOptions(t))
	a, err := set.Open(context.Background(), testURL)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := set.Open(context.Background(), testURL); b != a {
		t.Fatal("a second Open of the URL opened it again")
	}
	Kept{Object: a}.Close()
	readRange(t, a, data, 0, testBlock)
	set.Close()
	if _, err := a.ReadAt(make([]byte, 1), 0); err == nil {
		t.Fatal("read after the set's Close succeeded")
	}
}
