package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/miniotest"
	"github.com/batchprep/batchprep/internal/objstore"
)

// TestConvertObject: convert reads s3:// inputs and writes s3:// outputs
// with the bytes a local conversion writes, both ways (CTF to Parquet and
// back), streams inferred or given; a failed conversion leaves no object;
// a missing input object or output bucket is exit 1 naming it.
func TestConvertObject(t *testing.T) {
	ctfPath, pqPath := mixFiles(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "tiny.ctf", ctfPath)
	s.PutFile("corpora", "second.parquet", pqPath)
	miniotest.SetEnv(t, s.Env())
	cache := t.TempDir()
	dir := t.TempDir()
	objectBytes := func(url string) []byte {
		t.Helper()
		o, err := objstore.Open(context.Background(), url, objstore.Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		b := make([]byte, o.Size())
		if _, err := o.ReadAt(b, 0); err != nil {
			t.Fatal(err)
		}
		return b
	}
	convert := func(args ...string) string {
		t.Helper()
		code, _, errOut := run(t, append(append([]string{"convert"}, args...), "--cache-dir", cache)...)
		if code != 0 {
			t.Fatalf("convert %v: exit %d: %s", args, code, errOut)
		}
		return errOut
	}
	streams := []string{"--stream", "x:2", "--stream", "y:1"}
	for i, tc := range []struct {
		local, url, ext string
		flags           []string
	}{
		{ctfPath, "s3://corpora/tiny.ctf", ".parquet", nil},
		{ctfPath, "s3://corpora/tiny.ctf", ".parquet", streams},
		{pqPath, "s3://corpora/second.parquet", ".ctf", nil},
	} {
		name := filepath.Join(dir, "out"+string(rune('a'+i)))
		convert(append([]string{tc.local, name + "-local" + tc.ext}, tc.flags...)...)
		convert(append([]string{tc.url, name + "-object" + tc.ext}, tc.flags...)...)
		outURL := "s3://corpora/out/" + filepath.Base(name) + tc.ext
		msg := convert(append([]string{tc.url, outURL}, tc.flags...)...)
		want, err := os.ReadFile(name + "-local" + tc.ext)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name + "-object" + tc.ext)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || !bytes.Equal(objectBytes(outURL), want) {
			t.Errorf("convert %s: the outputs differ from the local conversion's", tc.url)
		}
		if !strings.Contains(msg, outURL) {
			t.Errorf("convert %s %s: stderr does not name the output: %s", tc.url, outURL, msg)
		}
	}

	// A bad sequence stops the conversion: no object is written.
	if code, _, errOut := run(t, "convert", "s3://corpora/tiny.ctf", "s3://corpora/bad.parquet", "--stream", "x:1", "--cache-dir", cache); code != 1 {
		t.Errorf("a failed conversion: exit %d, %s", code, errOut)
	}
	if _, err := objstore.Open(context.Background(), "s3://corpora/bad.parquet", objstore.Options{CacheDir: cache}); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("a failed conversion left an object: %v", err)
	}
	for _, args := range [][]string{{"s3://corpora/absent.ctf", filepath.Join(dir, "x.parquet")}, {ctfPath, "s3://nobucket/out/x.parquet"}} {
		code, _, errOut := run(t, append(append([]string{"convert"}, args...), "--cache-dir", cache)...)
		url := args[0]
		if !objstore.IsURL(url) {
			url = args[1]
		}
		bucket, key, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
		if code != 1 || !strings.Contains(errOut, bucket) || !strings.Contains(errOut, key) {
			t.Errorf("convert %v: exit %d, %s", args, code, errOut)
		}
	}
}
