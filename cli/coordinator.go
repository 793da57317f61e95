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

Across machines, serve TLS (--cert, --key) and require client
certificates (--client-ca); ranks then pass --etcd-cacert, --etcd-cert and
--etcd-key, as etcdctl does.

Examples:
  batchprep coordinator --data-dir /tmp/etcd-run1
  batchprep coordinator --data-dir etcd-data --listen 127.0.0.1:0
  batchprep coordinator --data-dir /dev/shm/etcd-run1 --no-fsync   # fastest; lost on reboot
  batchprep coordinator --data-dir etcd-data --listen 10.0.0.5:2379 --cert server.pem --key server-key.pem --client-ca ca.pem`

func runCoordinator(env *Env, args []string) error {
	if len(args) > 0 && args[0] == "runs" {
		return runCoordinatorRuns(env, args[1:])
	}
	fs := newFlagSet(env, "coordinator", "", coordinatorDescription)
	dir := fs.String("data-dir", "", "etcd data directory (required)")
	listen := fs.String("listen", "127.0.0.1:2379", "client address host:port (port 0: a free port)")
	cert := fs.String("cert", "", "serve clients over TLS with this certificate `file` (PEM; with --key)")
	key := fs.String("key", "", "the private key `file` of --cert (PEM)")
	clientCA := fs.String("client-ca", "", "require client certificates signed by a CA of this `file` (PEM; with --cert)")
	noFsync := fs.Bool("no-fsync", false, "etcd's --unsafe-no-fsync: faster claims; a power loss or kernel crash may lose the run's latest claims and commits (docs/distributed.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *dir == "":
		return usagef("--data-dir is required")
	case (*cert == "") != (*key == ""):
		return usagef("--cert and --key go together")
	case *clientCA != "" && *cert == "":
		return usagef("--client-ca needs --cert and --key (client certificates are checked over TLS)")
	}
	if err := checkListen("--listen", *listen); err != nil {
		return err
	}
	s, err := coord.Serve(coord.ServerOptions{Dir: *dir, Listen: *listen, NoFsync: *noFsync, CertFile: *cert, KeyFile: *key, ClientCAFile: *clientCA})
	if err != nil {
		return err
	}
	defer s.Close()
	how := ""
	switch {
	case *clientCA != "":
		how = ", TLS, client certificates required"
	case *cert != "":
		how = ", TLS"
	}
	fmt.Fprintf(env.Stdout, "coordinator: etcd serving on %s (data in %s%s)\n", s.Endpoint(), *dir, how)
	select {
	case <-env.Ctx.Done():
		return context.Cause(env.Ctx) // exit 130 / 143 once etcd is closed

	case err := <-s.Err():
		return fmt.Errorf("etcd: %w", err)
	}
}
