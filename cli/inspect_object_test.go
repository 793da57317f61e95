package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// TestInspectObject: `inspect s3://...` prints what `inspect FILE` prints
// for the same bytes (with the URL for the path), for CTF and Parquet,
// with the streams inferred or given, and for a CTF file with bad
// sequences; a missing object or bucket is exit 1 naming it.
func TestInspectObject(t *testing.T) {
	ctfPath, pqPath := mixFiles(t)
	bad := filepath.Join(t.TempDir(), "bad.ctf")
	if err := os.WriteFile(bad, []byte("1 |x 1 2\n2 |x 3 q\n3 |x 4 5 |y 1\n4 |x 1:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "tiny.ctf", ctfPath)
	s.PutFile("corpora", "second.parquet", pqPath)
	s.PutFile("corpora", "second-pq", pqPath) // no .parquet: told by its first bytes
	s.PutFile("corpora", "bad.ctf", bad)
	miniotest.SetEnv(t, s.Env())
	cache := t.TempDir()
	streams := []string{"--stream", "x:2", "--stream", "y:1"}
	for _, tc := range []struct {
		local, url string
		flags      []string
	}{
		{ctfPath, "s3://corpora/tiny.ctf", nil},
		{ctfPath, "s3://corpora/tiny.ctf", append([]string{"--format", "json"}, streams...)},
		{pqPath, "s3://corpora/second.parquet", nil},
		{pqPath, "s3://corpora/second.parquet", append([]string{"--format", "json"}, streams...)},
		{pqPath, "s3://corpora/second-pq", nil},
		{bad, "s3://corpora/bad.ctf", []string{"--max-errors", "5"}},
		{bad, "s3://corpora/bad.ctf", nil},
	} {
		cl, ol, el := run(t, append([]string{"inspect", tc.local}, tc.flags...)...)
		co, oo, eo := run(t, append([]string{"inspect", tc.url, "--cache-dir", cache}, tc.flags...)...)
		want := strings.ReplaceAll(ol, tc.local, tc.url)
		if co != cl || oo != want || ol == "" {
			t.Errorf("inspect %s %v: exit %d (%s), the file's %d (%s)\nobject:\n%s\nfile:\n%s", tc.url, tc.flags, co, eo, cl, el, oo, want)
		}
	}
	for _, url := range []string{"s3://corpora/absent.ctf", "s3://nobucket/absent.parquet"} {
		code, _, errOut := run(t, "inspect", url, "--cache-dir", cache)
		bucket, key, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
		if code != 1 || !strings.Contains(errOut, bucket) || !strings.Contains(errOut, key) {
			t.Errorf("inspect %s: exit %d, %s", url, code, errOut)
		}
	}
}

// TestObjectRetriesReported: with nothing listening at the endpoint, the
// command says on stderr that it is retrying as soon as it starts to, and
// exits 1 at --fetch-timeout naming the object.
func TestObjectRetriesReported(t *testing.T) {
	miniotest.SetRefusedEnv(t)
	code, _, errOut := run(t, "inspect", "s3://corpora/tiny.ctf", "--cache-dir", t.TempDir(), "--fetch-timeout", "700ms")
	for _, want := range []string{"batchprep: s3://corpora/tiny.ctf: open: ", "connection refused; retrying until", "gave up after"} {
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, errOut, want)
		}
	}
}

// An object is looked up once per command: `inspect` (which detects the
// format, infers the streams and reads) and `convert` send one HEAD each,
// counted by a proxy (requests that are not GETs).
func TestObjectOneHeadPerCommand(t *testing.T) {
	ctfPath, pqPath := mixFiles(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "tiny.ctf", ctfPath)
	s.PutFile("corpora", "second-pq", pqPath)
	p := s.ProxyFor(t)
	miniotest.SetEnv(t, p.Env(t, s))
	out := filepath.Join(t.TempDir(), "tiny.parquet")
	for _, args := range [][]string{
		{"inspect", "s3://corpora/tiny.ctf"},
		{"inspect", "s3://corpora/second-pq"},
		{"convert", "s3://corpora/tiny.ctf", out},
	} {
		before, gets := p.Requests(), p.Gets()
		if code, _, errOut := run(t, append(args, "--cache-dir", t.TempDir())...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if heads := p.Requests() - before - (p.Gets() - gets); heads != 1 {
			t.Errorf("%v: %d requests besides GETs, want 1 HEAD", args, heads)
		}
	}
}
