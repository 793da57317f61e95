package miniotest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// proxiedClient is an SDK client through p that does not retry, so every
// fault reaches the test.
func proxiedClient(s *Server, p *Proxy) *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(p.Endpoint()),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		Retryer:      aws.NopRetryer{},
	})
}

// TestProxyFaults: invariant 5. Each fault shows up at the client as that
// fault; unfaulted requests pass with valid signatures.
func TestProxyFaults(t *testing.T) {
	s := Start(t)
	s.MakeBucket("bkt")
	want := bytes.Repeat([]byte("0123456789"), 10000)
	s.Put("bkt", "k", want)
	p := s.ProxyFor(t)
	c := proxiedClient(s, p)
	read := func() ([]byte, error) {
		out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
		if err != nil {
			return nil, err
		}
		defer out.Body.Close()
		return io.ReadAll(out.Body)
	}
	if got, err := read(); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("clean read: %d bytes, %v", len(got), err)
	}
	cases := []struct {
		f    Fault
		want string
	}{
		{Reset, "connection reset"},
		{SlowDown, "SlowDown"},
		{InternalError, "InternalError"},
		{TooManyRequests, "429"},
		{ShortBody, "unexpected EOF"},
	}
	for _, c := range cases {
		n := 1
		if c.f == Reset {
			n = 2 // net/http resends once on a reused connection
		}
		p.FailNext(c.f, n)
		got, err := read()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: read %d bytes, err %v; want an error with %q", c.f, len(got), err, c.want)
		}
	}
	p.FailRequest(Reset, p.Requests()+2, p.Requests()+3)
	if _, err := read(); err != nil {
		t.Fatalf("request before the scheduled one: %v", err)
	}
	if _, err := read(); err == nil {
		t.Fatal("scheduled reset did not happen")
	}
	if p.Gets() != p.Requests() {
		t.Errorf("gets %d, requests %d; all were GETs", p.Gets(), p.Requests())
	}
}

// TestProxyDelay: every request waits the set delay.
func TestProxyDelay(t *testing.T) {
	s := Start(t)
	p := s.ProxyFor(t)
	p.SetDelay(50 * time.Millisecond)
	start := time.Now()
	resp, err := http.Get(p.Endpoint() + "/minio/health/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("request took %v, want at least the 50ms delay", d)
	}
}

// TestProxyRate: a capped response comes whole, and no faster than its cap.
func TestProxyRate(t *testing.T) {
	s := Start(t)
	s.MakeBucket("bkt")
	data := bytes.Repeat([]byte("0123456789abcdef"), 128<<10) // 2 MiB
	s.Put("bkt", "k", data)
	p := s.ProxyFor(t)
	p.SetRate(8 << 20)
	start := time.Now()
	out, err := proxiedClient(s, p).GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get through the capped proxy: %d bytes, %v; want the %d put", len(got), err, len(data))
	}
	// 2 MiB at 8 MiB/s: a quarter of a second, less the first piece's
	// hundredth, which goes at once.
	if d := time.Since(start); d < 240*time.Millisecond {
		t.Fatalf("2 MiB at 8 MiB/s took %v", d)
	}
}
