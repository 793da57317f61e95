package serve

import (
	"context"
	"net"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// DefaultMaxConcurrentCalls is Options.MaxConcurrentCalls's default.
const DefaultMaxConcurrentCalls = 16

// callLimit bounds the Batches calls that run at once (invariant 12): a
// call past the bound waits for a free slot, in a queue as long as the
// bound; a call past the queue is refused. One peer (see peerOf) runs at
// most perPeer calls (invariant 13): its further calls wait in the queue
// while other peers' calls take the free slots; a freed slot goes to the
// first waiting call whose peer is under the bound.
type callLimit struct {
	max, perPeer int
	gauge        prometheus.Gauge // the calls waiting
	idle         func()           // called when the last call leaves

	mu      sync.Mutex
	running int
	queue   []*waiter // in the order the calls came
	peers   map[string]*peerCalls
}

// peerCalls counts one peer's calls.
type peerCalls struct{ running, waiting int }

// waiter is a call waiting for a slot; ready is closed when it has one.
type waiter struct {
	peer    string
	capped  bool
	ready   chan struct{}
	granted bool
}

func newCallLimit(max, perPeer int, gauge prometheus.Gauge, idle func()) *callLimit {
	return &callLimit{max: max, perPeer: perPeer, gauge: gauge, idle: idle, peers: map[string]*peerCalls{}}
}

// peerOf names the peer a call counts against, and whether the per-peer
// bound applies to it: a remote client is its IP address, whatever port or
// connection it uses; a client on this host over loopback is its
// connection, since every local user shares the address; a client over a
// Unix socket (which only the server's owner may open) is not bounded.
func peerOf(ctx context.Context) (string, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "", false
	}
	a, ok := p.Addr.(*net.TCPAddr)
	if !ok {
		return "", false
	}
	if a.IP.IsLoopback() {
		return a.String(), true
	}
	return a.IP.String(), true
}

// canRunLocked reports whether a call of the peer may take a slot now.
func (l *callLimit) canRunLocked(key string, capped bool) bool {
	if l.running >= l.max {
		return false
	}
	return !capped || l.peers[key] == nil || l.peers[key].running < l.perPeer
}

func (l *callLimit) peerLocked(key string) *peerCalls {
	pc := l.peers[key]
	if pc == nil {
		pc = &peerCalls{}
		l.peers[key] = pc
	}
	return pc
}

// enter takes a slot for a call of ctx's peer, waiting while ctx lasts
// when none is free to it, and returns the function that gives it back.
func (l *callLimit) enter(ctx context.Context) (func(), error) {
	key, capped := peerOf(ctx)
	l.mu.Lock()
	if l.canRunLocked(key, capped) {
		l.running++
		l.peerLocked(key).running++
		l.mu.Unlock()
		return l.leaver(key), nil
	}
	if len(l.queue) >= l.max {
		l.mu.Unlock()
		return nil, status.Errorf(codes.ResourceExhausted,
			"the server runs %d calls, its limit (serve --max-concurrent-calls), and %d more wait; try again when one ends", l.max, l.max)
	}
	pc := l.peerLocked(key)
	w := &waiter{peer: key, capped: capped, ready: make(chan struct{})}
	l.queue = append(l.queue, w)
	pc.waiting++
	l.gauge.Inc()
	l.mu.Unlock()

	select {
	case <-w.ready:
		return l.leaver(key), nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	if w.granted {
		// The slot came as the call left: give it back.
		l.mu.Unlock()
		l.leaver(key)()
	} else {
		for i, q := range l.queue {
			if q == w {
				l.queue = append(l.queue[:i], l.queue[i+1:]...)
				break
			}
		}
		pc.waiting--
		l.gauge.Dec()
		l.forgetLocked(key)
		idle := l.running == 0 && len(l.queue) == 0
		l.mu.Unlock()
		if idle && l.idle != nil {
			l.idle()
		}
	}
	return nil, status.FromContextError(ctx.Err()).Err()
}

// leaver returns the function that gives a call's slot back (once) and
// hands it to the first waiting call that may take it.
func (l *callLimit) leaver(key string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.running--
			l.peers[key].running--
			l.forgetLocked(key)
			l.grantLocked()
			idle := l.running == 0 && len(l.queue) == 0
			l.mu.Unlock()
			if idle && l.idle != nil {
				l.idle()
			}
		})
	}
}

// grantLocked gives free slots to the waiting calls that may take them, in
// the order they came.
func (l *callLimit) grantLocked() {
	for i := 0; i < len(l.queue) && l.running < l.max; {
		w := l.queue[i]
		if !l.canRunLocked(w.peer, w.capped) {
			i++
			continue
		}
		l.queue = append(l.queue[:i], l.queue[i+1:]...)
		pc := l.peers[w.peer]
		pc.waiting--
		pc.running++
		l.running++
		l.gauge.Dec()
		w.granted = true
		close(w.ready)
	}
}

// forgetLocked drops a peer with no call left.
func (l *callLimit) forgetLocked(key string) {
	if pc := l.peers[key]; pc != nil && pc.running == 0 && pc.waiting == 0 {
		delete(l.peers, key)
	}
}

// busy reports whether a call runs or waits.
func (l *callLimit) busy() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running > 0 || len(l.queue) > 0
}

// waiting counts the calls waiting for a slot.
func (l *callLimit) waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}

var batchesPrefix = "/" + pb.Batches_ServiceDesc.ServiceName + "/"

// callNames are the call labels of the metrics, by method.
var callNames = map[string]string{"Sequences": "sequences", "SequenceGroups": "sequence_groups", "Graph": "graph"}

// limitStream runs a Batches call once it has a slot (the health service
// is not limited), ending it when its client stops taking messages
// (stallStream).
func (s *Server) limitStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if !strings.HasPrefix(info.FullMethod, batchesPrefix) {
		return h(srv, ss)
	}
	leave, err := s.calls.enter(ss.Context())
	if err != nil {
		// The call never reaches its handler, which counts the others.
		s.metrics.calls.WithLabelValues(callNames[strings.TrimPrefix(info.FullMethod, batchesPrefix)], status.Code(err).String()).Inc()
		return err
	}
	defer leave()
	if s.opts.StallTimeout < 0 {
		return h(srv, ss)
	}
	st := newStallStream(ss, s.opts.StallTimeout)
	defer st.close()
	return h(srv, st)
}
