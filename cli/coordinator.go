package cli

import (
	"context"
	"fmt"

	"github.com/batchprep/batchprep/graph/coord"
)

const coordinatorDescription = `
Run a single-node etcd in this process for distributed plans and training
on one machine (docs/distributed.md): ranks connect with
--etcd HOST:PORT. Its data lives in --data-dir. It runs until interrupted
(Ctrl-C, SIGTERM), then closes etcd and exits 130 or 143. For several machines, use an etcd cluster of your own
(Kubernetes's, for example) and pass its endpoints to --etcd.

batchprep coordinator runs --etcd HOST:PORT lists the runs an etcd holds
(any etcd, not only this command's), describes one (--describe RUN) or
deletes one (--delete RUN): see "batchprep coordinator runs --help".

Examples:
  batchprep coordinator --data-dir /tmp/etcd-run1
  batchprep coordinator --data-dir etcd-data --listen 127.0.0.1:0
  batchprep coordinator --data-dir /dev/shm/etcd-run1 --no-fsync   # fastest; lost on reboot`

func runCoordinator(env *Env, args []string) error {
	if len(args) > 0 && args[0] == "runs" {
		return runCoordinatorRuns(env, args[1:])
	}
	fs := newFlagSet(env, "coordinator", "", coordinatorDescription)
	dir := fs.String("data-dir", "", "etcd data directory (required)")
	listen := fs.String("listen", "127.0.0.1:2379", "client address host:port (port 0: a free port)")
	noFsync := fs.Bool("no-fsync", false, "etcd's --unsafe-no-fsync: faster claims; a power loss or kernel crash may lose the run's latest claims and commits (docs/distributed.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *dir == "":
		return usagef("--data-dir is required")
	}
	s, err := coord.Serve(coord.ServerOptions{Dir: *dir, Listen: *listen, NoFsync: *noFsync})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(env.Stdout, "coordinator: etcd serving on %s (data in %s)\n", s.Endpoint(), *dir)
	select {
	case <-env.Ctx.Done():
		return context.Cause(env.Ctx) // exit 130 / 143 once etcd is closed

	case err := <-s.Err():
		return fmt.Errorf("etcd: %w", err)
	}
}
