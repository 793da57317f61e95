package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// storeBytes returns the files of the edge store under dir (entities and
// edges), by path relative to dir.
func storeBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, sub := range []string{"ent", "edges"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			files[rel] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// manifestBody returns an edge set manifest's body without its source,
// having checked that the source is want.
func manifestBody(t *testing.T, manifest []byte, want string) []byte {
	t.Helper()
	var m struct{ Body map[string]any }
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.Body["source"] != want {
		t.Errorf("the manifest names the source %v, want %s", m.Body["source"], want)
	}
	delete(m.Body, "source")
	b, err := json.Marshal(m.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportObject: `import s3://...` writes the store that importing the
// same bytes from a local file writes, byte for byte (the manifest names
// its source, the URL or the path, and is compared without it), for a TSV file, a
// two-column edge list (its rhs column found in the object), and Parquet
// files (named .parquet or told by their first bytes), with one HEAD
// request per import; a missing object is exit 1 naming the bucket and key.
func TestImportObject(t *testing.T) {
	dir, cfgPath, tsv := importFixture(t)
	pairs := filepath.Join(dir, "pairs.tsv")
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "%d\t%d\n", i%29, (i*5)%31)
	}
	if err := os.WriteFile(pairs, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(tsv)
	var rows []cliEdge
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n")[1:] {
		f := strings.Split(line, "\t")
		rows = append(rows, cliEdge{f[0], &f[1], f[2]})
	}
	pq := filepath.Join(dir, "edges.parquet")
	writeParquet(t, pq, rows)

	s := miniotest.Start(t)
	s.MakeBucket("edges")
	s.PutFile("edges", "fb/edges.tsv", tsv)
	s.PutFile("edges", "fb/pairs.tsv", pairs)
	s.PutFile("edges", "fb/edges.parquet", pq)
	s.PutFile("edges", "fb/edges-pq", pq)
	p := s.ProxyFor(t)
	miniotest.SetEnv(t, p.Env(t, s))
	cache := t.TempDir()
	byIndex := []string{"--lhs-col", "0", "--rel-col", "1", "--rhs-col", "2"}
	byName := []string{"--lhs-col", "src", "--rel-col", "rel", "--rhs-col", "dst"}
	for _, tc := range []struct {
		local, url string
		flags      []string
	}{
		{tsv, "s3://edges/fb/edges.tsv", byIndex},
		{pairs, "s3://edges/fb/pairs.tsv", nil},
		{pq, "s3://edges/fb/edges.parquet", byName},
		{pq, "s3://edges/fb/edges-pq", byName},
	} {
		imp := func(path string) map[string][]byte {
			t.Helper()
			args := append([]string{"import", "--config", cfgPath, "--quiet", "--cache-dir", cache}, tc.flags...)
			if code, _, errOut := run(t, append(args, path)...); code != 0 {
				t.Fatalf("import %s: exit %d: %s", path, code, errOut)
			}
			return storeBytes(t, dir)
		}
		want := imp(tc.local)
		// One HEAD (the requests that are not GETs) for every step of
		// the import: counting columns, sizing the progress, reading.
		before, gets := p.Requests(), p.Gets()
		got := imp(tc.url)
		if heads := p.Requests() - before - (p.Gets() - gets); heads != 1 {
			t.Errorf("import %s: %d requests besides GETs, want 1 HEAD", tc.url, heads)
		}
		if len(got) != len(want) || len(want) == 0 {
			t.Errorf("import %s: %d files, the local file's import %d", tc.url, len(got), len(want))
		}
		for name, w := range want {
			g := got[name]
			if filepath.Base(name) == "manifest.json" {
				g, w = manifestBody(t, g, tc.url), manifestBody(t, w, tc.local)
			}
			if !bytes.Equal(g, w) {
				t.Errorf("import %s: %s differs from the local file's import", tc.url, name)
			}
		}
	}
	code, _, errOut := run(t, "import", "--config", cfgPath, "--cache-dir", cache, "s3://edges/fb/absent.tsv")
	if code != 1 || !strings.Contains(errOut, `"edges"`) || !strings.Contains(errOut, "fb/absent.tsv") {
		t.Errorf("a missing object: exit %d, %s", code, errOut)
	}
}
