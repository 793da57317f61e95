package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/internal/miniotest"
)

// TestReadMixOpensObjectsAtOnce: a mixture's Parquet objects open at once
// (HEADs overlap behind a delaying proxy, which one open at a time never
// shows), and read prints what it prints for the same corpora as local
// files. A mixture whose corpora 1 and 2 are missing names corpus 1, the
// one a read opening them in turn would have stopped at.
func TestReadMixOpensObjectsAtOnce(t *testing.T) {
	ctfPath, pqPath := mixFiles(t)
	s := miniotest.Start(t)
	s.MakeBucket("corpora")
	s.PutFile("corpora", "tiny.ctf", ctfPath)
	for k := range 4 {
		s.PutFile("corpora", fmt.Sprintf("p%d.parquet", k), pqPath)
	}
	proxy := s.ProxyFor(t)
	proxy.SetDelay(30 * time.Millisecond)
	miniotest.SetEnv(t, proxy.Env(t, s))
	flags := []string{"--stream", "x:2", "--stream", "y:1", "--mb", "3", "--seed", "5", "--format", "jsonl"}
	local := []string{"read", "--mix", ctfPath + "=2"}
	object := []string{"read", "--mix", "s3://corpora/tiny.ctf=2", "--cache-dir", t.TempDir()}
	for k := range 4 {
		local = append(local, "--mix", pqPath+"=1")
		object = append(object, "--mix", fmt.Sprintf("s3://corpora/p%d.parquet=1", k))
	}
	cl, want, el := run(t, append(local, flags...)...)
	proxy.ResetCounts()
	co, got, eo := run(t, append(object, flags...)...)
	if cl != 0 || co != 0 {
		t.Fatalf("exit %d (%s) and %d (%s)", cl, el, co, eo)
	}
	if got != want || want == "" {
		t.Errorf("the objects' mixture reads otherwise than the files'\nfiles:\n%s\nobjects:\n%s", want, got)
	}
	if n := proxy.MaxHeadsInFlight(); n < 2 {
		t.Errorf("at most %d HEAD in flight: the objects opened one at a time", n)
	}

	code, _, errOut := run(t, "read", "--mix", "s3://corpora/p0.parquet=1", "--mix", "s3://corpora/absent1.parquet=1",
		"--mix", "s3://corpora/absent2.parquet=1", "--stream", "x:2", "--stream", "y:1", "--cache-dir", t.TempDir())
	if code != 1 || !strings.Contains(errOut, "--mix 1") || !strings.Contains(errOut, "absent1.parquet") || strings.Contains(errOut, "absent2") {
		t.Errorf("corpora 1 and 2 missing: exit %d, %s", code, errOut)
	}
}

// TestReadMixWarningsInOrder: the open-time warnings of a mixture's
// corpora (each CTF file here lacks its last newline) come in the order of
// --mix, every time.
func TestReadMixWarningsInOrder(t *testing.T) {
	dir := t.TempDir()
	var args []string
	for k := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("c%d.ctf", k))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("%d |x 1 2\n%d |x 3 4", k, 10+k)), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--mix", p+"=1")
	}
	for range 10 {
		code, _, errOut := run(t, append(append([]string{"read"}, args...), "--stream", "x:2", "--format", "summary")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		last := -1
		for k := range 4 {
			at := strings.Index(errOut, fmt.Sprintf("c%d.ctf", k))
			if at < 0 || at < last {
				t.Fatalf("corpus %d's warning missing or out of order:\n%s", k, errOut)
			}
			last = at
		}
	}
}

// TestHeldWarnings: warnings before release wait, in order, and pass on at
// release; later ones pass on at once.
func TestHeldWarnings(t *testing.T) {
	var got []string
	h := &heldWarnings{out: func(e ctf.Error) { got = append(got, e.Msg) }}
	h.warn(ctf.Error{Msg: "a"})
	h.warn(ctf.Error{Msg: "b"})
	if len(got) != 0 {
		t.Fatalf("passed on before release: %v", got)
	}
	h.release()
	h.warn(ctf.Error{Msg: "c"})
	if strings.Join(got, "") != "abc" {
		t.Errorf("got %v", got)
	}
}
