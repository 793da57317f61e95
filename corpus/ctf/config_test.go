package ctf

import (
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// Invariant 1.
func TestConfigValidate(t *testing.T) {
	ok := Config{Streams: []corpus.Stream{dense("a", 2), sparse("b", 5)}, DefinesMBSize: "a", Label: "b"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	bad := map[string]Config{
		"no streams":       {},
		"dim 0":            {Streams: []corpus.Stream{dense("a", 0)}},
		"duplicate":        {Streams: []corpus.Stream{dense("a", 1), dense("a", 2)}},
		"empty name":       {Streams: []corpus.Stream{dense("", 1)}},
		"comment name":     {Streams: []corpus.Stream{dense("#x", 1)}},
		"space in name":    {Streams: []corpus.Stream{dense("a b", 1)}},
		"bar in name":      {Streams: []corpus.Stream{dense("a|b", 1)}},
		"two mb streams":   {Streams: []corpus.Stream{dense("a", 1), dense("b", 1)}, DefinesMBSize: "a,b"},
		"unknown mb":       {Streams: []corpus.Stream{dense("a", 1)}, DefinesMBSize: "z"},
		"unknown label":    {Streams: []corpus.Stream{dense("a", 1)}, Label: "z"},
		"both chunkings":   {Streams: []corpus.Stream{dense("a", 1)}, ChunkBytes: 10, ChunkSequences: 2},
		"negative budget":  {Streams: []corpus.Stream{dense("a", 1)}, MaxErrors: -1},
		"negative chunk":   {Streams: []corpus.Stream{dense("a", 1)}, ChunkBytes: -1},
		"too many streams": {Streams: manyStreams(MaxStreams + 1)},
		"huge dense dim":   {Streams: []corpus.Stream{dense("a", 99999999999)}},
	}
	for name, c := range bad {
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.HasPrefix(err.Error(), "ctf: ") {
			t.Errorf("%s: error %q lacks the ctf: prefix", name, err)
		}
	}
}

// A huge dense dimension is refused before allocating, naming the value and
// the limit; the same value is fine for a sparse stream.
func TestConfigHugeDenseDim(t *testing.T) {
	c := Config{Streams: []corpus.Stream{dense("x", 99999999999)}}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "99999999999") || !strings.Contains(err.Error(), "16777216") {
		t.Errorf("error %v, want one naming 99999999999 and the limit 16777216", err)
	}
	c = Config{Streams: []corpus.Stream{dense("x", MaxDenseDim)}}
	if err := c.Validate(); err != nil {
		t.Errorf("dim at the limit refused: %v", err)
	}
}

func manyStreams(n int) []corpus.Stream {
	var s []corpus.Stream
	for i := 0; i < n; i++ {
		s = append(s, dense("s"+strings.Repeat("x", i), 1))
	}
	return s
}

func TestParseStreamFlag(t *testing.T) {
	good := map[string]corpus.Stream{
		"x:3":          dense("x", 3),
		"x:3:sparse":   sparse("x", 3),
		"S0:943:dense": dense("S0", 943),
	}
	for in, want := range good {
		got, err := ParseStreamFlag(in)
		if err != nil || got != want {
			t.Errorf("ParseStreamFlag(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := ParseStreamFlag(FormatStreamFlag(got)); back != got {
			t.Errorf("FormatStreamFlag round trip of %v gave %v", got, back)
		}
	}
	for _, in := range []string{"", "x", "x:", "x:0", "x:-1", "x:3:csr", ":3", "x:3:sparse:1", "a b:3", "x:1e3"} {
		if _, err := ParseStreamFlag(in); err == nil {
			t.Errorf("ParseStreamFlag(%q) accepted", in)
		}
	}
}
