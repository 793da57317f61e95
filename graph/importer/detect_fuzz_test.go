package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFirstLineFields: never panics, and the count it gives is the field
// count of the first line that is neither empty nor a comment (split as the
// importer splits), or 0 when there is none.
func FuzzFirstLineFields(f *testing.F) {
	f.Add([]byte("# c\n\n3466\t937\n"), uint8(0))
	f.Add([]byte("a,b,c\r\n"), uint8(1))
	f.Add([]byte("   \n a  b \n"), uint8(2))
	f.Add([]byte("\t\t\n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, d uint8) {
		delim := []Delimiter{Tab, Comma, Space}[int(d)%3]
		p := filepath.Join(t.TempDir(), "e")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := FirstLineFields(p, delim)
		if err != nil {
			if len(data) < maxDetectLine {
				t.Fatalf("error on a short input: %v", err)
			}
			return
		}
		want := 0
		pr := &parser{opts: &Options{Delimiter: delim}}
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimRight(line, "\r")
			if len(line) == 0 || line[0] == '#' {
				continue
			}
			if n := pr.split(nil, line, nil); n > 0 {
				want = n
				break
			}
		}
		if got != want {
			t.Fatalf("%q: %d fields, want %d", data, got, want)
		}
	})
}
