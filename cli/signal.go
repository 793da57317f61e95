package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// interrupted is the cause of a context cancelled by a signal: the exit
// status is 128 plus the signal number (130 for SIGINT, 143 for SIGTERM),
// as a shell reports a process the signal killed.
type interrupted struct{ sig syscall.Signal }

func (e *interrupted) Error() string { return "interrupted by " + signalName(e.sig) }

func (e *interrupted) Unwrap() error { return context.Canceled }

func (e *interrupted) exitCode() int { return 128 + int(e.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// notifySignals returns a context cancelled, with an *interrupted cause, by
// the first SIGINT or SIGTERM: the command then stops at its next check,
// removes its temporary files and writes a complete state. A second signal
// before stop is called exits at once with 128 + its number, as an
// impatient user expects of a second Ctrl-C; that is as safe as a kill
// (every write is atomic) but may leave staging files for the next run to
// remove.
func notifySignals(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(&interrupted{sig: sig})
		case <-done:
			return
		}
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			fmt.Fprintf(stderr, "batchprep: second signal (%s): exiting at once\n", signalName(sig))
			os.Exit(128 + int(sig))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// interruption returns the signal cause of ctx when err is (or wraps) the
// context's cancellation, or nil.
func interruption(ctx context.Context, err error) *interrupted {
	if ctx == nil || !errors.Is(err, context.Canceled) {
		return nil
	}
	var in *interrupted
	if errors.As(context.Cause(ctx), &in) {
		return in
	}
	return nil
}
