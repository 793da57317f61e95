package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// child starts batchprep (this test binary in childEnv mode) with args in
// dir; stdout and stderr are kept in buffers unless the caller sets them.
func child(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), childEnv+"=1", "GOMAXPROCS=2")
	return cmd
}

// startChild starts batchprep with args in dir and returns it with a pipe
// from its stdout and the buffer that collects its stderr.
func startChild(t *testing.T, dir string, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	cmd := child(t, dir, args...)
	e := &bytes.Buffer{}
	cmd.Stderr = e
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out, e
}

// runChild runs batchprep to the end and returns its exit code and output.
func runChild(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := child(t, dir, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), o.String(), e.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, o.String(), e.String()
}

// fileSet hashes every file under the given paths (relative names, with
// hidden entries listed separately): two snapshots are equal iff the same
// files hold the same bytes.
type fileSet struct {
	files  map[string]string // path -> sha256 of the content
	hidden []string          // hidden files and directories (leftovers)
}

func takeFileSet(t *testing.T, root string, paths ...string) fileSet {
	t.Helper()
	s := fileSet{files: map[string]string{}}
	for _, p := range paths {
		full := filepath.Join(root, p)
		filepath.WalkDir(full, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // absent: no files
			}
			rel, _ := filepath.Rel(root, path)
			if strings.HasPrefix(d.Name(), ".") && path != full {
				s.hidden = append(s.hidden, rel)
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				b, _ := os.ReadFile(path)
				h := sha256.Sum256(b)
				s.files[rel] = hex.EncodeToString(h[:])
			}
			return nil
		})
		// Hidden siblings of the path (staging directories, temp files).
		ents, _ := os.ReadDir(filepath.Dir(full))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "."+filepath.Base(full)) {
				rel, _ := filepath.Rel(root, filepath.Join(filepath.Dir(full), e.Name()))
				s.hidden = append(s.hidden, rel)
			}
		}
	}
	sort.Strings(s.hidden)
	return s
}

func (s fileSet) equal(o fileSet) bool {
	if len(s.files) != len(o.files) {
		return false
	}
	for k, v := range s.files {
		if o.files[k] != v {
			return false
		}
	}
	return true
}

func (s fileSet) String() string {
	keys := make([]string, 0, len(s.files))
	for k := range s.files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %.8s\n", k, s.files[k])
	}
	return b.String()
}
