package coord

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// lease is a trainer's etcd lease, kept alive by one goroutine. It knows
// until when the lease is certainly alive: etcd starts a lease's TTL when
// it receives a keep-alive, which is after the keep-alive was sent, so the
// lease lives at least until send time + TTL (invariant 4).
type lease struct {
	c  *clientv3.Client
	id clientv3.LeaseID

	mu        sync.Mutex
	safeUntil time.Time
	lost      bool

	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func grantLease(ctx context.Context, c *clientv3.Client, ttl time.Duration) (*lease, error) {
	secs := int64((ttl + time.Second - 1) / time.Second)
	t0 := time.Now()
	resp, err := c.Grant(ctx, max(secs, 1))
	if err != nil {
		return nil, err
	}
	l := &lease{c: c, id: resp.ID, safeUntil: t0.Add(time.Duration(resp.TTL) * time.Second),
		stop: make(chan struct{}), done: make(chan struct{})}
	go l.keepAlive(time.Duration(resp.TTL) * time.Second / 3)
	return l, nil
}

func (l *lease) keepAlive(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), every)
		resp, err := l.c.KeepAliveOnce(ctx, l.id)
		cancel()
		l.mu.Lock()
		switch {
		case err == nil && resp.TTL > 0:
			if !l.lost {
				l.safeUntil = t0.Add(time.Duration(resp.TTL) * time.Second)
			}
		case err == nil || errors.Is(err, rpctypes.ErrLeaseNotFound):
			// etcd says the lease is gone (it expired, or was revoked).
			l.lost = true
		default:
			// A slow round trip, or etcd not answering: keep the old
			// bound and try again (valid turns false when it passes).
		}
		lost := l.lost
		l.mu.Unlock()
		if lost {
			return
		}
	}
}

// valid reports whether the lease is certainly alive now.
func (l *lease) valid() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.lost && time.Now().Before(l.safeUntil)
}

// close stops the keep-alives and revokes the lease (its keys go at once).
func (l *lease) close(ctx context.Context) error {
	l.halt()
	_, err := l.c.Revoke(ctx, l.id)
	return err
}

// expired reports whether a keep-alive found the lease gone.
func (l *lease) expired() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// halt stops the keep-alives without revoking: the lease runs out its TTL,
// as a crashed trainer's does.
func (l *lease) halt() {
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
}
