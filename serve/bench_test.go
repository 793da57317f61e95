package serve_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/readopts"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/shared"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// atisCopies writes ATIS train n times into one file of b's temp dir.
func atisCopies(b *testing.B, n int) string {
	b.Helper()
	data, err := os.ReadFile(shared.Need(b, "ctf", "atis", "atis.train.ctf"))
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(b.TempDir(), "atis.ctf")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	for range n {
		if _, err := f.Write(data); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var atisStreams = []string{"S0:943:sparse", "S1:26:sparse", "S2:129:sparse"}

// BenchmarkSequences: one epoch of ATIS x10 (30 MB, cached), window order,
// minibatches of 256 samples, index warm. "source" is the baseline, the same
// choices through source.Source in this process (what `read --format
// summary` does); "sequences" and "groups" receive the same minibatches over
// loopback gRPC with a Go client, one per message and grouped. Reports
// samples/s and the process's CPU seconds per million samples (server and
// client share the process).
func BenchmarkSequences(b *testing.B) {
	file := atisCopies(b, 10)
	_, conn, _ := startServer(b, serve.Options{})
	req := &pb.SequenceRequest{Files: []string{file}, Streams: atisStreams}
	if _, err := collectGroups(context.Background(), conn, req); err != nil { // index once
		b.Fatal(err)
	}
	run := func(b *testing.B, epoch func() uint64) {
		var samples uint64
		c0 := cpuTime()
		for b.Loop() {
			samples += epoch()
		}
		el, cpu := b.Elapsed().Seconds(), (cpuTime() - c0).Seconds()
		b.ReportMetric(float64(samples)/el, "samples/s")
		b.ReportMetric(cpu/float64(samples)*1e6, "cpu-s/Msample")
	}
	b.Run("source", func(b *testing.B) {
		streams := make([]corpus.Stream, 3)
		for i, s := range []struct {
			n string
			d int
		}{{"S0", 943}, {"S1", 26}, {"S2", 129}} {
			streams[i] = corpus.Stream{Name: s.n, Dim: s.d, Sparse: true}
		}
		r, err := ctf.Open(file, ctf.Config{Streams: streams, ChunkBytes: 1 << 20})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		run(b, func() uint64 {
			s, err := source.New(r, source.Config{Prefetch: true, PrefetchChunks: readopts.DefaultPrefetchChunks, Schedule: source.ConstantSchedule(256),
				Randomize: randomize.Config{Kind: "window", WindowChunks: 128}})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var n uint64
			for s.Epoch() < 1 {
				mb, err := s.Next()
				if err != nil {
					b.Fatal(err)
				}
				st, err := source.EncodeState(s.State()) // as serve does per minibatch
				if err != nil || len(st) == 0 {
					b.Fatal(err)
				}
				n += mb.End - mb.Start
			}
			return n
		})
	})
	b.Run("sequences", func(b *testing.B) {
		run(b, func() uint64 {
			msgs, err := collectErr(context.Background(), conn, req)
			if err != nil {
				b.Fatal(err)
			}
			return msgs[len(msgs)-1].End - msgs[0].Start
		})
	})
	b.Run("groups", func(b *testing.B) {
		run(b, func() uint64 {
			msgs, err := collectGroups(context.Background(), conn, req)
			if err != nil {
				b.Fatal(err)
			}
			return msgs[len(msgs)-1].End - msgs[0].Start
		})
	})
}

// collectGroups receives a SequenceGroups call's minibatches in order.
func collectGroups(ctx context.Context, conn *grpc.ClientConn, req *pb.SequenceRequest) ([]*pb.SequenceMinibatch, error) {
	st, err := pb.NewBatchesClient(conn).SequenceGroups(ctx, req)
	if err != nil {
		return nil, err
	}
	var msgs []*pb.SequenceMinibatch
	for {
		g, err := st.Recv()
		if err == io.EOF {
			return msgs, nil
		}
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, g.Minibatches...)
	}
}
