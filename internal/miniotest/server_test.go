package miniotest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"runtime"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func get(t *testing.T, s *Server, bucket, key string) ([]byte, error) {
	t.Helper()
	out, err := s.Client().GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// TestStartPutGet: invariant 3. A started server stores and returns an
// object, and keeps it across Restart.
func TestStartPutGet(t *testing.T) {
	s := Start(t)
	s.MakeBucket("bkt")
	want := []byte("hello, object")
	if etag := s.Put("bkt", "k", want); etag == "" {
		t.Fatal("Put returned no ETag")
	}
	got, err := get(t, s, "bkt", "k")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("get: %q, %v; want %q", got, err, want)
	}
	if runtime.GOOS == "linux" {
		// The server's CPU time is read from its own process, not this
		// one's: MinIO spends some starting up and serving, and it only
		// grows.
		before, ok := s.CPU()
		if !ok || before <= 0 {
			t.Fatalf("CPU: %v, %v; want the server's CPU time, more than 0", before, ok)
		}
		for range 50 {
			get(t, s, "bkt", "k")
		}
		if after, _ := s.CPU(); after < before {
			t.Fatalf("CPU fell from %v to %v", before, after)
		}
		self, ok := ProcessCPU(os.Getpid())
		if !ok || self <= 0 {
			t.Fatalf("ProcessCPU of this process: %v, %v", self, ok)
		}
	}
	s.Restart()
	got, err = get(t, s, "bkt", "k")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("get after restart: %q, %v; want %q", got, err, want)
	}
}

// TestEnvIsLocal: invariant 4.
func TestEnvIsLocal(t *testing.T) {
	s := Start(t)
	env := s.Env()
	if env["AWS_ENDPOINT_URL"] != "http://"+s.Addr || env["AWS_EC2_METADATA_DISABLED"] != "true" {
		t.Fatalf("env %v", env)
	}
	resp, err := http.Get(s.Endpoint() + "/minio/health/live")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("liveness: %s", resp.Status)
	}
}
