package corpus

import (
	"sync"
	"testing"
)

// The hash is pinned: saved positions record it, so a change of the
// algorithm would refuse every state saved before it. It depends on every
// count, label counts included, and is the same from concurrent callers.
func TestLayoutHash(t *testing.T) {
	mk := func() *Layout {
		return &Layout{ChunkStart: []int{0, 2, 3}, Samples: []uint32{3, 1, 4}, Labels: []uint32{1, 1, 2}}
	}
	const want = "a6d3871089a2a240" // computed by the function before it moved here from source
	if got := mk().Hash(); got != want {
		t.Fatalf("Hash = %s, want %s", got, want)
	}
	seen := map[string]string{want: "base"}
	for name, change := range map[string]func(*Layout){
		"sample":    func(l *Layout) { l.Samples[1] = 2 },
		"label":     func(l *Layout) { l.Labels[2] = 3 },
		"no labels": func(l *Layout) { l.Labels = nil },
		"chunks":    func(l *Layout) { l.ChunkStart = []int{0, 1, 3} },
	} {
		l := mk()
		change(l)
		h := l.Hash()
		if other, ok := seen[h]; ok {
			t.Errorf("%s: hash %s equals %s's", name, h, other)
		}
		seen[h] = name
	}
	l := mk()
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = l.Hash() }()
	}
	wg.Wait()
	for i, h := range got {
		if h != want {
			t.Fatalf("concurrent call %d: %s, want %s", i, h, want)
		}
	}
}
