package serve

import (
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultStallTimeout is Options.StallTimeout's default.
const DefaultStallTimeout = 60 * time.Second

// NoStallTimeout, as Options.StallTimeout, lets a client take as long as
// it likes between messages.
const NoStallTimeout time.Duration = -1

// errRingStalled: a shared-memory reader released nothing for the stall
// timeout (ring.wait).
var errRingStalled = errors.New("the client released no shared memory for the stall timeout")

// stalled is the status of a call ended by the stall timeout.
func stalled(timeout time.Duration) error { return stalledFor("took no message", timeout) }

// stalledShared is stalled for a shared-memory client that releases nothing.
func stalledShared(timeout time.Duration) error {
	return stalledFor("released no shared memory", timeout)
}

func stalledFor(what string, timeout time.Duration) error {
	return status.Errorf(codes.DeadlineExceeded,
		"the client %s for %v (serve --stall-timeout): the call is ended to free its slot; read the stream as it comes, or ask for it again from the last state received",
		what, timeout)
}

// stallStream ends a call whose client stops taking its messages
// (invariant 13). A message is handed to gRPC by a goroutine of the
// stream's own, and SendMsg waits for it at most timeout: gRPC's Send
// blocks while the client leaves what was sent before unread (HTTP/2 flow
// control), and only the call's handler returning ends the stream and
// frees its slot. Once a send has stalled, every later one fails at once
// with the same status, which the call returns; the goroutine still inside
// gRPC's Send leaves it when gRPC ends the stream.
type stallStream struct {
	grpc.ServerStream
	timeout time.Duration
	msgs    chan any
	errs    chan error
	timer   *time.Timer
	err     error // set once a send stalled
	start   sync.Once
	started bool
}

func newStallStream(ss grpc.ServerStream, timeout time.Duration) *stallStream {
	return &stallStream{ServerStream: ss, timeout: timeout}
}

// SendMsg hands m to gRPC and returns gRPC's answer, or the stall status
// when gRPC takes longer than the timeout. As with gRPC's, m is encoded
// when it returns without error; after a stall, m may still be in use, and
// the call must end without reusing it.
func (s *stallStream) SendMsg(m any) error {
	if s.err != nil {
		return s.err
	}
	s.start.Do(func() {
		s.msgs, s.errs, s.started = make(chan any, 1), make(chan error, 1), true
		s.timer = time.NewTimer(s.timeout)
		go s.send()
	})
	s.timer.Reset(s.timeout)
	s.msgs <- m
	select {
	case err := <-s.errs:
		s.timer.Stop()
		return err
	case <-s.timer.C:
		s.err = stalled(s.timeout)
		return s.err
	}
}

// send passes the messages to gRPC, one at a time.
func (s *stallStream) send() {
	for m := range s.msgs {
		s.errs <- s.ServerStream.SendMsg(m)
	}
}

// close lets the sending goroutine go once the call's handler returned.
func (s *stallStream) close() {
	if s.started {
		s.timer.Stop()
		close(s.msgs)
	}
}
