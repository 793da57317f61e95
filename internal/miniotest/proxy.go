package miniotest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Fault is what a Proxy does to one request instead of forwarding it
// untouched.
type Fault int

const (
	// Reset closes the client's connection with a TCP reset before any
	// response. Go's HTTP client silently resends a GET once when a reused
	// connection fails this way, so schedule two resets to make one reach
	// the caller.
	Reset Fault = iota + 1
	// SlowDown answers 503 with S3's SlowDown error.
	SlowDown
	// InternalError answers 500 with S3's InternalError.
	InternalError
	// TooManyRequests answers 429.
	TooManyRequests
	// ShortBody forwards the request but sends only the first half of the
	// response body (the headers promise all of it), then drops the
	// connection.
	ShortBody
	// StallBody sends the first half of the response body and then
	// nothing, until the client gives up (or a minute passes).
	StallBody
)

func (f Fault) String() string {
	switch f {
	case Reset:
		return "reset"
	case SlowDown:
		return "503 SlowDown"
	case InternalError:
		return "500 InternalError"
	case TooManyRequests:
		return "429"
	case ShortBody:
		return "short body"
	case StallBody:
		return "stalled body"
	}
	return "fault(" + strconv.Itoa(int(f)) + ")"
}

// Proxy is an HTTP proxy in front of a server that can delay every request
// and inject faults into chosen ones (invariant 5). It is safe for
// concurrent use.
type Proxy struct {
	target string // host:port
	srv    *httptest.Server
	tr     *http.Transport

	requests atomic.Int64
	gets     atomic.Int64
	body     atomic.Int64 // response body bytes forwarded
	injected atomic.Int64
	inFlight atomic.Int64 // GETs
	maxIn    atomic.Int64
	heads    atomic.Int64 // HEADs in flight
	maxHeads atomic.Int64

	mu     sync.Mutex
	delay  time.Duration
	rate   int64           // bytes per second of each response body; 0: no cap
	faults map[int64]Fault // by request number
	next   []Fault         // for the next requests, in order
}

// NewProxy starts a proxy in front of target (host:port) on a loopback
// port; it is closed when the test ends.
func NewProxy(tb testing.TB, target string) *Proxy {
	p := &Proxy{
		target: target,
		tr:     &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true},
		faults: map[int64]Fault{},
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	tb.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
		p.tr.CloseIdleConnections()
	})
	return p
}

// ProxyFor starts a Proxy in front of s.
func (s *Server) ProxyFor(tb testing.TB) *Proxy { return NewProxy(tb, s.Addr) }

// Endpoint is the proxy's base URL.
func (p *Proxy) Endpoint() string { return p.srv.URL }

// Env is Server.Env with the proxy as the endpoint.
func (p *Proxy) Env(tb testing.TB, s *Server) map[string]string {
	return EnvFor(tb, p.Endpoint(), s.AccessKey, s.SecretKey)
}

// SetDelay adds d before forwarding every request from now on.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// SetRate caps each response body, from now on, at bytesPerSecond (0:
// no cap), as one connection to a remote store is capped: a reader that
// wants more must use several at once.
func (p *Proxy) SetRate(bytesPerSecond int64) {
	p.mu.Lock()
	p.rate = bytesPerSecond
	p.mu.Unlock()
}

// FailRequest schedules fault f for the requests with the given numbers
// (1 is the first request the proxy saw).
func (p *Proxy) FailRequest(f Fault, numbers ...int64) {
	p.mu.Lock()
	for _, n := range numbers {
		p.faults[n] = f
	}
	p.mu.Unlock()
}

// FailNext schedules fault f for the next count requests.
func (p *Proxy) FailNext(f Fault, count int) {
	p.mu.Lock()
	for range count {
		p.next = append(p.next, f)
	}
	p.mu.Unlock()
}

// Requests is the number of requests the proxy has received.
func (p *Proxy) Requests() int64 { return p.requests.Load() }

// BodyBytes is how many bytes of response bodies the proxy has forwarded
// (written to its clients, as far as they took them).
func (p *Proxy) BodyBytes() int64 { return p.body.Load() }

