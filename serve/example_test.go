package serve_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// A server on a loopback port and a client reading two minibatches of a
// tiny corpus in file order, with each message's data and resume state.
func Example() {
	dir, _ := os.MkdirTemp("", "serve-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "tiny.ctf"), []byte("1 |x 1 2\n1 |x 3 4\n2 |x 5 6\n3 |x 7 8\n"), 0o644)

	srv, _ := serve.New(serve.Options{DataDirs: []string{dir}}) // requests name files under dir
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(l)
	defer srv.Stop()

	conn, _ := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()
	stream, _ := pb.NewBatchesClient(conn).Sequences(context.Background(), &pb.SequenceRequest{
		Files: []string{"tiny.ctf"}, Streams: []string{"x:2"}, Mb: "2", Randomize: "none"})
	for {
		m, err := stream.Recv()
		if err == io.EOF {
			break
		}
		x := m.Streams[0] // little-endian arrays
		var rows []float32
		for i := 0; i < len(x.Dense); i += 4 {
			rows = append(rows, math.Float32frombits(binary.LittleEndian.Uint32(x.Dense[i:])))
		}
		var st struct{ Position uint64 }
		json.Unmarshal(m.State, &st)
		fmt.Printf("step %d [%d, %d) ids %v dense %v, resume at %d\n", m.Step, m.Start, m.End, m.Ids, rows, st.Position)
	}
	// Output:
	// step 0 [0, 2) ids [1] dense [1 2 3 4], resume at 2
	// step 1 [2, 4) ids [2 3] dense [5 6 7 8], resume at 4
}
