package objstore

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// TestReplacedMidRun: invariant 3. Once the object is replaced, a read of
// bytes not yet cached fails with ErrReplaced naming the URL, without
// retries; bytes already cached still come from the old version.
func TestReplacedMidRun(t *testing.T) {
	s, data := serve(t, 50_000)
	o := open(t, testOptions(t))
	readRange(t, o, data, 0, testBlock)
	s.Put(testBucket, testKey, randomBytes(len(data), 99))
	_, err := o.ReadAt(make([]byte, testBlock), 20_000)
	t.Logf("error: %v", err)
	if !errors.Is(err, ErrReplaced) {
		t.Fatalf("read after replace: %v; want ErrReplaced", err)
	}
	for _, want := range []string{testURL, "changed during the run", o.ETag()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if st := o.Stats(); st.Retries != 0 || st.Gets != 2 {
		t.Fatalf("stats %+v; want 2 GETs and no retry", st)
	}
	readRange(t, o, data, 0, testBlock) // cached: the old version, consistently
	r := o.NewReader(0)
	defer r.Close()
	if _, err := io.ReadAll(r); !errors.Is(err, ErrReplaced) {
		t.Fatalf("stream after replace: %v; want ErrReplaced", err)
	}
}

// TestTransientFaults: invariant 4. Each kind of fault, three times in a
// row, is retried and the bytes are those of an undisturbed read; a body
// cut short is resumed, not fetched again from its start.
func TestTransientFaults(t *testing.T) {
	_, p, data := serveProxied(t, 100_000)
	for _, f := range []miniotest.Fault{miniotest.Reset, miniotest.SlowDown, miniotest.InternalError, miniotest.TooManyRequests, miniotest.ShortBody} {
		t.Run(f.String(), func(t *testing.T) {
			o := open(t, testOptions(t))
			before := p.Injected()
			p.FailNext(f, 3)
			const n = 10 * testBlock
			readRange(t, o, data, 5000, n)
			st := o.Stats()
			if p.Injected()-before != 3 || st.Retries < 2 {
				t.Fatalf("faults injected %d, stats %+v; want 3 faults retried", p.Injected()-before, st)
			}
			want := int64(n + testBlock) // the span of blocks the read touches
			if st.BytesFetched != want {
				t.Fatalf("fetched %d bytes; want exactly %d (short bodies resumed)", st.BytesFetched, want)
			}
			r := o.NewReader(0)
			p.FailNext(f, 2)
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || string(got) != string(data) {
				t.Fatalf("stream through faults: %d bytes, %v", len(got), err)
			}
		})
	}
}

// TestServerRestart: invariant 4. A read while the server is down waits
// for it; a stream cut by a restart resumes; the bytes are right.
func TestServerRestart(t *testing.T) {
	s, data := serve(t, 200_000)
	o := open(t, testOptions(t))
	r := o.NewReader(0)
	defer r.Close()
	head := make([]byte, 1000)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	done := make(chan error, 1)
	p := make([]byte, 3*testBlock)
	go func() {
		_, err := o.ReadAt(p, 77_777)
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	s.Restart()
	if err := <-done; err != nil || string(p) != string(data[77_777:77_777+len(p)]) {
		t.Fatalf("read across restart: %v", err)
	}
	rest, err := io.ReadAll(r)
	if err != nil || string(head)+string(rest) != string(data) {
		t.Fatalf("stream across restart: %d bytes, %v", len(head)+len(rest), err)
	}
	if o.Stats().Retries == 0 {
		t.Fatal("no retry counted")
	}
}

// TestFetchTimeout: invariant 4. When the server stays down, the read
// gives up after FetchTimeout with an error naming the object.
func TestFetchTimeout(t *testing.T) {
	s, _ := serve(t, 10_000)
	opt := testOptions(t)
	opt.FetchTimeout = time.Second
	o := open(t, opt)
	s.Stop()
	start := time.Now()
	_, err := o.ReadAt(make([]byte, 100), 0)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("gave up after %v; fetch-timeout is 1s", d)
	}
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), testURL) || !strings.Contains(err.Error(), "fetch-timeout 1s") {
		t.Fatalf("error %v; want ErrTimeout naming %s", err, testURL)
	}
	if _, err := Open(context.Background(), testURL, opt); !errors.Is(err, ErrTimeout) {
		t.Fatalf("open with the server down: %v; want ErrTimeout", err)
	}
}

// TestStalledBody: invariant 4. A body that stops coming is given up after
// FetchTimeout, by a ranged read and by a stream, naming the object.
func TestStalledBody(t *testing.T) {
	_, p, data := serveProxied(t, 100_000)
	opt := testOptions(t)
	opt.FetchTimeout = time.Second
	o := open(t, opt)
	p.FailNext(miniotest.StallBody, 1)
	start := time.Now()
	_, err := o.ReadAt(make([]byte, 5*testBlock), 0)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), testURL) || time.Since(start) > 5*time.Second {
		t.Fatalf("stalled ranged read: %v after %v", err, time.Since(start))
	}
	readRange(t, o, data, 0, 5*testBlock) // the next read is fine
	r := o.NewReader(0)
	defer r.Close()
	p.FailNext(miniotest.StallBody, 1)
	start = time.Now()
	_, err = io.ReadAll(r)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), testURL) || time.Since(start) > 5*time.Second {
		t.Fatalf("stalled stream: %v after %v", err, time.Since(start))
	}
	t.Logf("error: %v", err)
}

// TestRetryWarns: Options.Warn hears of retries as they start, at most
// once per warnEvery per Object, naming the object, the operation and the
// error; an undisturbed read tells it nothing.
func TestRetryWarns(t *testing.T) {
	_, p, data := serveProxied(t, 100_000)
	var mu sync.Mutex
	var msgs []string
	opt := testOptions(t)
	opt.Warn = func(m string) { mu.Lock(); msgs = append(msgs, m); mu.Unlock() }
	o := open(t, opt)
	readRange(t, o, data, 0, testBlock)
	if len(msgs) != 0 {
		t.Fatalf("warnings without a fault: %q", msgs)
	}
	p.FailNext(miniotest.SlowDown, 3)
	readRange(t, o, data, 10*testBlock, testBlock)
	p.FailNext(miniotest.InternalError, 2)
	readRange(t, o, data, 20*testBlock, testBlock)
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) != 1 {
		t.Fatalf("%d warnings %q; want 1 (five retries within %v)", len(msgs), msgs, warnEvery)
	}
	for _, want := range []string{testURL, "retrying until", "fetch-timeout 30s", "503"} {
		if !strings.Contains(msgs[0], want) {
			t.Errorf("warning %q does not say %q", msgs[0], want)
		}
	}
}

// TestOpenRefusedWarns: an endpoint where nothing listens (a closed
// loopback port) is retried until FetchTimeout, and the caller hears of it
// at the first retry, not only when the timeout ends.
func TestOpenRefusedWarns(t *testing.T) {
	miniotest.SetRefusedEnv(t)
	opt := testOptions(t)
	opt.FetchTimeout = 700 * time.Millisecond
	warned := make(chan string, 1)
	opt.Warn = func(m string) {
		select {
		case warned <- m:
		default:
		}
	}
	_, err := Open(context.Background(), testURL, opt)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("open: %v; want ErrTimeout", err)
	}
	select {
	case m := <-warned:
		if !strings.Contains(m, "connection refused") || !strings.Contains(m, testURL+": open:") {
			t.Errorf("warning %q does not name the object, the operation and the refusal", m)
		}
	default:
		t.Fatal("no warning before the timeout")
	}
}
