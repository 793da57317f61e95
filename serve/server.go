package serve

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/internal/objstore"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// Options configure a Server.
type Options struct {
	// Token, when not empty, is required as "authorization: Bearer TOKEN"
	// on every Batches call (invariant 6).
	Token string
	// Registerer receives the metrics; nil registers nowhere.
	Registerer prometheus.Registerer
	// ServerOptions are passed to grpc.NewServer (TLS credentials, limits).
	// A stats handler among them must not keep the messages it is shown:
	// the Sequences calls reuse a message's buffers once it is sent.
	ServerOptions []grpc.ServerOption
	// MaxOpenReaders bounds the indexed files kept for reuse (default 16).
	MaxOpenReaders int
	// DataDirs are the directories requests may name files in (invariant
	// 10); relative paths are taken inside the first. None means the
	// current directory.
	DataDirs []string
	// MaxMinibatchBytes bounds the encoded size of a minibatch (default
	// DefaultMaxMinibatchBytes); MaxMinibatchSamples bounds the samples a
	// request may ask per minibatch (default DefaultMaxMinibatchSamples).
	MaxMinibatchBytes   int64
	MaxMinibatchSamples int
	// MaxWindowBytes bounds a call's randomization window: the chunks its
	// source may hold at once times the chunk size, in bytes of text
	// (default DefaultMaxWindowBytes).
	MaxWindowBytes int64
	// MaxConcurrentCalls bounds the Batches calls that run at once
	// (default DefaultMaxConcurrentCalls); as many more wait for a slot,
	// and a call past those is refused with ResourceExhausted.
	MaxConcurrentCalls int
	// MaxCallsPerPeer bounds the calls one client runs at once (default
	// half of MaxConcurrentCalls, rounded up); its further calls wait for a
	// slot while other clients' calls run. A client is its IP address, or
	// its connection over loopback; clients over a Unix socket are not
	// bounded (invariant 13).
	MaxCallsPerPeer int
	// StallTimeout ends a call whose client has taken no message for that
	// long, with DeadlineExceeded, freeing its slot (default
	// DefaultStallTimeout; NoStallTimeout: never, for a server that has one
	// client, as the Python client's private server; invariant 13).
	StallTimeout time.Duration
	// AllowBuckets are the buckets whose objects a request may name as
	// corpora (s3://BUCKET/KEY; invariant 15); AllBuckets ("*") allows
	// every bucket the server's credentials reach. None: no object.
	AllowBuckets []string
	// Objects configures the reads of objects: GETs in flight, retries and
	// the local cache (the zero value means objstore's defaults).
	Objects objstore.Options
	// CacheIndex keeps the index of each local CTF corpus the server
	// opens in the cache directory (Objects.CacheDir, or its default),
	// under index/ and a hash of the file's absolute path, as an object's
	// index always is: a later server (the Python client's private server
	// of the next epoch, a restarted one) opens the file without an index
	// pass while its size, modification time, first and last 64 KiB and
	// the stream flags match. An index takes about 2.5 % of its corpus;
	// one that no open has used for file.IndexCacheUnused (30 days) is
	// removed when a server with CacheIndex starts.
	CacheIndex bool
	// Logf, when set, receives what the server tells its operator but not
	// its clients: the full text of errors whose client message leaves out
	// file contents.
	Logf func(format string, args ...any)
}

// Server is the Batches service with its health service.
type Server struct {
	pb.UnimplementedBatchesServer
	opts    Options
	grpc    *grpc.Server
	health  *health.Server
	metrics *metrics
	readers *readerCache
	root    *dataRoot
	buckets buckets
	calls   *callLimit
	idle    *idleTrim
}

// New builds a Server; call Serve to accept connections.
func New(o Options) (*Server, error) {
	if o.MaxOpenReaders <= 0 {
		o.MaxOpenReaders = 16
	}
	if o.MaxMinibatchBytes <= 0 {
		o.MaxMinibatchBytes = DefaultMaxMinibatchBytes
	}
	if o.MaxMinibatchSamples <= 0 {
		o.MaxMinibatchSamples = DefaultMaxMinibatchSamples
	}
	if o.MaxWindowBytes <= 0 {
		o.MaxWindowBytes = DefaultMaxWindowBytes
	}
	if o.MaxConcurrentCalls <= 0 {
		o.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	}
	if o.MaxCallsPerPeer <= 0 {
		o.MaxCallsPerPeer = (o.MaxConcurrentCalls + 1) / 2
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	bk, err := newBuckets(o.AllowBuckets)
	if err != nil {
		return nil, fmt.Errorf("serve: AllowBuckets: %w", err)
	}
	if err := o.Objects.Validate(); err != nil {
		return nil, err
	}
	root, err := newDataRoot(o.DataDirs)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		root.close()
		return nil, err
	}
	s := &Server{opts: o, metrics: m, readers: newReaderCache(o.MaxOpenReaders), root: root, buckets: bk}
	if o.CacheIndex {
		dir, err := o.Objects.Dir()
		if err != nil {
			root.close()
			return nil, fmt.Errorf("serve: CacheIndex: %w", err)
		}
		s.readers.indexDir = dir
		if n, err := file.PruneIndexCaches(dir, file.IndexCacheUnused); err != nil {
			o.Logf("index cache: %v", err)
		} else if n > 0 {
			o.Logf("index cache: removed %d indexes unused for %v", n, file.IndexCacheUnused)
		}
	}
	s.calls = newCallLimit(o.MaxConcurrentCalls, o.MaxCallsPerPeer, m.waiting, func() { s.idle.callEnded() })
	s.idle = newIdleTrim(s.calls.busy)
	so := append([]grpc.ServerOption{
		grpc.ChainStreamInterceptor(s.authStream, s.limitStream),
		grpc.ChainUnaryInterceptor(s.authUnary),
		grpc.MaxSendMsgSize(1 << 30),
	}, o.ServerOptions...)
	s.grpc = grpc.NewServer(so...)
	pb.RegisterBatchesServer(s.grpc, s)
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(pb.Batches_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	return s, nil
}

// Serve accepts connections on l until Stop; it returns nil after Stop.
func (s *Server) Serve(l net.Listener) error {
	err := s.grpc.Serve(l)
	if err == grpc.ErrServerStopped {
		return nil
	}
	return err
}

// Stop ends every call and closes the listeners and cached readers.
func (s *Server) Stop() {
	s.health.Shutdown()
	s.grpc.Stop()
	s.readers.closeAll()
	s.root.close()
	s.idle.stop()
}

// GracefulStop lets calls in progress finish, then stops.
func (s *Server) GracefulStop() {
	s.health.Shutdown()
	s.grpc.GracefulStop()
	s.readers.closeAll()
	s.root.close()
	s.idle.stop()
}

// IsLoopback reports whether a listen address (host:port) only accepts
// connections from this machine: 127.0.0.0/8, ::1 or localhost.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkToken enforces invariant 6 for one call.
func (s *Server) checkToken(ctx context.Context, method string) error {
	if s.opts.Token == "" || strings.HasPrefix(method, "/grpc.health.v1.Health/") {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		if tokenMatches(v, s.opts.Token) {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "missing or wrong token: send metadata \"authorization: Bearer TOKEN\"")
}

func (s *Server) authStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := s.checkToken(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}

func (s *Server) authUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := s.checkToken(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// tokenMatches reports whether an authorization value is "Bearer TOKEN"
// with the scheme's name in any case (RFC 6750, RFC 9110 section 11.1),
// comparing the token in constant time.
func tokenMatches(v, token string) bool {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimLeft(tok, " ")), []byte(token)) == 1
}
