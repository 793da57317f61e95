package corpus

import (
	"errors"
	"strings"
	"testing"
)

// TestStreamChoicesCheck: each check every format shares is made once here,
// with the message a user sees after the format's prefix.
func TestStreamChoicesCheck(t *testing.T) {
	x := Stream{Name: "x", Dim: 3}
	y := Stream{Name: "y", Dim: 10, Sparse: true}
	cases := []struct {
		c    StreamChoices
		want string // "" = accepted
	}{
		{StreamChoices{Streams: []Stream{x, y}, DefinesMBSize: "y", Label: "x", ChunkBytes: 1 << 20}, ""},
		{StreamChoices{}, "config: no streams"},
		{StreamChoices{Streams: []Stream{{Name: "x"}}}, `stream "x": dim 0, want >= 1`},
		{StreamChoices{Streams: []Stream{{Name: "x", Dim: MaxDenseDim + 1}}}, "dense dim 16777217 exceeds the limit 16777216"},
		{StreamChoices{Streams: []Stream{{Name: "x", Dim: MaxDenseDim + 1, Sparse: true}}}, ""},
		{StreamChoices{Streams: []Stream{{Name: "x", Dim: MaxSparseDim + 1, Sparse: true}}}, "sparse dim 2147483648 exceeds 2^31-1"},
		{StreamChoices{Streams: []Stream{x, y, x}}, `stream "x" configured twice`},
		{StreamChoices{Streams: []Stream{x, y}, DefinesMBSize: "x,y"}, "only a single stream"},
		{StreamChoices{Streams: []Stream{x, y}, DefinesMBSize: "z"}, `defines_mb_size "z" is not a configured stream`},
		{StreamChoices{Streams: []Stream{x, y}, Label: "z"}, `label "z" is not a configured stream`},
		{StreamChoices{Streams: []Stream{x}, ChunkBytes: -1}, "negative chunk size"},
		{StreamChoices{Streams: []Stream{x}, ChunkSequences: -1}, "negative chunk size"},
		{StreamChoices{Streams: []Stream{x}, ChunkBytes: 1, ChunkSequences: 1}, "mutually exclusive"},
	}
	for i, tc := range cases {
		err := tc.c.Check(nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("case %d: %v, want accepted", i, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "config: ")):
			t.Errorf("case %d: %v, want an error starting config: and holding %q", i, err, tc.want)
		}
	}
}

// TestStreamChoicesNameHook: the format's name rule runs first, for every
// stream, and its error is wrapped, not replaced.
func TestStreamChoicesNameHook(t *testing.T) {
	bad := errors.New("bad name")
	var seen []int
	c := StreamChoices{Streams: []Stream{{Name: "a", Dim: 1}, {Name: "b"}}}
	err := c.Check(func(i int, s Stream) error {
		seen = append(seen, i)
		if s.Name == "b" {
			return bad
		}
		return nil
	})
	if !errors.Is(err, bad) || len(seen) != 2 {
		t.Fatalf("err %v after streams %v, want the hook's error at stream 1 before b's dim is checked", err, seen)
	}
}
