package coord

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/bucket"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// startServer runs a real etcd in this process on free loopback ports.
func startServer(t testing.TB) *Server {
	t.Helper()
	s, err := Serve(ServerOptions{Dir: filepath.Join(t.TempDir(), "etcd"), Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func newClient(endpoint string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
}

// trainerSpec is what a test trainer needs; child processes get it as JSON
// in BATCHPREP_COORD_TRAINER.
type trainerSpec struct {
	Endpoint string
	Run      string
	Rank     int
	World    int
	L, R     int
	Passes   int
	Order    string // bucket order name, seeded per pass by Seed
	Seed     uint64
	TTLms    int
	MaxDelay int // ms per work step, drawn uniformly in [0, MaxDelay]
	Steps    int // work steps per bucket
	Log      string
	// DieAfter > 0: in-process trainers stop after this many claims
	// without revoking their lease (as a crash would).
	DieAfter int
	// NoClaimAhead is Options.NoClaimAhead.
	NoClaimAhead bool
}

// event is one line of a trainer's log. Times are wall-clock nanoseconds
// (all trainers run on this machine).
type event struct {
	Kind   string `json:"kind"` // join, claim, valid, commit, lost, end
	Pid    int    `json:"pid"`
	Rank   int    `json:"rank"`
	Pass   int    `json:"pass"`
	Bucket [2]int `json:"bucket"`
	Claim  int64  `json:"claim"`
	Ahead  bool   `json:"ahead,omitempty"` // a claim made in the previous commit
	T      int64  `json:"t"`
}

type eventLog struct {
	f   *os.File
	pid int
}

func (l *eventLog) add(e event) {
	e.T, e.Pid = time.Now().UnixNano(), l.pid
	b, _ := json.Marshal(e)
	l.f.Write(append(b, '\n')) // unbuffered: a killed trainer's lines are on disk
}

func (s trainerSpec) options() Options {
	o := Options{Run: s.Run, Rank: s.Rank, World: s.World, LeaseTTL: time.Duration(s.TTLms) * time.Millisecond,
		L: s.L, R: s.R, Passes: s.Passes, NoClaimAhead: s.NoClaimAhead}
	if s.Order != "" {
		o.Order = func(pass int) []graph.Bucket {
			b, err := bucket.Make(s.Order, s.L, s.R, rand.New(rand.NewPCG(s.Seed, uint64(pass))))
			if err != nil {
				panic(err)
			}
			return b
		}
	}
	return o
}

// runTrainer is a test trainer: it claims buckets, "trains" each in Steps
// steps of random length, checking its lease before each step, and commits.
// Every step is logged; the log, not the scheduler, is what tests check.
func runTrainer(ctx context.Context, s trainerSpec, id int) (died bool, err error) {
	f, err := os.OpenFile(s.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	defer f.Close()
	lg := &eventLog{f: f, pid: id}
	c, err := newClient(s.Endpoint)
	if err != nil {
		return false, err
	}
	defer c.Close()
	tr, err := Join(ctx, c, s.options())
	if err != nil {
		return false, err
	}
	lg.add(event{Kind: "join", Rank: s.Rank})
	rng := rand.New(rand.NewPCG(s.Seed, uint64(id)))
	for claims := 0; ; claims++ {
		if s.DieAfter > 0 && claims == s.DieAfter {
			tr.lease.halt() // keep-alives stop, the lease is not revoked: a crash
			return true, nil
		}
		cl, err := tr.Next(ctx)
		if errors.Is(err, ErrDone) {
			lg.add(event{Kind: "end", Rank: s.Rank})
			return false, tr.Close(ctx)
		}
		if err != nil {
			return false, err
		}
		e := event{Rank: s.Rank, Pass: cl.Pass, Bucket: [2]int{cl.Bucket.Lhs, cl.Bucket.Rhs}, Claim: cl.Number, Ahead: cl.Ahead}
		if !cl.Ahead { // a claim made ahead was logged when its commit granted it
			e.Kind = "claim"
			lg.add(e)
		}
		ok := true
		for i := 0; i < s.Steps && ok; i++ {
			if ok = tr.Valid(); ok {
				e.Kind = "valid"
				lg.add(e)
				time.Sleep(time.Duration(rng.IntN(s.MaxDelay*1000+1)) * time.Microsecond)
			}
		}
		if ok = ok && tr.Valid(); ok {
			e.Kind = "valid"
			lg.add(e)
			err = tr.Commit(ctx, cl)
		}
		switch {
		case ok && err == nil:
			e.Kind = "commit"
		case !ok || errors.Is(err, ErrLost):
			e.Kind = "lost"
		default:
			return false, err
		}
		lg.add(e)
		if c := tr.Ahead(); c != nil && e.Kind == "commit" {
			// The commit also claimed the next bucket: the claim is
			// logged now, when it is granted, so that a trainer that
			// dies before working on it (see DieAfter) is still known to
			// have held it (in the first pass its bucket counts as given).
			lg.add(event{Kind: "claim", Rank: s.Rank, Pass: c.Pass, Bucket: [2]int{c.Bucket.Lhs, c.Bucket.Rhs}, Claim: c.Number, Ahead: true})
		}
	}
}

// readLogs reads every *.log in dir.
func readLogs(t testing.TB, dir string) []event {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var evs []event
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				// A process killed mid-write may leave half a line.
				continue
			}
			evs = append(evs, e)
		}
		f.Close()
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].T < evs[j].T })
	return evs
}

