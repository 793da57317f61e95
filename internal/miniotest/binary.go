package miniotest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/internal/shared"
)

// Module and Version pin the MinIO server the tests run. MinIO has no
// semantic version tags; this pseudo-version is served by the module proxy
// and its go.mod has no replace directives, so go install builds it.
const (
	Module  = "github.com/minio/minio"
	Version = "v0.0.0-20260212201848-7aac2a2c5b7c"
)

// buildTimeout bounds one build of the server (about 3 minutes on two
// cores with a cold module cache).
const buildTimeout = 30 * time.Minute

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary returns the path of the pinned MinIO server, building it first if
// this machine has none (invariant 1). When it cannot be had the test skips,
// or fails where real components are required (invariant 2).
func Binary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() { binPath, binErr = findOrBuild(tb) })
	if binErr != nil {
		if shared.Required() {
			tb.Fatalf("miniotest: no MinIO server: %v", binErr)
		}
		tb.Skipf("miniotest: no MinIO server (skipping; CI=true makes this a failure): %v", binErr)
	}
	return binPath
}

// Path is where Binary keeps the server: DIR/batchprep/minio/VERSION/minio
// under os.UserCacheDir.
func Path() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("miniotest: no user cache directory: %w", err)
	}
	return filepath.Join(dir, "batchprep", "minio", Version, "minio"), nil
}

func findOrBuild(tb testing.TB) (string, error) {
	target, err := Path()
	if err != nil {
		return "", err
	}
	if executable(target) {
		return target, nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return "", fmt.Errorf("miniotest: %w", err)
	}
	unlock, err := lockFile(filepath.Join(filepath.Dir(target), ".build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if executable(target) { // another process built it while we waited
		return target, nil
	}
	tb.Logf("miniotest: building %s@%s into %s (once per machine)", Module, Version, target)
	start := time.Now()
	if err := build(target); err != nil {
		return "", err
	}
	tb.Logf("miniotest: built MinIO in %v", time.Since(start).Round(time.Second))
	return target, nil
}

// build installs the server into a temporary GOBIN beside target and
// renames it into place.
func build(target string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return errors.New("miniotest: the go command is not on PATH, so MinIO cannot be built")
	}
	gobin, err := os.MkdirTemp(filepath.Dir(target), ".gobin-")
	if err != nil {
		return fmt.Errorf("miniotest: %w", err)
	}
	defer os.RemoveAll(gobin)
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "install", Module+"@"+Version)
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-trimpath", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("miniotest: go install %s@%s: %v\n%s", Module, Version, err, tail(out, 2000))
	}
	if err := os.Rename(filepath.Join(gobin, "minio"), target); err != nil {
		return fmt.Errorf("miniotest: %w", err)
	}
	return nil
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// lockFile takes an exclusive flock on path, waiting for other holders.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("miniotest: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("miniotest: lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
