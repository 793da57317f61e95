//go:build linux

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size bytes at a new directory, or skips
// the test with a message when that is not possible (not root, no mount
// permission in the container).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs (full-disk and read-only tests); run as root to include them")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); the full-disk tests need CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file until the file system is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
}

// On a full disk, a read-only file system or a
// vanished directory, a failed write keeps the previous data (store, state)
// and the message names the path and the reason.
func TestFullDiskReadOnlyVanished(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs and starts child processes; skipped with -short")
	}
	mnt := mountTmpfs(t, "2m")
	f := newBigFixture(t, 20000, 30000)
	// A store and a state on the small file system.
	cfg := filepath.Join(mnt, "g.toml")
	os.WriteFile(cfg, must(os.ReadFile(filepath.Join(f.dir, f.cfg))), 0o644)
	if code, _, e := run(t, "import", "--config", cfg, "--rel-col", "1", "--quiet", filepath.Join(f.dir, f.small)); code != 0 {
		t.Fatal(e)
	}
	corpus := filepath.Join(f.dir, f.corpus)
	st := filepath.Join(mnt, "st.json")
	readArgs := []string{"read", corpus, "--stream", "x:2", "--mb", "3", "--quiet", "--max-minibatches", "10"}
	if code, _, e := run(t, append(readArgs, "--state-out", st)...); code != 0 {
		t.Fatal(e)
	}
	oldStore := takeFileSet(t, mnt, "ent", "edges")
	oldState := must(os.ReadFile(st))
	fill(t, mnt)

	t.Run("import on a full disk", func(t *testing.T) {
		code, _, e := run(t, "import", "--config", cfg, "--rel-col", "1", "--quiet", filepath.Join(f.dir, f.edges))
		t.Logf("stderr: %s", e)
		if code != 1 || !strings.Contains(e, "no space left on device") || !strings.Contains(e, mnt) {
			t.Errorf("exit %d, stderr %q", code, e)
		}
		if now := takeFileSet(t, mnt, "ent", "edges"); !now.equal(oldStore) || len(now.hidden) > 0 {
			t.Errorf("the store changed or staging directories stayed: %v", now.hidden)
		}
	})
	t.Run("state on a full disk", func(t *testing.T) {
		code, _, e := run(t, append(readArgs, "--state-in", st, "--state-out", st)...)
		t.Logf("stderr: %s", e)
		if code != 1 || !strings.Contains(e, "no space left on device") || !strings.Contains(e, st) {
			t.Errorf("exit %d, stderr %q", code, e)
		}
		if now := must(os.ReadFile(st)); !bytes.Equal(now, oldState) {
			t.Error("the old state changed")
		}
		if m, _ := filepath.Glob(filepath.Join(mnt, ".st.json.tmp-*")); len(m) > 0 {
			t.Errorf("temporary files left: %v", m)
		}
	})
	t.Run("stdout on a full disk", func(t *testing.T) {
		out, err := os.Create(filepath.Join(mnt, "out.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		other := filepath.Join(t.TempDir(), "st.json")
		cmd := child(t, f.dir, "read", corpus, "--stream", "x:2", "--mb", "1", "--quiet", "--state-out", other)
		var e bytes.Buffer
		cmd.Stdout, cmd.Stderr = out, &e
		cmd.Run()
		t.Logf("stderr: %s", e.String())
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(e.String(), "writing output") || !strings.Contains(e.String(), "no space left") {
			t.Fatalf("exit %d, stderr %q", code, e.String())
		}
		// Nothing reached the disk, so the state is the starting one.
		if b, _ := os.ReadFile(other); !strings.Contains(string(b), `"position":0,`) {
			t.Errorf("state ahead of the output: %s", b)
		}
	})
	os.Remove(filepath.Join(mnt, "filler"))
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
	t.Run("read-only", func(t *testing.T) {
		code, _, e := run(t, "import", "--config", cfg, "--rel-col", "1", "--quiet", filepath.Join(f.dir, f.edges))
		t.Logf("stderr: %s", e)
		if code != 1 || !strings.Contains(e, "read-only file system") || !strings.Contains(e, mnt) {
			t.Errorf("import: exit %d, stderr %q", code, e)
		}
		code, _, e = run(t, append(readArgs, "--state-in", st, "--state-out", st)...)
		if code != 1 || !strings.Contains(e, "read-only file system") || !strings.Contains(e, st) {
			t.Errorf("state: exit %d, stderr %q", code, e)
		}
		if now := takeFileSet(t, mnt, "ent", "edges"); !now.equal(oldStore) {
			t.Error("the store changed")
		}
		if now := must(os.ReadFile(st)); !bytes.Equal(now, oldState) {
			t.Error("the old state changed")
		}
	})
	t.Run("vanished directory", func(t *testing.T) {
		gone := filepath.Join(t.TempDir(), "gone")
		os.Mkdir(gone, 0o755)
		os.Remove(gone)
		p := filepath.Join(gone, "st.json")
		code, _, e := run(t, append(readArgs, "--state-out", p)...)
		t.Logf("stderr: %s", e)
		if code != 1 || !strings.Contains(e, "no such file or directory") || !strings.Contains(e, gone) {
			t.Errorf("exit %d, stderr %q", code, e)
		}
	})
}
