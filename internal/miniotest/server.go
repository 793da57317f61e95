package miniotest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Region is the region the server and its clients use.
const Region = "us-east-1"

// readyTimeout bounds the wait for a started server to answer.
const readyTimeout = 60 * time.Second

// Server is a running MinIO. Its methods are safe for concurrent use.
type Server struct {
	tb        testing.TB
	bin       string
	dir       string // data directory
	Addr      string // host:port on loopback
	AccessKey string
	SecretKey string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *bytes.Buffer
}

// Start launches a MinIO server on a free loopback port with a temporary
// data directory and random root credentials, and waits until it is ready
// (invariant 3). The server is stopped when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{
		tb:        tb,
		bin:       Binary(tb),
		dir:       tb.TempDir(),
		AccessKey: "test" + randHex(8),
		SecretKey: randHex(20),
	}
	port, err := freePort()
	if err != nil {
		tb.Fatalf("miniotest: %v", err)
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := s.launch(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.stop)
	return s
}

// CPU is the CPU time (user and system) the server process has used since
// it last started; ok is false where it cannot be read (not Linux). A
// benchmark takes it before and after a run, for the share of the
// machine the store took.
func (s *Server) CPU() (d time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0, false
	}
	return ProcessCPU(s.cmd.Process.Pid)
}

// Endpoint is the server's base URL.
func (s *Server) Endpoint() string { return "http://" + s.Addr }

// Env returns the AWS_* variables that point an SDK client at the server
// (invariant 4). Apply them with SetEnv, or pass them to a child process.
func (s *Server) Env() map[string]string {
	return EnvFor(s.tb, s.Endpoint(), s.AccessKey, s.SecretKey)
}

// EnvFor is Env for another endpoint (a Proxy's) and keys.
func EnvFor(tb testing.TB, endpoint, accessKey, secretKey string) map[string]string {
	absent := filepath.Join(tb.TempDir(), "absent")
	return map[string]string{
		"AWS_ENDPOINT_URL":            endpoint,
		"AWS_ACCESS_KEY_ID":           accessKey,
		"AWS_SECRET_ACCESS_KEY":       secretKey,
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  Region,
		"AWS_DEFAULT_REGION":          "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             absent + "-config",
		"AWS_SHARED_CREDENTIALS_FILE": absent + "-credentials",
		"AWS_EC2_METADATA_DISABLED":   "true",
	}
}

// SetEnv sets env for the rest of the test (t.Setenv, so not with
// t.Parallel).
func SetEnv(t testing.TB, env map[string]string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// SetRefusedEnv points the AWS environment, for the rest of the test, at
// a loopback port where nothing listens (one just closed), with
// credentials: every request is refused, as by a store that is down.
func SetRefusedEnv(t testing.TB) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	SetEnv(t, EnvFor(t, "http://"+addr, "refused-key", "refused-secret"))
}

// Client returns an S3 client with the root credentials, for setting up
// buckets and objects.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:                     Region,
		BaseEndpoint:               aws.String(s.Endpoint()),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// MakeBucket creates a bucket.
func (s *Server) MakeBucket(bucket string) {
	s.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		s.tb.Fatalf("miniotest: make bucket %s: %v", bucket, err)
	}
}

// Put stores data as bucket/key and returns the object's ETag.
func (s *Server) Put(bucket, key string, data []byte) string {
	s.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := s.Client().PutObject(ctx, &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		s.tb.Fatalf("miniotest: put s3://%s/%s: %v", bucket, key, err)
	}
	return aws.ToString(out.ETag)
}

// PutFile stores the file at path as bucket/key and returns its ETag.
func (s *Server) PutFile(bucket, key, path string) string {
	s.tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		s.tb.Fatalf("miniotest: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.tb.Fatalf("miniotest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := s.Client().PutObject(ctx, &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: f, ContentLength: aws.Int64(fi.Size()),
	})
	if err != nil {
		s.tb.Fatalf("miniotest: put s3://%s/%s from %s: %v", bucket, key, path, err)
	}
	return aws.ToString(out.ETag)
}

// Restart stops the server and starts it again on the same port with the
// same data and credentials (invariant 3): the "server restarted mid-run"
// fault. A client sees refused connections while it is down.
func (s *Server) Restart() {
	s.tb.Helper()
	s.stop()
	if err := s.launch(); err != nil {
		s.tb.Fatal(err)
	}
}

// Stop stops the server now (it stays stopped until Restart).
func (s *Server) Stop() { s.stop() }

func (s *Server) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lastErr error
	// The port may still be held for a moment after a stop: retry briefly.
	for attempt := 0; attempt < 20; attempt++ {
		if err := s.launchOnce(); err != nil {
			lastErr = err
			time.Sleep(250 * time.Millisecond)
			continue
		}
		return nil
	}
	return lastErr
}

func (s *Server) launchOnce() error {
	log := &bytes.Buffer{}
	cmd := exec.Command(s.bin, "server", "--quiet",
		"--address", s.Addr,
		"--console-address", "127.0.0.1:0",
		"--certs-dir", filepath.Join(s.dir, "certs"),
		filepath.Join(s.dir, "data"))
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
		"MINIO_CI_CD=1",
	)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("miniotest: start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	if err := waitReady(s.Endpoint(), done); err != nil {
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("miniotest: server at %s: %v; its log:\n%s", s.Addr, err, tail(log.Bytes(), 4000))
	}
	s.cmd, s.done, s.log = cmd, done, log
	return nil
}

func (s *Server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// waitReady polls the cluster health endpoint until it answers 200, the
// process exits, or readyTimeout passes. The readiness endpoint is not
// enough: it can answer 200 while the object layer is still starting, and
// the first request then gets 503 XMinioServerNotInitialized.
func waitReady(endpoint string, exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("exited before it was ready")
		default:
		}
		resp, err := client.Get(endpoint + "/minio/health/cluster")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v", readyTimeout)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
