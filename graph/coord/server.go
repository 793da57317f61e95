package coord

import (
	"fmt"
	"net"
	"net/url"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// ServerOptions configure an in-process single-node etcd.
type ServerOptions struct {
	// Dir holds etcd's data (required).
	Dir string
	// Listen is the client address host:port; port 0 (or "") picks a
	// free loopback port.
	Listen string
	// Fast shortens etcd's heartbeat (10 ms) and election timeout
	// (100 ms), so that leases as short as one second are granted as asked
	// (etcd's shortest lease is 1.5 election timeouts): for tests.
	Fast bool
	// NoFsync turns off etcd's fsync of its log and database
	// (etcd's --unsafe-no-fsync): writes cost no disk flush, but a power
	// loss or kernel crash can lose or corrupt the latest state — the run's
	// claims and commits. A crash of the process alone loses nothing (the
	// data are in the page cache). See docs/distributed.md.
	NoFsync bool
	// CertFile and KeyFile (PEM), when set, make etcd serve its clients
	// over TLS with this certificate. ClientCAFile (PEM), when set, also
	// requires every client to present a certificate signed by one of its
	// CAs (etcd's --client-cert-auth).
	CertFile, KeyFile, ClientCAFile string
}

// Server is a single-node etcd running in this process.
type Server struct {
	e        *embed.Etcd
	endpoint string
}

// Serve starts a single-node etcd and waits until it serves clients.
// It prints nothing (etcd's own log is discarded).
func Serve(o ServerOptions) (*Server, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("coord: server: no data directory")
	}
	client, err := resolveListen(o.Listen)
	if err != nil {
		return nil, err
	}
	peer, err := freeLoopback()
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "batchprep"
	cfg.Dir = o.Dir
	cu := url.URL{Scheme: "http", Host: client}
	switch {
	case (o.CertFile == "") != (o.KeyFile == ""):
		return nil, fmt.Errorf("coord: server: a TLS certificate needs both its file and its key")
	case o.ClientCAFile != "" && o.CertFile == "":
		return nil, fmt.Errorf("coord: server: client certificates need TLS: give the server's certificate and key too")
	case o.CertFile != "":
		cu.Scheme = "https"
		cfg.ClientTLSInfo = transport.TLSInfo{CertFile: o.CertFile, KeyFile: o.KeyFile, TrustedCAFile: o.ClientCAFile,
			ClientCertAuth: o.ClientCAFile != ""}
	}
	pu := url.URL{Scheme: "http", Host: peer}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	if o.Fast {
		cfg.TickMs, cfg.ElectionMs = 10, 100
	}
	cfg.UnsafeNoFsync = o.NoFsync
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("coord: starting etcd in %s on %s: %w", o.Dir, client, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("coord: etcd in %s: %w", o.Dir, err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("coord: etcd in %s not ready after 60 s", o.Dir)
	}
	return &Server{e: e, endpoint: client}, nil
}

// Endpoint is the host:port clients connect to.
func (s *Server) Endpoint() string { return s.endpoint }

// Err reports a fatal server error (the channel is closed on Close).
func (s *Server) Err() <-chan error { return s.e.Err() }

// Close stops the server.
func (s *Server) Close() { s.e.Close() }

func resolveListen(listen string) (string, error) {
	if listen == "" {
		return freeLoopback()
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("coord: --listen %q: want host:port: %w", listen, err)
	}
	if port == "0" {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return "", fmt.Errorf("coord: --listen %q: %w", listen, err)
		}
		defer l.Close()
		return l.Addr().String(), nil
	}
	return listen, nil
}

// freeLoopback returns a loopback address with a port that was free a
// moment ago.
func freeLoopback() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("coord: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
