package atomicfile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := Write(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "new" {
		t.Fatalf("content %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the target", len(ents))
	}
}

func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x")
	if err := Write(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory in the way makes the rename fail.
	bad := filepath.Join(dir, "sub")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(bad, []byte("new"), 0o644); err == nil {
		t.Fatal("rename over a non-empty directory succeeded")
	}
	if err := Write(filepath.Join(dir, "missing", "y"), []byte("z"), 0o644); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("temporary files left behind: %d entries", len(ents))
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("old file changed: %q", b)
	}
}

// Invariant 3: device nodes, FIFOs and directories are refused and left as
// they were; a symbolic link is followed and stays a link.
func TestWriteRefusesNonRegularTargets(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{fifo: "named pipe", sub: "directory", "/dev/null": "character device"}
	for p, want := range cases {
		before, _ := os.Lstat(p)
		err := Write(p, []byte("x"), 0o644)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming the path and %q", p, err, want)
		}
		after, _ := os.Lstat(p)
		if before.Mode() != after.Mode() {
			t.Errorf("%s: mode changed from %v to %v", p, before.Mode(), after.Mode())
		}
	}
	// A link to a device is refused too.
	link := filepath.Join(dir, "tonull")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("x"), 0o644); err == nil {
		t.Error("a link to /dev/null was replaced")
	}
	// A link to a regular file: the file gets the data, the link stays.
	real := filepath.Join(dir, "real")
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln := filepath.Join(dir, "ln")
	if err := os.Symlink("real", ln); err != nil {
		t.Fatal(err)
	}
	if err := Write(ln, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(ln); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("link target holds %q, want new", b)
	}
	// A dangling link creates its target.
	dl := filepath.Join(dir, "dangling")
	if err := os.Symlink("created", dl); err != nil {
		t.Fatal(err)
	}
	if err := Write(dl, []byte("c"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "created")); string(b) != "c" {
		t.Errorf("dangling link target holds %q", b)
	}
}

// Invariant 4: the temporary files of a killed write are removed by the
// next successful one; other hidden files stay.
func TestWriteRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "st.json")
	stale := filepath.Join(dir, ".st.json.tmp-123456")
	other := filepath.Join(dir, ".other.tmp-1")
	for _, f := range []string{stale, other} {
		if err := os.WriteFile(f, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file's temporary was removed: %v", err)
	}
}

// writeLog records the length of every write it is given.
type writeLog struct {
	lens []int
	data []byte
}

func (w *writeLog) Write(b []byte) (int, error) {
	w.lens = append(w.lens, len(b))
	w.data = append(w.data, b...)
	return len(b), nil
}

// TestPiecesBoundEachWrite checks that no write reaching the file is
// larger than PieceBytes, whether it comes from one large Write or from
// io.Copy of a reader that writes itself out in one call (a WriterTo),
// and that the bytes arrive whole and in order.
func TestPiecesBoundEachWrite(t *testing.T) {
	data := make([]byte, 5*PieceBytes+3)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for name, write := range map[string]func(p pieces) error{
		"Write": func(p pieces) error { _, err := p.Write(data); return err },
		"Copy":  func(p pieces) error { _, err := io.Copy(p, bytes.NewReader(data)); return err },
	} {
		log := &writeLog{}
		if err := write(pieces{log}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(log.data, data) {
			t.Errorf("%s: the bytes written differ from the data", name)
		}
		for _, n := range log.lens {
			if n > PieceBytes {
				t.Errorf("%s: a write of %d bytes, want at most %d", name, n, PieceBytes)
			}
		}
	}
	// Through Write and WriteFrom, to a file.
	p := filepath.Join(t.TempDir(), "big")
	if err := Write(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("file content differs (%v)", err)
	}
	src := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(src, data[:PieceBytes+1], 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFrom(p, 0o644, func(w io.Writer) error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	if got, _ := os.ReadFile(p); err != nil || !bytes.Equal(got, data[:PieceBytes+1]) {
		t.Fatalf("copied file content differs (%v)", err)
	}
}
