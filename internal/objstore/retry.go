package objstore

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Backoff between attempts: the n-th wait is drawn from [d/2, d] with d =
// firstBackoff * 2^n, capped at maxBackoff.
const (
	firstBackoff = 50 * time.Millisecond
	maxBackoff   = 5 * time.Second
	// warnEvery spaces an Object's warnings about retries (Options.Warn).
	warnEvery = 10 * time.Second
)

// jitter draws backoff waits. It has its own generator, seeded from the
// system's random source: waits only spread retries of several clients
// apart and never change the bytes read.
type jitter struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newJitter() *jitter {
	var seed [32]byte
	crand.Read(seed[:])
	return &jitter{r: rand.New(rand.NewChaCha8(seed))}
}

// wait returns the wait before retry number n (0 for the first retry).
func (j *jitter) wait(n int) time.Duration {
	d := maxBackoff
	if n < 20 {
		d = min(firstBackoff<<n, maxBackoff)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return d/2 + time.Duration(j.r.Int64N(int64(d/2)+1))
}

// retry runs attempt until it succeeds or fails for good (invariant 4): a
// transient error is retried after a backoff as long as the wait ends
// before FetchTimeout has passed since the first attempt; each attempt's
// context expires at that moment too. Other errors end it at once, turned
// into an *Error about op.
func (o *Object) retry(ctx context.Context, op string, attempt func(ctx context.Context) error) error {
	start := time.Now()
	deadline := start.Add(o.opt.FetchTimeout)
	for n := 0; ; n++ {
		actx, cancel := context.WithDeadline(ctx, deadline)
		err := attempt(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return o.fail(op, canceled, ctx.Err())
		}
		c := classify(err)
		if c != transient {
			return o.fail(op, c, err)
		}
		wait := o.jit.wait(n)
		if time.Now().Add(wait).After(deadline) {
			return &Error{URL: o.url, Op: op, Kind: ErrTimeout, Err: err,
				Msg: fmt.Sprintf("gave up after %d attempts in %v (fetch-timeout %v); last error", n+1, time.Since(start).Round(time.Millisecond), o.opt.FetchTimeout)}
		}
		o.stats.retries.Add(1)
		o.warnRetry(op, err, deadline)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return o.fail(op, canceled, ctx.Err())
		}
	}
}

// fail turns a final error into an *Error that names the object and, for
// refusals, where the credentials came from (invariant 5).
func (o *Object) fail(op string, c class, err error) error {
	e := &Error{URL: o.url, Op: op, Err: err}
	switch c {
	case replaced:
		e.Kind, e.Err = ErrReplaced, nil
		e.Msg = fmt.Sprintf("the object changed during the run: its ETag is no longer %s, the one seen at open", o.etag)
	case notFound:
		e.Kind = ErrNotFound
		e.Msg = fmt.Sprintf("not found: bucket %q, key %q (credentials: %s)", o.bucket, o.key, o.c.source)
	case denied:
		e.Kind = ErrDenied
		e.Msg = fmt.Sprintf("access denied to bucket %q, key %q (credentials: %s)", o.bucket, o.key, o.c.source)
	case canceled:
		e.Msg = "canceled"
		if o.ctx != nil && o.ctx.Err() != nil {
			e.Msg = "the object was closed"
		}
	default:
		e.Msg = "failed"
	}
	return e
}

// warnRetry tells Options.Warn that op is being retried after err, unless
// the Object warned less than warnEvery ago.
func (o *Object) warnRetry(op string, err error, deadline time.Time) {
	if o.opt.Warn == nil {
		return
	}
	now := time.Now().UnixNano()
	last := o.lastWarn.Load()
	if last != 0 && now-last < int64(warnEvery) || !o.lastWarn.CompareAndSwap(last, now) {
		return
	}
	o.opt.Warn(fmt.Sprintf("%s: %s: %v; retrying until %s (fetch-timeout %v)",
		o.url, op, err, deadline.Format("15:04:05"), o.opt.FetchTimeout))
}
