package serve_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// startUnixServer runs a Server on a Unix socket and returns a client
// connected to it.
func startUnixServer(t *testing.T) *grpc.ClientConn {
	t.Helper()
	return startUnixServerWith(t, serve.Options{})
}

// startUnixServerWith is startUnixServer with options.
func startUnixServerWith(t *testing.T, o serve.Options) *grpc.ClientConn {
	t.Helper()
	dir, err := os.MkdirTemp("", "bp-shm-") // short: a socket path holds at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	o.DataDirs = []string{os.TempDir()}
	srv, err := serve.New(o)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	conn, err := grpc.NewClient("unix:"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); srv.Stop() })
	return conn
}

// sharedReader reads a shared_memory call as SharedArrays documents: it
// maps the ring from the first message's path, copies each message's
// arrays out into the message, then releases them. Before copying every
// tenth message it waits, so that a server that wrote over data not yet
// released would be caught by the comparison with inline arrays.
func sharedReader(t *testing.T, conn *grpc.ClientConn, req *pb.SequenceRequest) (groups []*pb.SequenceGroup, wrapped int) {
	t.Helper()
	groups, wrapped, err := sharedRead(t, conn, req, false)
	if err != nil {
		t.Fatal(err)
	}
	return groups, wrapped
}

// sharedRead is sharedReader returning the call's error; with bogus it
// releases far past what was written.
func sharedRead(t *testing.T, conn *grpc.ClientConn, req *pb.SequenceRequest, bogus bool) (groups []*pb.SequenceGroup, wrapped int, _ error) {
	t.Helper()
	st, err := pb.NewBatchesClient(conn).SequenceGroups(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var mem []byte
	defer func() {
		if mem != nil {
			unix.Munmap(mem)
		}
	}()
	for k := 0; ; k++ {
		g, err := st.Recv()
		if err == io.EOF {
			return groups, wrapped, nil
		}
		if err != nil {
			return groups, wrapped, err
		}
		if sh := g.Shared; sh != nil {
			if sh.Path != "" {
				if mem != nil {
					t.Fatalf("message %d: a second ring path", k)
				}
				f, err := os.OpenFile(sh.Path, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				mem, err = unix.Mmap(int(f.Fd()), 0, 4096+int(sh.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			if mem == nil {
				t.Fatalf("message %d: shared arrays before the ring's path", k)
			}
			off := sh.Position % sh.Size
			if off+sh.Length > sh.Size || len(g.Arrays) != 0 {
				t.Fatalf("message %d: arrays at %d+%d of a %d-byte ring, %d bytes inline", k, off, sh.Length, sh.Size, len(g.Arrays))
			}
			if sh.Position >= sh.Size {
				wrapped++
			}
			if k%10 == 9 {
				time.Sleep(5 * time.Millisecond)
			}
			g.Arrays = append([]byte(nil), mem[4096+off:4096+off+sh.Length]...)
			release := sh.Position + sh.Length
			if bogus {
				release = 1 << 40
			}
			atomic.StoreUint64((*uint64)(unsafe.Pointer(&mem[0])), release)
			g.Shared = nil
		}
		groups = append(groups, g)
	}
}

// TestSharedMemory: with shared_memory over a Unix socket, the messages
// with their arrays copied out of the ring are the columns messages of the
// same call, also when the ring wraps around and the reader is slow to
// release; a reader that releases more than was written ends the call;
// shared_memory is refused over TCP, without columns and by Sequences.
func TestSharedMemory(t *testing.T) {
	conn := startUnixServer(t)
	file := writeCorpus(t, 3000)
	for _, c := range []struct {
		name string
		req  *pb.SequenceRequest
	}{
		{"small groups", &pb.SequenceRequest{Mb: "9", GroupBytes: 200, Epochs: 2}},
		{"default groups", &pb.SequenceRequest{Mb: "64", Epochs: 3, ElideUnitSparse: true}},
		{"one epoch", &pb.SequenceRequest{Mb: "1000"}},
		{"mixture", &pb.SequenceRequest{Mb: "9", GroupBytes: 200, Weights: []string{"0.3", "0.7"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := proto.Clone(c.req).(*pb.SequenceRequest)
			req.Files, req.Streams, req.Packed, req.Columns = []string{file}, corpusStreams, true, true
			if len(req.Weights) > 0 {
				req.Files = []string{file, writeCorpusB(t, 500, nil)}
			}
			want := fromColumns(t, columnGroups(t, conn, req))
			shared := proto.Clone(req).(*pb.SequenceRequest)
			shared.SharedMemory = true
			groups, wrapped := sharedReader(t, conn, shared)
			got := fromColumns(t, groups)
			if len(got) != len(want) {
				t.Fatalf("%d minibatches, want %d", len(got), len(want))
			}
			for i := range got {
				if !proto.Equal(got[i], want[i]) {
					t.Fatalf("minibatch %d through shared memory:\n%v\ninline:\n%v", i, got[i], want[i])
				}
			}
			if c.name == "small groups" && wrapped == 0 {
				t.Fatal("the ring never wrapped around: the reuse of released data is not exercised")
			}
		})
	}

	req := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Columns: true, SharedMemory: true}
	small := proto.Clone(req).(*pb.SequenceRequest)
	small.Packed, small.GroupBytes, small.Epochs = true, 200, 2
	if _, _, err := sharedRead(t, conn, small, true); status.Code(err) != codes.FailedPrecondition || !contains(err.Error(), "released position") {
		t.Fatalf("a reader releasing past what was written: %v, want FailedPrecondition naming the release", err)
	}
	_, tcp, _ := startServer(t, serve.Options{})
	if _, err := collectGroups(context.Background(), tcp, req); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("shared_memory over TCP: %v, want FailedPrecondition", err)
	}
	noColumns := proto.Clone(req).(*pb.SequenceRequest)
	noColumns.Columns = false
	if _, err := collectGroups(context.Background(), conn, noColumns); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("shared_memory without columns: %v, want InvalidArgument", err)
	}
	if _, err := collectErr(context.Background(), conn, req); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Sequences with shared_memory: %v, want InvalidArgument", err)
	}
}

// TestStalledSharedMemoryReaderIsCut: invariant 13 with shared_memory. A
// client that takes the messages but never releases the ring's data stops
// the call as surely as one that takes nothing: the server waits for
// room in the ring, not in Send, and the stall timeout ends that wait too.
func TestStalledSharedMemoryReaderIsCut(t *testing.T) {
	file := writeCorpus(t, 400)
	conn := startUnixServerWith(t, serve.Options{StallTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := pb.NewBatchesClient(conn).SequenceGroups(ctx, &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams,
		Mb: "200", EpochSize: "inf", Columns: true, SharedMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err = st.Recv(); err != nil {
			break
		}
	}
	const want = "the client released no shared memory for 300ms (serve --stall-timeout)"
	if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), want) {
		t.Errorf("a shared-memory call whose client releases nothing ends with %v; want DeadlineExceeded with %q", err, want)
	}
}
