package coord

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// UnreachableError is the cause a Watchdog cancels its context with: etcd
// did not answer for the whole timeout. For is how long it was silent, as
// measured: from the start of the first request it left unanswered.
type UnreachableError struct {
	Endpoints string
	For       time.Duration
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("etcd at %s unreachable for %s s; restart it and rerun the same command", e.Endpoints, seconds(e.For))
}

// Watchdog probes etcd about once a second while a rank works. When etcd
// stops answering it says so (Notify), and when no probe has succeeded for
// the timeout it cancels its context with an *UnreachableError, which
// ends whatever the rank was waiting for (a watch on a vanished server
// waits for ever). A rank whose session failed asks Down whether etcd is
// the reason, and WaitUp to retry once etcd answers again.
type Watchdog struct {
	c         *clientv3.Client
	endpoints string
	timeout   time.Duration
	every     time.Duration
	notify    func(string)
	ctx       context.Context
	cancel    context.CancelCauseFunc
	done      chan struct{}

	mu        sync.Mutex
	downSince time.Time // zero while etcd answers
	outage    int       // counts outages, so that an old outage's timer does nothing
	up        chan struct{}
}

// NewWatchdog starts watching etcd through c for a rank working under
// ctx. endpoints names etcd in messages; notify (nil: silent) receives
// "not answering" and "answers again" messages.
func NewWatchdog(ctx context.Context, c *clientv3.Client, endpoints string, timeout time.Duration, notify func(string)) *Watchdog {
	w := &Watchdog{c: c, endpoints: endpoints, timeout: timeout, every: min(time.Second, max(timeout/5, 10*time.Millisecond)),
		notify: notify, done: make(chan struct{}), up: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	go w.loop()
	return w
}

// Context is canceled when etcd was unreachable for the timeout (cause:
// *UnreachableError), or when the parent is.
func (w *Watchdog) Context() context.Context { return w.ctx }

// Stop ends the probes.
func (w *Watchdog) Stop() {
	w.cancel(context.Canceled)
	<-w.done
}

func (w *Watchdog) loop() {
	defer close(w.done)
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		ok := w.probe()
		w.mu.Lock()
		if ok {
			w.markUp()
		} else {
			w.markDown(start)
		}
		w.mu.Unlock()
	}
}

// markUp records that etcd answered (w.mu held): waiters are woken and,
// after an outage, the rank is told.
func (w *Watchdog) markUp() {
	if w.downSince.IsZero() {
		return
	}
	w.downSince = time.Time{}
	close(w.up)
	w.up = make(chan struct{})
	w.say(fmt.Sprintf("etcd at %s answers again", w.endpoints))
}

// markDown records that etcd stopped answering at since (w.mu held): the
// start of the first request that found it silent. From then on the rank
// has the timeout: a timer cancels the context when it runs out, whatever
// request is waiting at that moment, and the error says how long etcd was
// silent.
func (w *Watchdog) markDown(since time.Time) {
	if !w.downSince.IsZero() {
		return
	}
	w.downSince = since
	w.outage++
	outage := w.outage
	time.AfterFunc(time.Until(since.Add(w.timeout)), func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.outage == outage && !w.downSince.IsZero() {
			w.cancel(&UnreachableError{Endpoints: w.endpoints, For: time.Since(w.downSince).Round(100 * time.Millisecond)})
		}
	})
	w.say(fmt.Sprintf("etcd at %s does not answer; retrying for up to %s s", w.endpoints, seconds(w.timeout)))
}

// seconds prints d in seconds, as people write them (20, 0.5).
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

func (w *Watchdog) say(msg string) {
	if w.notify != nil {
		w.notify(msg)
	}
}

// probe reports whether etcd answers a linearizable read (which needs a
// leader, as every claim and commit does).
func (w *Watchdog) probe() bool {
	// A loaded machine can take a while to answer: wait up to a third of
	// the timeout (at most 5 s) before counting a probe as failed.
	ctx, cancel := context.WithTimeout(w.ctx, max(w.every, min(w.timeout/3, 5*time.Second)))
	defer cancel()
	return Ping(ctx, w.c) == nil
}

// Ping reads one key that no run uses, linearizably (etcd must have a
// leader to answer, as it must for every claim and commit).
func Ping(ctx context.Context, c *clientv3.Client) error {
	_, err := c.Get(ctx, runsPrefix+"\x00probe", clientv3.WithCountOnly())
	return err
}

// Down reports whether a failed session's error comes from etcd being
// unreachable rather than from the run itself: the timeout has passed, or
// etcd does not answer a probe now.
func (w *Watchdog) Down() bool {
	if context.Cause(w.ctx) != nil {
		return true
	}
	w.mu.Lock()
	down := !w.downSince.IsZero()
	w.mu.Unlock()
	return down || !w.probe()
}

// WaitUp blocks until etcd answers a probe, and returns nil; or returns
// the context's cause (an *UnreachableError after the timeout) when it is
// canceled first.
func (w *Watchdog) WaitUp() error {
	for {
		start := time.Now()
		if w.probe() {
			w.mu.Lock()
			w.markUp()
			w.mu.Unlock()
			return nil
		}
		w.mu.Lock()
		w.markDown(start)
		up := w.up
		w.mu.Unlock()
		select {
		case <-w.ctx.Done():
			return context.Cause(w.ctx)
		case <-up:
			return nil
		case <-time.After(w.every):
		}
	}
}