// checkLogs checks the acceptance invariants from the trainers' logs:
// every bucket committed exactly once per pass; no two claims sharing a
// partition active at once (a claim is active from its claim event to its
// last valid event: what a trainer did under it); the first-pass rule over
// claims in grant order; every rank ended.
func checkLogs(t testing.TB, s trainerSpec, evs []event) {
	t.Helper()
	type span struct {
		e        event
		from, to int64
	}
	spans := map[int64]*span{}
	committed := map[[3]int]int{}
	ended := map[int]bool{}
	for _, e := range evs {
		switch e.Kind {
		case "claim":
			if spans[e.Claim] != nil {
				t.Fatalf("claim number %d given twice", e.Claim)
			}
			spans[e.Claim] = &span{e: e, from: e.T, to: e.T}
		case "valid":
			spans[e.Claim].to = e.T
		case "commit":
			committed[[3]int{e.Pass, e.Bucket[0], e.Bucket[1]}]++
		case "end":
			ended[e.Rank] = true
		}
	}
	for p := 0; p < s.Passes; p++ {
		for l := 0; l < s.L; l++ {
			for r := 0; r < s.R; r++ {
				if n := committed[[3]int{p, l, r}]; n != 1 {
					t.Fatalf("pass %d bucket (%d,%d) committed %d times, want 1", p, l, r, n)
				}
			}
		}
	}
	if len(committed) != s.Passes*s.L*s.R {
		t.Fatalf("%d (pass, bucket) commits, want %d", len(committed), s.Passes*s.L*s.R)
	}
	for r := 0; r < s.World; r++ {
		if !ended[r] {
			t.Fatalf("rank %d never saw the run end", r)
		}
	}
	var list []*span
	for _, sp := range spans {
		list = append(list, sp)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].e.Claim < list[j].e.Claim })
	for i, a := range list {
		ab := graph.Bucket{Lhs: a.e.Bucket[0], Rhs: a.e.Bucket[1]}
		for _, b := range list[:i] {
			bb := graph.Bucket{Lhs: b.e.Bucket[0], Rhs: b.e.Bucket[1]}
			if bucket.Shares(ab, bb) && a.from <= b.to && b.from <= a.to {
				t.Fatalf("claims %d (pass %d %v, rank %d) and %d (pass %d %v, rank %d) share a partition and overlap",
					b.e.Claim, b.e.Pass, b.e.Bucket, b.e.Rank, a.e.Claim, a.e.Pass, a.e.Bucket, a.e.Rank)
			}
		}
	}
	var first []*span
	for _, sp := range list {
		if sp.e.Pass == 0 {
			first = append(first, sp)
		}
	}
	for i, a := range first {
		if i == 0 {
			continue
		}
		ok := false
		for _, b := range first[:i] {
			ok = ok || bucket.Shares(graph.Bucket{Lhs: a.e.Bucket[0], Rhs: a.e.Bucket[1]}, graph.Bucket{Lhs: b.e.Bucket[0], Rhs: b.e.Bucket[1]})
		}
		if !ok {
			t.Fatalf("first pass: claim %d %v shares no partition with an earlier claim", a.e.Claim, a.e.Bucket)
		}
	}
}

// checkRemoved checks that the run's keys are gone.
func checkRemoved(t testing.TB, endpoint, run string) {
	t.Helper()
	c, err := newClient(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Get(context.Background(), "/batchprep/runs/"+run+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Fatalf("run %s: %d keys left after the end", run, resp.Count)
	}
}

func specString(s trainerSpec) string {
	str := fmt.Sprintf("%dx%d passes %d world %d order %q seed %d", s.L, s.R, s.Passes, s.World, s.Order, s.Seed)
	if s.NoClaimAhead {
		str += " no-claim-ahead"
	}
	return str
}

var _ = strconv.Itoa
