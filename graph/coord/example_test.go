package coord_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/batchprep/batchprep/graph/coord"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// A trainer's loop: join the run, take buckets until the run is done,
// commit each when its work is saved. Here one trainer on a 2x2 grid, one
// pass, against an etcd started in this process.
func Example() {
	dir, _ := os.MkdirTemp("", "etcd")
	defer os.RemoveAll(dir)
	srv, err := coord.Serve(coord.ServerOptions{Dir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	c, _ := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint()}, Logger: zap.NewNop()})
	defer c.Close()
	ctx := context.Background()
	tr, err := coord.Join(ctx, c, coord.Options{Run: "example", Rank: 0, World: 1, L: 2, R: 2, Passes: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		cl, err := tr.Next(ctx)
		if errors.Is(err, coord.ErrDone) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		// ... train bucket cl.Bucket of pass cl.Pass, save its partitions ...
		if err := tr.Commit(ctx, cl); errors.Is(err, coord.ErrLost) {
			continue // the lease expired meanwhile: discard the work
		}
		fmt.Printf("pass %d bucket (%d,%d)\n", cl.Pass, cl.Bucket.Lhs, cl.Bucket.Rhs)
	}
	fmt.Println(tr.Close(ctx))
	// Output:
	// pass 0 bucket (0,0)
	// pass 0 bucket (0,1)
	// pass 0 bucket (1,0)
	// pass 0 bucket (1,1)
	// <nil>
}
