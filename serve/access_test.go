package serve_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// TestToken: invariant 6.
func TestToken(t *testing.T) {
	file := writeCorpus(t, 10)
	_, conn, _ := startServer(t, serve.Options{Token: "s3cret"})
	req := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, MaxMinibatches: 1}
	for _, md := range []metadata.MD{nil, metadata.Pairs("authorization", "Bearer wrong"), metadata.Pairs("authorization", "s3cret")} {
		ctx := metadata.NewOutgoingContext(context.Background(), md)
		if _, err := collectErr(ctx, conn, req); status.Code(err) != codes.Unauthenticated {
			t.Errorf("metadata %v: %v, want Unauthenticated", md, err)
		}
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer s3cret")
	if msgs, err := collectErr(ctx, conn, req); err != nil || len(msgs) != 1 {
		t.Fatalf("with the token: %d messages, %v", len(msgs), err)
	}
	h, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "batchprep.v1.Batches"})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health without a token: %v %v", h, err)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "127.3.4.5:0": true, "[::1]:80": true, "localhost:9": true,
		"0.0.0.0:1": false, ":80": false, "10.0.0.1:5": false, "example.com:1": false, "nonsense": false} {
		if serve.IsLoopback(addr) != want {
			t.Errorf("IsLoopback(%q) != %v", addr, want)
		}
	}
}

// TestMetrics: the /metrics endpoint counts what was sent, and needs the
// token when one is set.
func TestMetrics(t *testing.T) {
	file := writeCorpus(t, 20)
	_, conn, reg := startServer(t, serve.Options{})
	msgs := collect(t, conn, &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "10"})
	for _, token := range []string{"", "tok"} {
		hs := httptest.NewServer(serve.MetricsHandler(reg, token))
		get := func(auth string) (int, string) {
			rq, _ := http.NewRequest("GET", hs.URL+"/metrics", nil)
			if auth != "" {
				rq.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(rq)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		if token != "" {
			if code, _ := get(""); code != http.StatusUnauthorized {
				t.Errorf("no token: HTTP %d", code)
			}
		}
		code, body := get("Bearer " + token)
		if code != 200 {
			t.Fatalf("HTTP %d", code)
		}
		for _, want := range []string{
			`batchprep_serve_batches_sent_total{call="sequences"} ` + itoa(len(msgs)),
			"batchprep_serve_samples_sent_total ", "batchprep_serve_bytes_sent_total", "batchprep_serve_clients",
			"batchprep_serve_parse_wait_seconds_total", `batchprep_serve_calls_total{call="sequences",code="OK"} 1`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %q", want)
			}
		}
		hs.Close()
	}
}

// TestBearerAnyCase: the scheme's name is case-insensitive (RFC 6750), for
// the gRPC calls and /metrics alike; the token itself is not.
func TestBearerAnyCase(t *testing.T) {
	file := writeCorpus(t, 10)
	_, conn, reg := startServer(t, serve.Options{Token: "s3cret-s3cret-16"})
	req := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, MaxMinibatches: 1}
	hs := httptest.NewServer(serve.MetricsHandler(reg, "s3cret-s3cret-16"))
	defer hs.Close()
	for auth, want := range map[string]bool{
		"Bearer s3cret-s3cret-16": true, "bearer s3cret-s3cret-16": true, "BEARER s3cret-s3cret-16": true,
		"bEaReR  s3cret-s3cret-16": true, "Bearer S3CRET-S3CRET-16": false, "Basic s3cret-s3cret-16": false,
		"Bearers3cret-s3cret-16": false,
	} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", auth)
		_, err := collectErr(ctx, conn, req)
		if (err == nil) != want {
			t.Errorf("gRPC with %q: %v, want accepted %v", auth, err, want)
		}
		rq, _ := http.NewRequest("GET", hs.URL+"/metrics", nil)
		rq.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if (resp.StatusCode == 200) != want {
			t.Errorf("/metrics with %q: HTTP %d, want accepted %v", auth, resp.StatusCode, want)
		}
	}
}
