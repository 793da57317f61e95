package cli

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/batchprep/batchprep/graph/coord"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdClient are the flags that say how to reach etcd: the endpoints and
// how long to wait for them.
// The TLS and authentication flags are etcdctl's (--cacert, --cert,
// --key, --user), prefixed with etcd-, and the password comes from a file.
type etcdClient struct {
	endpoints          *string
	dialTimeout        *time.Duration
	cacert, cert, key  *string
	user, passwordFile *string
}

func newEtcdClient(fs *flag.FlagSet, usage string) *etcdClient {
	return &etcdClient{
		endpoints:    fs.String("etcd", "", usage),
		dialTimeout:  fs.Duration("etcd-timeout", 20*time.Second, "with --etcd: how long to wait for etcd to answer (at the start, or after it stopped answering) before giving up"),
		cacert:       fs.String("etcd-cacert", "", "with --etcd: reach etcd over TLS, trusting the CAs of this PEM `file`"),
		cert:         fs.String("etcd-cert", "", "with --etcd: TLS client certificate `file` (PEM; with --etcd-key)"),
		key:          fs.String("etcd-key", "", "with --etcd: private key `file` of --etcd-cert (PEM)"),
		user:         fs.String("etcd-user", "", "with --etcd: etcd user `name` (etcd authentication; with --etcd-password-file)"),
		passwordFile: fs.String("etcd-password-file", "", "with --etcd-user: `file` holding the user's password (one line)"),
	}
}

// checkClient refuses client flags that do not go together.
func (e *etcdClient) checkClient() error {
	tlsSet := *e.cacert != "" || *e.cert != "" || *e.key != ""
	switch {
	case *e.endpoints == "" && (tlsSet || *e.user != "" || *e.passwordFile != ""):
		return usagef("--etcd-cacert, --etcd-cert, --etcd-key, --etcd-user and --etcd-password-file go with --etcd")
	case (*e.cert == "") != (*e.key == ""):
		return usagef("--etcd-cert and --etcd-key go together")
	case (*e.user == "") != (*e.passwordFile == ""):
		return usagef("--etcd-user and --etcd-password-file go together (the password is read from the file, never from the command line)")
	}
	return nil
}

// clientConfig is the etcd client configuration the flags describe.
func (e *etcdClient) clientConfig() (clientv3.Config, error) {
	cc := clientv3.Config{Endpoints: strings.Split(*e.endpoints, ","), DialTimeout: *e.dialTimeout, Logger: zap.NewNop()}
	if *e.cacert != "" || *e.cert != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if *e.cacert != "" {
			pem, err := os.ReadFile(*e.cacert)
			if err != nil {
				return cc, fmt.Errorf("--etcd-cacert: %w", err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return cc, fmt.Errorf("--etcd-cacert %s: no PEM certificate in it", *e.cacert)
			}
		}
		if *e.cert != "" {
			pair, err := tls.LoadX509KeyPair(*e.cert, *e.key)
			if err != nil {
				return cc, fmt.Errorf("--etcd-cert %s, --etcd-key %s: %w", *e.cert, *e.key, err)
			}
			tc.Certificates = []tls.Certificate{pair}
		}
		cc.TLS = tc
	}
	if *e.user != "" {
		pw, err := os.ReadFile(*e.passwordFile)
		if err != nil {
			return cc, fmt.Errorf("--etcd-password-file: %w", err)
		}
		cc.Username, cc.Password = *e.user, strings.TrimRight(string(pw), "\r\n")
	}
	return cc, nil
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
	if err := e.checkClient(); err != nil {
		return err
	}
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
	cc, err := e.clientConfig()
	if err != nil {
		return nil, err
	}
	c, err := clientv3.New(cc)
	if err != nil {
		return nil, e.unreachable(err)
	}
	if err := e.firstAnswer(c, cc.TLS); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// firstAnswer waits, up to --etcd-timeout, for etcd's first answer. A
// refusal is not worth waiting for: beside the request, a TLS handshake
// of its own tells at once a server that refuses this client's
// certificate, is not signed by --etcd-cacert, or speaks (or does not
// speak) TLS unlike the flags, and etcd refuses bad credentials at the
// first request. Only silence waits the whole timeout.
func (e *etcdClient) firstAnswer(c *clientv3.Client, tc *tls.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), *e.dialTimeout)
	defer cancel()
	answered := make(chan error, 1)
	go func() { answered <- coord.Ping(ctx, c) }()
	diagnosed := make(chan error, 1)
	go func() { diagnosed <- e.diagnoseTLS(tc) }()
	for {
		select {
		case err := <-answered:
			if err != nil {
				return e.unreachable(err)
			}
			return nil
		case d := <-diagnosed:
			if d != nil {
				return d
			}
			diagnosed = nil // nothing wrong with TLS: wait for the answer
		}
	}
}

// wrap names the endpoints in an error from the coordination.
func (e *etcdClient) wrap(err error) error { return fmt.Errorf("--etcd %s: %w", *e.endpoints, err) }

// unreachable explains an etcd request that failed, naming the endpoints:
// a request that timed out is etcd not answering.
func (e *etcdClient) unreachable(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		if cc, cerr := e.clientConfig(); cerr == nil {
			if d := e.diagnoseTLS(cc.TLS); d != nil {
				return d
			}
		}
		return &coord.UnreachableError{Endpoints: *e.endpoints, For: *e.dialTimeout}
	}
	if a := e.authProblem(err); a != nil {
		return a
	}
	return e.wrap(err)
}

// authProblem says what is wrong when etcd refused the credentials, or
// nil.
func (e *etcdClient) authProblem(err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrAuthFailed):
		return fmt.Errorf("etcd at %s refused user %q: no such user, or not the password in %s", *e.endpoints, *e.user, *e.passwordFile)
	case errors.Is(err, rpctypes.ErrUserEmpty), errors.Is(err, rpctypes.ErrInvalidAuthToken):
		return fmt.Errorf("etcd at %s requires authentication: give --etcd-user and --etcd-password-file", *e.endpoints)
	case errors.Is(err, rpctypes.ErrPermissionDenied):
		return fmt.Errorf("etcd at %s: user %q may not read and write the keys under /batchprep/ (grant it a role that can)", *e.endpoints, *e.user)
	}
	return nil
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
		if a := e.authProblem(err); a != nil {
			return a
		}
		if err == nil || env.Ctx.Err() != nil || !wd.Down() {
			return err
		}
		if err := wd.WaitUp(); err != nil {
			if cc, cerr := e.clientConfig(); cerr == nil && errors.As(err, new(*coord.UnreachableError)) {
				if d := e.diagnoseTLS(cc.TLS); d != nil {
					return d
				}
			}
			return err
		}
		say("joining the run again")
	}
}
