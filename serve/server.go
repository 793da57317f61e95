package serve

import (
	"context"
	"crypto/subtle"
	"net"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

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
}

// Server is the Batches service with its health service.
type Server struct {
	pb.UnimplementedBatchesServer
	opts    Options
	grpc    *grpc.Server
	health  *health.Server
	metrics *metrics
	readers *readerCache
}

// New builds a Server; call Serve to accept connections.
func New(o Options) (*Server, error) {
	if o.MaxOpenReaders <= 0 {
		o.MaxOpenReaders = 16
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, metrics: m, readers: newReaderCache(o.MaxOpenReaders)}
	so := append([]grpc.ServerOption{
		grpc.ChainStreamInterceptor(s.authStream),
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
}

// GracefulStop lets calls in progress finish, then stops.
func (s *Server) GracefulStop() {
	s.health.Shutdown()
	s.grpc.GracefulStop()
	s.readers.closeAll()
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
		tok, ok := strings.CutPrefix(v, "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) == 1 {
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
