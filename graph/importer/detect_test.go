package importer

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFirstLineFields(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		content string
		d       Delimiter
		want    int
	}{
		{"# FromNodeId\tToNodeId\n\n3466\t937\n", Tab, 2},
		{"a\tr\tb\n", Tab, 3},
		{"a,r,b,0.5\r\n", Comma, 4},
		{"  a   b \n", Space, 2},
		{"# only comments\n", Tab, 0},
	}
	for i, c := range cases {
		p := filepath.Join(dir, "f"+string(rune('a'+i)))
		os.WriteFile(p, []byte(c.content), 0o644)
		got, err := FirstLineFields(p, c.d)
		if err != nil || got != c.want {
			t.Errorf("%q: %d, %v; want %d", c.content, got, err, c.want)
		}
	}
	if _, err := FirstLineFields(filepath.Join(dir, "missing"), Tab); err == nil {
		t.Error("a missing file gave no error")
	}
}
