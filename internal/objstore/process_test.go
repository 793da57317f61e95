package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv marks a run of the test binary as a child of
// TestProcessesShareCache.
const childEnv = "OBJSTORE_TEST_CHILD"

// TestProcessesShareCache: invariants 8 and 9 across processes. Two
// processes (this test binary run again) read the same object in different
// random orders through one cache directory whose bound is a third of the
// object, so they evict each other's files; both read the right bytes.
func TestProcessesShareCache(t *testing.T) {
	s, data := serve(t, 400_000)
	dir := t.TempDir()
	limit := int64(len(data) / 3)
	sum := sha256.Sum256(data)
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for seed := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProcessChild$", "-test.v")
		cmd.Env = os.Environ()
		for k, v := range s.Env() {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Env = append(cmd.Env, childEnv+"="+fmt.Sprintf("%s,%d,%d,%s", dir, limit, seed, hex.EncodeToString(sum[:])))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		outs = append(outs, out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		err := cmd.Wait()
		if err != nil || !strings.Contains(outs[i].String(), "--- PASS: TestProcessChild") {
			t.Errorf("child %d: %v\n%s", i, err, outs[i])
		}
		t.Logf("child %d: %s", i, grepLine(outs[i].String(), "stats"))
	}
	if total, _ := dirBytes(t, dir); total > limit+2*limit/8 {
		t.Fatalf("shared cache holds %d bytes; bound %d", total, limit)
	}
}

// TestProcessChild is the child's side of TestProcessesShareCache: it
// reads the object twice, in random chunks, and checks the digest.
func TestProcessChild(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("run by TestProcessesShareCache")
	}
	var dir, sum string
	var limit int64
	var seed uint64
	if _, err := fmt.Sscanf(strings.ReplaceAll(spec, ",", " "), "%s %d %d %s", &dir, &limit, &seed, &sum); err != nil {
		t.Fatalf("bad %s %q: %v", childEnv, spec, err)
	}
	o, err := Open(context.Background(), testURL, Options{CacheDir: dir, CacheBytes: limit, blockSize: testBlock})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	const chunk = 3*testBlock + 100
	nChunks := (o.Size() + chunk - 1) / chunk
	r := rand.New(rand.NewPCG(seed, 3))
	for pass := range 2 {
		buf := make([]byte, o.Size())
		for _, c := range r.Perm(int(nChunks)) {
			off := int64(c) * chunk
			n := min(chunk, o.Size()-off)
			if k, err := o.ReadAt(buf[off:off+n], off); int64(k) != n {
				t.Fatalf("pass %d: ReadAt at %d: %d, %v", pass, off, k, err)
			}
		}
		if got := sha256.Sum256(buf); hex.EncodeToString(got[:]) != sum {
			t.Fatalf("pass %d: wrong bytes", pass)
		}
	}
	t.Logf("stats %+v", o.Stats())
}

func grepLine(s, word string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
