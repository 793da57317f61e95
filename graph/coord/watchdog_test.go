package coord

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// A lease revoked behind the trainer's back (as etcd does to a paused
// trainer's): the keep-alive finds it gone and Lost says so, so the
// trainer writes nothing for its claim; the commit would fail anyway.
func TestLostLease(t *testing.T) {
	srv := startServer(t)
	c, err := newClient(srv.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := Join(context.Background(), c, Options{Run: "lost", World: 1, L: 2, R: 2, Passes: 1, LeaseTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := tr.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tr.Lost() {
		t.Fatal("Lost with a live lease")
	}
	if _, err := c.Revoke(context.Background(), tr.lease.id); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !tr.Lost(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Lost still false 10 s after the lease was revoked")
		}
	}
	if err := tr.Commit(context.Background(), cl); !errors.Is(err, ErrLost) {
		t.Errorf("commit after the lease was revoked: %v, want ErrLost", err)
	}
}

// The watchdog: etcd stopped, it says etcd does not answer, then cancels
// its context with an *UnreachableError after the timeout; Down is true
// and WaitUp returns that error.
func TestWatchdogUnreachable(t *testing.T) {
	srv, err := Serve(ServerOptions{Dir: filepath.Join(t.TempDir(), "etcd"), Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newClient(srv.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var msgs []string
	wd := NewWatchdog(context.Background(), c, srv.Endpoint(), 500*time.Millisecond, func(m string) { mu.Lock(); msgs = append(msgs, m); mu.Unlock() })
	defer wd.Stop()
	if wd.Down() {
		t.Fatal("Down with etcd serving")
	}
	srv.Close()
	select {
	case <-wd.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog's context is not canceled 10 s after etcd stopped")
	}
	var ue *UnreachableError
	// The error says how long etcd was silent, as measured: the timeout at
	// least, counted from the first request it left unanswered.
	said := regexp.MustCompile(`^etcd at ` + regexp.QuoteMeta(srv.Endpoint()) + ` unreachable for [0-9.]+ s; restart it and rerun the same command$`)
	if err := wd.WaitUp(); !errors.As(err, &ue) || !said.MatchString(err.Error()) || ue.For < 500*time.Millisecond {
		t.Errorf("WaitUp: %v", err)
	}
	if !wd.Down() {
		t.Error("not Down after the timeout")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) == 0 || !strings.Contains(msgs[0], "does not answer; retrying for up to 0.5 s") {
		t.Errorf("messages: %q", msgs)
	}
}