// Gets is the number of GET requests the proxy has received.
func (p *Proxy) Gets() int64 { return p.gets.Load() }

// Injected is the number of requests that met a fault.
func (p *Proxy) Injected() int64 { return p.injected.Load() }

// MaxInFlight is the largest number of GETs that were in progress at once.
func (p *Proxy) MaxInFlight() int64 { return p.maxIn.Load() }

// MaxHeadsInFlight is the largest number of HEADs (an object's open) that
// were in progress at once.
func (p *Proxy) MaxHeadsInFlight() int64 { return p.maxHeads.Load() }

// ResetCounts sets the counters to zero; scheduled faults by number keep
// their numbers.
func (p *Proxy) ResetCounts() {
	p.gets.Store(0)
	p.maxIn.Store(0)
	p.maxHeads.Store(0)
}

// track counts a request in flight in cur, raising top to the most seen;
// the caller calls the function it returns when the request ends.
func track(cur, top *atomic.Int64) func() {
	in := cur.Add(1)
	for {
		m := top.Load()
		if in <= m || top.CompareAndSwap(m, in) {
			break
		}
	}
	return func() { cur.Add(-1) }
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	n := p.requests.Add(1)
	switch r.Method {
	case http.MethodGet:
		p.gets.Add(1)
		defer track(&p.inFlight, &p.maxIn)()
	case http.MethodHead:
		defer track(&p.heads, &p.maxHeads)()
	}
	p.mu.Lock()
	delay, rate := p.delay, p.rate
	fault, ok := p.faults[n]
	if ok {
		delete(p.faults, n)
	} else if len(p.next) > 0 {
		fault, p.next = p.next[0], p.next[1:]
	}
	p.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if fault != 0 {
		p.injected.Add(1)
	}
	switch fault {
	case Reset:
		reset(w)
	case SlowDown:
		s3Error(w, http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate.")
	case InternalError:
		s3Error(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
	case TooManyRequests:
		s3Error(w, http.StatusTooManyRequests, "TooManyRequests", "Too many requests.")
	default:
		p.forward(w, r, fault, rate)
	}
}

// forward sends r to the target and copies the response back, at most
// rate bytes per second when rate > 0; a ShortBody or StallBody fault
// sends only half of the body, then aborts the connection or waits for
// the client to leave.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, fault Fault, rate int64) {
	out := r.Clone(r.Context())
	out.URL.Scheme = "http"
	out.URL.Host = p.target
	out.RequestURI = ""
	out.Host = r.Host // the client signed this host
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if fault != ShortBody && fault != StallBody {
		cw := &countingWriter{w: w, n: &p.body}
		if rate > 0 {
			copyPaced(cw, resp.Body, rate)
		} else {
			io.Copy(cw, resp.Body)
		}
		return
	}
	half := resp.ContentLength / 2
	io.CopyN(&countingWriter{w: w, n: &p.body}, resp.Body, half)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if fault == StallBody {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}
	panic(http.ErrAbortHandler) // net/http drops the connection
}

// copyPaced copies src to w at most rate bytes per second: in pieces of
// 1/100 s of it, each sent no sooner than the rate allows since the start.
func copyPaced(w io.Writer, src io.Reader, rate int64) {
	buf := make([]byte, max(rate/100, 4<<10))
	start := time.Now()
	var sent int64
	for {
		k, err := io.ReadFull(src, buf)
		if k > 0 {
			if ahead := time.Duration(sent*int64(time.Second)/rate) - time.Since(start); ahead > 0 {
				time.Sleep(ahead)
			}
			if _, err := w.Write(buf[:k]); err != nil {
				return
			}
			sent += int64(k)
		}
		if err != nil {
			return
		}
	}
}

// countingWriter adds to n what it writes, before writing it: a client
// that has the bytes finds them counted.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.n.Add(int64(len(b)))
	k, err := c.w.Write(b)
	c.n.Add(int64(k - len(b)))
	return k, err
}

// reset closes the connection under w with a TCP RST.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

func s3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "0")
	}
	w.WriteHeader(status)
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>`+msg+`</Message></Error>`)
}
