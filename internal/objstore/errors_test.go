package objstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkRefusal checks an error for invariant 5: its kind, the words it
// must have, and no secret.
func checkRefusal(t *testing.T, err error, kind error, secrets []string, want ...string) {
	t.Helper()
	t.Logf("error: %v", err)
	if !errors.Is(err, kind) {
		t.Fatalf("error %v; want %v", err, kind)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q shows a secret", err)
		}
	}
	// The store's answer is told by status and request ID, not the SDK's text.
	for _, noise := range []string{"operation error", "HostID", "https response error"} {
		if strings.Contains(err.Error(), noise) {
			t.Errorf("error %q has the SDK's %q", err, noise)
		}
	}
}

// TestRefusals: invariant 5, with credentials from the environment.
func TestRefusals(t *testing.T) {
	s, _ := serve(t, 1000)
	ctx := context.Background()
	secrets := []string{s.SecretKey}

	_, err := Open(ctx, "s3://"+testBucket+"/missing/key", testOptions(t))
	checkRefusal(t, err, ErrNotFound, secrets, "s3://test-bucket/missing/key", `no such key "missing/key"`, `bucket "test-bucket"`, "credentials: environment", "HTTP 404", "request ID ")

	_, err = Open(ctx, "s3://no-such-bucket/k", testOptions(t))
	checkRefusal(t, err, ErrNotFound, secrets, `no such bucket "no-such-bucket"`, "credentials: environment")

	wrong := "wrong-secret-" + s.SecretKey[:8] + "-x"
	t.Setenv("AWS_SECRET_ACCESS_KEY", wrong)
	_, err = Open(ctx, testURL, testOptions(t))
	checkRefusal(t, err, ErrDenied, append(secrets, wrong), testURL, `bucket "test-bucket"`, `key "dir/corpus.bin"`, "credentials: environment", "HTTP 403", "request ID ")
}

// TestRefusalsSharedFile: invariant 5, with credentials from a profile of
// the shared credentials file, and with none at all.
func TestRefusalsSharedFile(t *testing.T) {
	s, _ := serve(t, 1000)
	ctx := context.Background()
	wrong := "profile-secret-" + s.SecretKey[:6]
	creds := filepath.Join(t.TempDir(), "credentials")
	os.WriteFile(creds, []byte("[trainer]\naws_access_key_id = "+s.AccessKey+"\naws_secret_access_key = "+wrong+"\n"), 0o600)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_PROFILE", "trainer")
	_, err := Open(ctx, testURL, testOptions(t))
	checkRefusal(t, err, ErrDenied, []string{s.SecretKey, wrong}, testURL, "shared credentials file "+creds+", profile trainer")

	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds+"-absent")
	t.Setenv("AWS_PROFILE", "")
	_, err = Open(ctx, testURL, testOptions(t))
	checkRefusal(t, err, ErrDenied, []string{s.SecretKey}, testURL, "credentials: none (anonymous)")
}
