package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/batchprep/batchprep/graph/coord"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdClient are the flags that say how to reach etcd: the endpoints and
// how long to wait for them.
type etcdClient struct {
	endpoints   *string
	dialTimeout *time.Duration
}

func newEtcdClient(fs *flag.FlagSet, usage string) *etcdClient {
	return &etcdClient{
		endpoints:   fs.String("etcd", "", usage),
		dialTimeout: fs.Duration("etcd-timeout", 20*time.Second, "with --etcd: give up when etcd does not answer within this"),
	}
}

// etcdFlags are the flags that make a command one rank of a run
// coordinated through etcd: `plan --etcd` and `train --etcd` share them, so
// they mean the same and are checked the same (docs/distributed.md).
type etcdFlags struct {
	*etcdClient
	rank, world *int
	runName     *string
	leaseTTL    *time.Duration
}

// newEtcdFlags declares the flags on fs. does says what a rank does with
// its buckets ("print", "train"); runDefault describes the run name used
// when --run is not given.
func newEtcdFlags(fs *flag.FlagSet, does, runDefault string) *etcdFlags {
	return &etcdFlags{
		etcdClient: newEtcdClient(fs, "distributed mode: etcd endpoints host:port[,...]; "+does+" the buckets this rank is given"),
		rank:       fs.Int("rank", 0, "with --etcd: this process's rank, 0 <= rank < world"),
		world:      fs.Int("world", 0, "with --etcd: the number of ranks of the run"),
		runName:    fs.String("run", "", "with --etcd: the run's name (default: "+runDefault+"; the same for every rank given the same config and data)"),
		leaseTTL:   fs.Duration("lease-ttl", 10*time.Second, "with --etcd: a rank silent this long loses its bucket, which goes back to the pool"),
	}
}

func (e *etcdFlags) on() bool { return *e.endpoints != "" }

// check refuses rank flags without --etcd, a rank outside the world and a
// lease too short to be kept alive.
func (e *etcdFlags) check() error {
	switch {
	case !e.on() && (*e.world != 0 || *e.rank != 0 || *e.runName != ""):
		return usagef("--rank, --world and --run go with --etcd")
	case e.on() && (*e.world < 1 || *e.rank < 0 || *e.rank >= *e.world):
		return usagef("--rank %d --world %d: want --world >= 1 and 0 <= rank < world", *e.rank, *e.world)
	case e.on() && *e.leaseTTL < time.Second:
		return usagef("--lease-ttl %v: at least 1s", *e.leaseTTL)
	}
	return nil
}

// runID is --run, or prefix-HASH of what identifies the run (its JSON
// encoding), so that ranks given the same config and data meet in the
// same run without being told its name.
func (e *etcdFlags) runID(prefix string, identity any) string {
	if *e.runName != "" {
		return *e.runName
	}
	b, _ := json.Marshal(identity)
	h := sha256.Sum256(b)
	return prefix + "-" + hex.EncodeToString(h[:8])
}

// dial connects to the endpoints; etcd's client logs nothing.
func (e *etcdClient) dial() (*clientv3.Client, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(*e.endpoints, ","), DialTimeout: *e.dialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return nil, e.wrap(err)
	}
	return c, nil
}

// wrap names the endpoints in an error from the coordination.
func (e *etcdClient) wrap(err error) error { return fmt.Errorf("--etcd %s: %w", *e.endpoints, err) }

// unreachable explains an etcd request that failed, naming the endpoints:
// a request that timed out is etcd not answering.
func (e *etcdClient) unreachable(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &coord.UnreachableError{Endpoints: *e.endpoints, For: *e.dialTimeout}
	}
	return e.wrap(err)
}

// sessions runs a rank's session under a watchdog on etcd (coord.Watchdog):
// when the session fails because etcd stopped answering, the rank says so
// and waits; if etcd answers again within --etcd-timeout the rank joins
// the run again (as the same command restarted would), otherwise it fails
// with "etcd at ADDR unreachable for T s; restart it and rerun the same
// command". who prefixes the messages.
func (e *etcdClient) sessions(env *Env, c *clientv3.Client, who string, session func(ctx context.Context) error) error {
	say := func(msg string) { fmt.Fprintf(env.Stderr, "%s: %s\n", who, msg) }
	wd := coord.NewWatchdog(env.Ctx, c, *e.endpoints, *e.dialTimeout, say)
	defer wd.Stop()
	for {
		err := session(wd.Context())
		if err == nil || env.Ctx.Err() != nil || !wd.Down() {
			return err
		}
		if err := wd.WaitUp(); err != nil {
			return err
		}
		say("joining the run again")
	}
}
