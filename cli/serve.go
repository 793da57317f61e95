package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/batchprep/batchprep/serve"
)

const serveDescription = `
Serve minibatches of CTF corpora (the choices of read) and batches of graph
plans to trainers over gRPC (proto/batchprep.proto, docs/serve.md), with a
health service and Prometheus metrics on /metrics.

Clients name files under the data directories (--data-dir, repeatable;
default the current directory): relative paths are taken in the first one,
and paths, '..' or links leading out of them are refused, as are FIFOs,
devices and directories. A graph config's paths must lie under them too.
Objects (s3://BUCKET/KEY) are served from the buckets --allow-bucket names
(repeatable; none by default; '*' allows every bucket the server's
credentials reach: for a private server), read with the object flags
(docs/object-storage.md); an object elsewhere is refused as a path outside.
A CTF object's index is kept in the cache directory; --cache-index keeps
local CTF files' indexes there too, so a server started later opens an
unchanged file without an index pass.
--max-minibatch-bytes and --max-minibatch-samples bound what one minibatch
can make the server hold, --max-window-bytes the randomization window of a
call (its chunks x chunk bytes of text), --max-concurrent-calls how many
calls run at once (as many more wait for a slot; a call past those is
refused). One client runs at most --max-calls-per-peer calls (default half
of --max-concurrent-calls), its further calls waiting while other clients'
run: a client is an IP address, or a connection over loopback; clients
over a Unix socket are not bounded. A call whose client takes no message for --stall-timeout is
ended with DeadlineExceeded, freeing its slot. A second after its last
call ends, the server collects and gives its free memory back to the
system.

It listens on 127.0.0.1 by default. An IPv4 address (0.0.0.0:P) listens on
IPv4 only, an IPv6 one ([::]:P) on IPv6 only; unix:/ABS/PATH.sock listens
on a Unix socket (mode 0600, removed on exit). A --listen other than
loopback or a Unix socket needs --token-file (clients send
"authorization: Bearer TOKEN"; 16 bytes or more, in a file only its owner
reads); --tls-cert and --tls-key add TLS. The first lines on stdout are
"listening ADDR" and "metrics http://ADDR/metrics" (ports resolved, for
--listen 127.0.0.1:0). --stop-on-stdin-eof ties the server to a parent
process (the Python client uses it; it then exits 0). Ctrl-C or SIGTERM
stops after letting streams in progress end (5 s at most) and exits 130 or
143, as every batchprep command a signal stops.

Examples:
  batchprep serve --data-dir /srv/corpora
  batchprep serve --listen 127.0.0.1:0 --metrics-listen off
  batchprep serve --listen unix:/run/user/1000/batchprep.sock
  batchprep serve --listen 0.0.0.0:7411 --token-file token.txt --tls-cert cert.pem --tls-key key.pem`

