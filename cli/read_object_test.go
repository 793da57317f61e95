package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// TestReadObject: `read s3://...` prints what `read FILE` prints, for a
// single corpus, a state resumed, and a mixture of a local CTF file and a
// Parquet object; a missing object is exit 1 naming the bucket and key.
func TestReadObject(t *testing.T) {
	ctfPath, pqPath := mixFiles(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "tiny.ctf", ctfPath)
	s.PutFile("corpora", "second.parquet", pqPath)
	miniotest.SetEnv(t, s.Env())
	cache := t.TempDir()
	flags := []string{"--stream", "x:2", "--stream", "y:1", "--mb", "3", "--seed", "5", "--window-chunks", "2", "--chunk-sequences", "2"}
	same := func(name string, local, object []string) {
		t.Helper()
		cl, ol, el := run(t, append(local, flags...)...)
		co, oo, eo := run(t, append(append(object, "--cache-dir", cache), flags...)...)
		if cl != 0 || co != 0 {
			t.Fatalf("%s: exit %d (%s) and %d (%s)", name, cl, el, co, eo)
		}
		if oo != ol || ol == "" {
			t.Errorf("%s: the object's output differs from the file's\nfile:\n%s\nobject:\n%s", name, ol, oo)
		}
	}
	same("ctf", []string{"read", ctfPath}, []string{"read", "s3://corpora/tiny.ctf"})
	same("parquet", []string{"read", pqPath}, []string{"read", "s3://corpora/second.parquet"})
	same("mixture", []string{"read", "--mix", ctfPath + "=0.6", "--mix", pqPath + "=0.4"},
		[]string{"read", "--mix", ctfPath + "=0.6", "--mix", "s3://corpora/second.parquet=0.4"})

	// A state saved reading the file resumes reading the object.
	st := filepath.Join(t.TempDir(), "st.json")
	if code, _, errOut := run(t, append([]string{"read", ctfPath, "--max-minibatches", "2", "--state-out", st}, flags...)...); code != 0 {
		t.Fatal(errOut)
	}
	same("resume", []string{"read", ctfPath, "--state-in", st}, []string{"read", "s3://corpora/tiny.ctf", "--state-in", st})

	// The summary counts the objects' requests and bytes: a cold read
	// fetches the object whole (its index pass), a warm one reads it all
	// from the cache with no GET; a local file has no such lines.
	info, err := os.Stat(ctfPath)
	if err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	summary := func(args ...string) map[string]int64 {
		t.Helper()
		code, out, errOut := run(t, append(append(args, "--format", "summary"), flags...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		got := map[string]int64{}
		for _, m := range regexp.MustCompile(`(?m)^object ([a-zA-Z ]+): (\d+)$`).FindAllStringSubmatch(out, -1) {
			got[m[1]], _ = strconv.ParseInt(m[2], 10, 64)
		}
		return got
	}
	if cold := summary("read", "s3://corpora/tiny.ctf", "--cache-dir", fresh); len(cold) != 5 || cold["GETs"] == 0 ||
		cold["bytes fetched"] < info.Size() || cold["bytes from cache"] > info.Size() || cold["retries"] != 0 || cold["bad cache files"] != 0 {
		t.Errorf("a cold read's object counts: %v (object of %d bytes)", cold, info.Size())
	}
	if warm := summary("read", "s3://corpora/tiny.ctf", "--cache-dir", fresh); len(warm) != 5 || warm["GETs"] != 0 ||
		warm["bytes fetched"] != 0 || warm["bytes from cache"] == 0 {
		t.Errorf("a warm read's object counts: %v", warm)
	}
	if mix := summary("read", "--mix", ctfPath+"=0.6", "--mix", "s3://corpora/second.parquet=0.4", "--cache-dir", fresh); len(mix) != 5 || mix["GETs"] == 0 {
		t.Errorf("a mixture's object counts: %v", mix)
	}
	if local := summary("read", ctfPath); len(local) != 0 {
		t.Errorf("a local file's summary has object counts: %v", local)
	}

	code, _, errOut := run(t, "read", "s3://corpora/absent.ctf", "--stream", "x:2", "--cache-dir", cache)
	if code != 1 || !strings.Contains(errOut, "corpora") || !strings.Contains(errOut, "absent.ctf") {
		t.Errorf("a missing object: exit %d, %s", code, errOut)
	}
	if strings.Contains(errOut, s.SecretKey) {
		t.Errorf("the error shows the secret key: %s", errOut)
	}
}

// TestReadObjectFaults: transient failures of the store (resets, 503
// SlowDown, 500, bodies cut short) during the index pass and the sweep are
// retried, and read prints byte for byte what an undisturbed read prints.
func TestReadObjectFaults(t *testing.T) {
	ctfPath, pqPath := mixFiles(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "tiny.ctf", ctfPath)
	s.PutFile("corpora", "second.parquet", pqPath)
	proxy := s.ProxyFor(t)
	miniotest.SetEnv(t, proxy.Env(t, s))
	flags := []string{"--stream", "x:2", "--stream", "y:1", "--mb", "3", "--seed", "5", "--window-chunks", "2", "--chunk-sequences", "2"}
	for _, url := range []string{"s3://corpora/tiny.ctf", "s3://corpora/second.parquet"} {
		_, want, _ := run(t, append([]string{"read", url, "--cache-dir", t.TempDir()}, flags...)...)
		for _, f := range []miniotest.Fault{miniotest.Reset, miniotest.SlowDown, miniotest.InternalError, miniotest.ShortBody} {
			proxy.ResetCounts()
			// The second and fourth requests of the run fail once.
			next, injected := proxy.Requests(), proxy.Injected()
			proxy.FailRequest(f, next+2, next+4)
			start := time.Now()
			code, got, errOut := run(t, append([]string{"read", url, "--cache-dir", t.TempDir()}, flags...)...)
			if code != 0 || got != want {
				t.Errorf("%s with %v: exit %d (%s); output equal: %v", url, f, code, errOut, got == want)
			}
			t.Logf("%s with %v: %d requests, %v", url, f, proxy.Requests()-next, time.Since(start))
			if proxy.Injected() == injected {
				t.Errorf("%s with %v: no fault met a request", url, f)
			}
		}
	}
}
