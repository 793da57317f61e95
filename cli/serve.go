package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
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

It listens on 127.0.0.1 by default. A non-loopback --listen needs
--token-file (clients send "authorization: Bearer TOKEN"); --tls-cert and
--tls-key add TLS. Clients name files by paths the server can read. The
first lines on stdout are "listening ADDR" and "metrics http://ADDR/metrics"
(ports resolved, for --listen 127.0.0.1:0). --stop-on-stdin-eof ties the
server to a parent process (the Python client uses it; it then exits 0).
Ctrl-C or SIGTERM stops after letting streams in progress end (5 s at
most) and exits 130 or 143, as every batchprep command a signal stops.

Examples:
  batchprep serve
  batchprep serve --listen 127.0.0.1:0 --metrics-listen off
  batchprep serve --listen 0.0.0.0:7411 --token-file token.txt --tls-cert cert.pem --tls-key key.pem`

func runServe(env *Env, args []string) error {
	fs := newFlagSet(env, "serve", "", serveDescription)
	listen := fs.String("listen", "127.0.0.1:7411", "gRPC address host:port (port 0: any free port)")
	metricsAddr := fs.String("metrics-listen", "127.0.0.1:0", "address of the /metrics HTTP endpoint (\"off\": none)")
	tokenFile := fs.String("token-file", "", "file holding the token clients must send (required off loopback)")
	tlsCert := fs.String("tls-cert", "", "TLS certificate (PEM), with --tls-key")
	tlsKey := fs.String("tls-key", "", "TLS private key (PEM), with --tls-cert")
	stdinEOF := fs.Bool("stop-on-stdin-eof", false, "stop when stdin reaches end of file (a parent that dies closes it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	var token string
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return usagef("--token-file %s: the file is empty", *tokenFile)
		}
	}
	if token == "" && !serve.IsLoopback(*listen) {
		return usagef("--listen %s is not a loopback address: --token-file is required", *listen)
	}
	if token == "" && *metricsAddr != "off" && !serve.IsLoopback(*metricsAddr) {
		return usagef("--metrics-listen %s is not a loopback address: --token-file is required", *metricsAddr)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	o := serve.Options{Token: token, Registerer: reg}
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
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	fmt.Fprintf(env.Stdout, "listening %s\n", l.Addr())
	var hs *http.Server
	if *metricsAddr != "off" {
		ml, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			l.Close()
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
		t := time.AfterFunc(5*time.Second, srv.Stop)
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