func runServe(env *Env, args []string) error {
	fs := newFlagSet(env, "serve", "", serveDescription)
	listen := fs.String("listen", "127.0.0.1:7411", "gRPC address host:port (port 0: any free port) or unix:/ABS/PATH")
	var dataDirs stringList
	fs.Var(&dataDirs, "data-dir", "a `DIR` whose files clients may name (repeatable; default: the current directory)")
	maxBytes := byteSize(serve.DefaultMaxMinibatchBytes)
	fs.Var(&maxBytes, "max-minibatch-bytes", "the largest encoded minibatch a call may make the server hold (a `size` such as 64MiB)")
	maxSamples := fs.Int("max-minibatch-samples", serve.DefaultMaxMinibatchSamples, "the most samples a request may ask per minibatch (in mb or k)")
	maxWindow := byteSize(serve.DefaultMaxWindowBytes)
	fs.Var(&maxWindow, "max-window-bytes", "the largest randomization window a call may hold, in bytes of text (window chunks x chunk bytes; a `size`)")
	maxCalls := fs.Int("max-concurrent-calls", serve.DefaultMaxConcurrentCalls, "the most calls that run at once (as many more wait; the rest are refused)")
	perPeer := fs.Int("max-calls-per-peer", 0, "the most calls one client runs at once; the rest wait (0: half of --max-concurrent-calls, rounded up)")
	stall := stallFlag(serve.DefaultStallTimeout)
	fs.Var(&stall, "stall-timeout", "end a call whose client takes no message for this long (a `duration` such as 60s, or off)")
	metricsAddr := fs.String("metrics-listen", "127.0.0.1:0", "address of the /metrics HTTP endpoint (\"off\": none)")
	tokenFile := fs.String("token-file", "", "file holding the token clients must send (required off loopback)")
	tlsCert := fs.String("tls-cert", "", "TLS certificate (PEM), with --tls-key")
	tlsKey := fs.String("tls-key", "", "TLS private key (PEM), with --tls-cert")
	stdinEOF := fs.Bool("stop-on-stdin-eof", false, "stop when stdin reaches end of file (a parent that dies closes it)")
	var buckets stringList
	fs.Var(&buckets, "allow-bucket", "a bucket `NAME` whose objects (s3://NAME/KEY) clients may name (repeatable; none by default; '*': every bucket the server's credentials reach, for a private server)")
	objects := objectFlags(fs, env)
	cacheIndex := fs.Bool("cache-index", false, "keep local CTF corpora's indexes in the cache directory (--cache-dir, under index/) and reuse them while a file is unchanged: a restarted server opens it without an index pass (the Python client's private server sets it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if maxBytes <= 0 || *maxSamples <= 0 || maxWindow <= 0 {
		return usagef("--max-minibatch-bytes, --max-minibatch-samples and --max-window-bytes must be positive")
	}
	if *maxCalls <= 0 {
		return usagef("--max-concurrent-calls %d: must be positive", *maxCalls)
	}
	if *perPeer < 0 || *perPeer > *maxCalls {
		return usagef("--max-calls-per-peer %d: must be in [0, %d] (--max-concurrent-calls; 0: half of it)", *perPeer, *maxCalls)
	}
	if err := serve.CheckBuckets(buckets); err != nil {
		return usagef("--allow-bucket %v", err)
	}

	for _, d := range dataDirs {
		if info, err := os.Stat(d); err != nil || !info.IsDir() {
			return usagef("--data-dir %s: not a directory", d)
		}
	}
	if !strings.HasPrefix(*listen, "unix:") {
		if err := checkListen("--listen", *listen); err != nil {
			return err
		}
	}
	if *metricsAddr != "off" {
		if err := checkListen("--metrics-listen", *metricsAddr); err != nil {
			return err
		}
	}
	token, err := readToken(env, *tokenFile)
	if err != nil {
		return err
	}
	if token == "" && !isLocal(*listen) {
		return usagef("--listen %s is not a loopback address: --token-file is required", *listen)
	}
	if token == "" && *metricsAddr != "off" && !serve.IsLoopback(*metricsAddr) {
		return usagef("--metrics-listen %s is not a loopback address: --token-file is required", *metricsAddr)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	o := serve.Options{Token: token, Registerer: reg, DataDirs: dataDirs,
		MaxMinibatchBytes: int64(maxBytes), MaxMinibatchSamples: *maxSamples, MaxConcurrentCalls: *maxCalls,
		MaxWindowBytes: int64(maxWindow), MaxCallsPerPeer: *perPeer, StallTimeout: time.Duration(stall),
		AllowBuckets: buckets, Objects: *objects, CacheIndex: *cacheIndex,
		Logf: func(format string, args ...any) { fmt.Fprintf(env.Stderr, "batchprep serve: "+format+"\n", args...) }}
	if *tlsCert != "" {
		creds, err := credentials.NewServerTLSFromFile(*tlsCert, *tlsKey)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		o.ServerOptions = []grpc.ServerOption{grpc.Creds(creds)}
	}
	srv, err := serve.New(o)
	if err != nil {
		return err
	}
	l, addr, err := listenOn(*listen)
	if err != nil {
		srv.Stop()
		return fmt.Errorf("--listen: %w", err)
	}
	fmt.Fprintf(env.Stdout, "listening %s\n", addr)
	var hs *http.Server
	if *metricsAddr != "off" {
		ml, err := net.Listen(tcpNetwork(*metricsAddr), *metricsAddr)
		if err != nil {
			l.Close()
			srv.Stop()
			return fmt.Errorf("--metrics-listen: %w", err)
		}
		fmt.Fprintf(env.Stdout, "metrics http://%s/metrics\n", ml.Addr())
		hs = &http.Server{Handler: serve.MetricsHandler(reg, token), ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(ml)
	}
	if f, ok := env.Stdout.(interface{ Sync() error }); ok {
		f.Sync()
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	parentGone := make(chan struct{})
	if *stdinEOF && env.Stdin != nil {
		go func() { io.Copy(io.Discard, env.Stdin); close(parentGone) }()
	}
	select {
	case err = <-done:
	case <-parentGone:
		srv.Stop()
		err = <-done
	case <-env.Ctx.Done():
		// Streams get 4.5 s to end, so that the process is gone within the
		// 5 s promised, however long the cut calls take to return.
		t := time.AfterFunc(4500*time.Millisecond, srv.Stop)
		srv.GracefulStop()
		t.Stop()
		<-done
		err = context.Cause(env.Ctx) // exit 130 / 143, as every command a signal stops
	}
	if hs != nil {
		hs.Close()
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// readToken reads --token-file, warning when others may read the file or
// the token is short.
func readToken(env *Env, file string) (string, error) {
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", usagef("--token-file %s: the file is empty", file)
	}
	if info, err := os.Stat(file); err == nil && info.Mode().Perm()&0o044 != 0 {
		fmt.Fprintf(env.Stderr, "batchprep serve: warning: --token-file %s is readable by other users (mode %04o); chmod 600 it\n", file, info.Mode().Perm())
	}
	if len(token) < minTokenBytes {
		fmt.Fprintf(env.Stderr, "batchprep serve: warning: the token in %s is %d bytes; use %d or more random bytes (head -c 24 /dev/urandom | base64)\n", file, len(token), minTokenBytes)
	}
	return token, nil
}

// minTokenBytes is the shortest token serve accepts without a warning.
const minTokenBytes = 16

// isLocal reports whether a --listen address accepts only local
// connections: a loopback address or a Unix socket.
func isLocal(addr string) bool {
	return strings.HasPrefix(addr, "unix:") || serve.IsLoopback(addr)
}

// tcpNetwork is "tcp4" for an IPv4 literal host, "tcp6" for an IPv6 one and
// "tcp" otherwise: Go's "tcp" on 0.0.0.0 would also accept IPv6.
func tcpNetwork(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "tcp"
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return "tcp"
	case ip.To4() != nil:
		return "tcp4"
	}
	return "tcp6"
}

// listenOn listens on a --listen address and returns the address to print,
// in a form gRPC clients dial (unix:/path for a Unix socket).
func listenOn(addr string) (net.Listener, string, error) {
	if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		if !filepath.IsAbs(p) {
			return nil, "", fmt.Errorf("%s: want unix:/ABSOLUTE/PATH", addr)
		}
		l, err := net.Listen("unix", p)
		if err != nil {
			return nil, "", err
		}
		if err := os.Chmod(p, 0o600); err != nil {
			l.Close()
			return nil, "", err
		}
		return l, "unix:" + p, nil
	}
	l, err := net.Listen(tcpNetwork(addr), addr)
	if err != nil {
		return nil, "", err
	}
	return l, l.Addr().String(), nil
}

// stallFlag is --stall-timeout: a positive duration, or off
// (serve.NoStallTimeout).
type stallFlag time.Duration

func (f *stallFlag) String() string {
	if time.Duration(*f) < 0 {
		return "off"
	}
	return time.Duration(*f).String()
}

func (f *stallFlag) Set(v string) error {
	if v == "off" {
		*f = stallFlag(serve.NoStallTimeout)
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration such as 60s, or off")
	}
	*f = stallFlag(d)
	return nil
}
