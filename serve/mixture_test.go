package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/batchprep/batchprep/cli"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// writeCorpusB writes a CTF corpus unlike writeCorpus's, so that data
// shows which corpus it came from: sequence i has 1 + i%3 lines, id 5000+i;
// line j carries x = [1000+i, j], y = {(i+j)%7: i+0.5} and, every other
// line, z. bad, when set, spoils x in the sequences it picks.
func writeCorpusB(t *testing.T, n int, bad func(i int) bool) string {
	t.Helper()
	var b bytes.Buffer
	for i := range n {
		for j := range 1 + i%3 {
			x := strconv.Itoa(1000 + i)
			if j == 0 && bad != nil && bad(i) {
				x = "q"
			}
			fmt.Fprintf(&b, "%d |x %s %d |y %d:%g", 5000+i, x, j, (i+j)%7, float64(i)+0.5)
			if j%2 == 0 {
				b.WriteString(" |z 1")
			}
			b.WriteByte('\n')
		}
	}
	p := filepath.Join(t.TempDir(), "b.ctf")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// mixCase is a mixture request with read's flags for it, and for each
// corpus whether it holds writeCorpusB's data (else writeCorpus's).
type mixCase struct {
	name string
	args []string
	req  *pb.SequenceRequest
	isB  []bool
}

// mixtureCases are the mixtures the contract and encoding tests run: two
// CTF corpora; a CTF, a Parquet and a CTF corpus weighed by sample counts;
// a rank of three starting mid-stream.
func mixtureCases(t *testing.T) []mixCase {
	t.Helper()
	a, b, pq := writeCorpus(t, 47), writeCorpusB(t, 31, nil), parquetCorpus(t, 23)
	mix := func(files []string, weights []string, r *pb.SequenceRequest) *pb.SequenceRequest {
		r.Files, r.Weights, r.Streams = files, weights, corpusStreams
		return r
	}
	start := uint64(50)
	return []mixCase{
		{"mix two", []string{"--mb", "9", "--chunk-sequences", "5", "--window-chunks", "2", "--seed", "7", "--epochs", "2"},
			mix([]string{a, b}, []string{"0.7", "0.3"}, &pb.SequenceRequest{Mb: "9", ChunkSequences: 5, WindowChunks: 2, Seed: 7, Epochs: 2}),
			[]bool{false, true}},
		{"mix counts with parquet", []string{"--randomize", "cntk", "--mb", "4*2:16", "--epoch-size", "60", "--epochs", "3", "--chunk-sequences", "4"},
			mix([]string{b, pq, a}, []string{"samples:30", "samples:20", "samples:10"},
				&pb.SequenceRequest{Randomize: "cntk", Mb: "4*2:16", EpochSize: "60", Epochs: 3, ChunkSequences: 4}),
			[]bool{true, false, false}},
		{"mix rank 1 of 3", []string{"--workers", "3", "--rank", "1", "--randomize", "none", "--cut-at-sweep", "--epoch-size", "inf",
			"--max-minibatches", "30", "--start", "50", "--mb", "10"},
			mix([]string{a, b}, []string{"1", "2.5"}, &pb.SequenceRequest{Workers: 3, Rank: 1, Randomize: "none", CutAtSweep: true,
				EpochSize: "inf", MaxMinibatches: 30, Start: &start, Mb: "10"}),
			[]bool{false, true}},
	}
}

// mixLine is a line of `batchprep read --mix ... --format jsonl`.
type mixLine struct {
	readLine
	Corpus        []int   `json:"corpus"`
	Skipped       []int64 `json:"skipped"`
	SkippedCorpus []int   `json:"skipped_corpus"`
}

// mixArgs is read's command line for c.
func mixArgs(c mixCase) []string {
	var args []string
	for i, f := range c.req.Files {
		args = append(args, "--mix", f+"="+c.req.Weights[i])
	}
	for _, s := range c.req.Streams {
		args = append(args, "--stream", s)
	}
	return append(args, c.args...)
}

// runReadMix runs the real `batchprep read` on a mixture.
func runReadMix(t *testing.T, args ...string) []mixLine {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Main(append([]string{"read", "--quiet", "--format", "jsonl"}, args...), nil, &out, &errOut); code != 0 {
		t.Fatalf("read %v: exit %d: %s", args, code, errOut.String())
	}
	var lines []mixLine
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r mixLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, r)
	}
	return lines
}

// corpusOf decodes a minibatch's corpus array.
func corpusOf(m *pb.SequenceMinibatch) []int {
	out := []int{}
	for _, c := range int32s(m.Corpus) {
		out = append(out, int(c))
	}
	return out
}

// TestMixtureContract: invariant 1 for mixtures. A request with weights
// streams exactly what `batchprep read --mix` prints for the same choices,
// each sequence's corpus included, with each corpus's data.
func TestMixtureContract(t *testing.T) {
	_, conn, _ := startServer(t, serve.Options{})
	for _, c := range mixtureCases(t) {
		t.Run(c.name, func(t *testing.T) {
			want := runReadMix(t, mixArgs(c)...)
			got := collect(t, conn, c.req)
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("%d messages, read printed %d lines", len(got), len(want))
			}
			seen := map[int]bool{}
			for i, m := range got {
				checkAgainstRead(t, i, m, want[i].readLine)
				corpus := corpusOf(m)
				if w := append([]int{}, want[i].Corpus...); !reflect.DeepEqual(corpus, w) {
					t.Fatalf("message %d: corpus %v, read printed %v", i, corpus, w)
				}
				checkMixData(t, i, m, corpus, c.isB)
				for _, k := range corpus {
					seen[k] = true
				}
			}
			if len(seen) != len(c.req.Files) {
				t.Fatalf("sequences of %d corpora delivered, want all %d", len(seen), len(c.req.Files))
			}
		})
	}
}

// checkMixData checks every sequence's arrays against the construction of
// its corpus (writeCorpus or writeCorpusB).
func checkMixData(t *testing.T, k int, m *pb.SequenceMinibatch, corpus []int, isB []bool) {
	t.Helper()
	seqs := int64s(m.Sequences)
	x, y := m.Streams[0], m.Streams[1]
	xl, dense := int32s(x.Lengths), float32s(x.Dense)
	indptr, ind := int32s(y.Indptr), int32s(y.Indices)
	if len(corpus) != len(seqs) || len(xl) != len(seqs) {
		t.Fatalf("message %d: %d sequences, %d corpus entries, %d lengths", k, len(seqs), len(corpus), len(xl))
	}
	row := 0
	for s, i := range seqs {
		n, base, id := int(1+i%4), 0, strconv.Itoa(100+int(i))
		if isB[corpus[s]] {
			n, base, id = int(1+i%3), 1000, strconv.Itoa(5000+int(i))
		}
		if xl[s] != int32(n) || m.Ids[s] != id {
			t.Fatalf("message %d: sequence %d of corpus %d: %d samples, id %q; want %d, %q", k, i, corpus[s], xl[s], m.Ids[s], n, id)
		}
		for j := 0; j < n; j, row = j+1, row+1 {
			if dense[2*row] != float32(base+int(i)) || dense[2*row+1] != float32(j) || ind[indptr[row]] != int32((int(i)+j)%7) {
				t.Fatalf("message %d: sequence %d of corpus %d, sample %d: x %v", k, i, corpus[s], j, dense[2*row:2*row+2])
			}
		}
	}
}

// TestMixtureResume: invariant 2 for mixtures. The state after each
// message resumes exactly the rest of the stream; it is the state
// `batchprep read --mix --state-out` writes at that point; a state of
// another mixture, or of one corpus alone, is refused naming the fields
// that differ.
func TestMixtureResume(t *testing.T) {
	a, b := writeCorpus(t, 29), writeCorpusB(t, 17, nil)
	_, conn, _ := startServer(t, serve.Options{})
	req := &pb.SequenceRequest{Files: []string{a, b}, Weights: []string{"0.6", "0.4"}, Streams: corpusStreams, Mb: "7",
		ChunkSequences: 4, WindowChunks: 2, Seed: 5, Epochs: 2}
	all := collect(t, conn, req)
	for i, m := range all {
		r := proto.Clone(req).(*pb.SequenceRequest)
		r.State = m.State
		rest := collect(t, conn, r)
		if len(rest) != len(all)-i-1 {
			t.Fatalf("after message %d: %d messages, want %d", i, len(rest), len(all)-i-1)
		}
		for j, mm := range rest {
			if !proto.Equal(mm, all[i+1+j]) {
				t.Fatalf("after message %d: message %d differs", i, j)
			}
		}
	}
	statePath := filepath.Join(t.TempDir(), "state.json")
	runReadMix(t, "--mix", a+"=0.6", "--mix", b+"=0.4", "--stream", "x:2", "--stream", "y:7:sparse", "--stream", "z:1",
		"--mb", "7", "--chunk-sequences", "4", "--window-chunks", "2", "--seed", "5", "--epochs", "2",
		"--max-minibatches", "3", "--state-out", statePath)
	cliState, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(cliState), bytes.TrimSpace(all[2].State)) {
		t.Fatalf("state after 3 minibatches:\nserve %s\nread  %s", all[2].State, cliState)
	}

	other := proto.Clone(req).(*pb.SequenceRequest)
	other.Weights = []string{"0.5", "0.5"}
	other.State = all[1].State
	_, err = collectErr(context.Background(), conn, other)
	if s, _ := status.FromError(err); s.Code() != codes.FailedPrecondition || !contains(s.Message(), "mix0.weight") || !contains(s.Message(), `"3/5"`) {
		t.Fatalf("a state of other weights: %v, want FailedPrecondition naming mix0.weight", err)
	}
	one := collect(t, conn, &pb.SequenceRequest{Files: []string{a}, Streams: corpusStreams, Mb: "7", MaxMinibatches: 1})
	fromOne := proto.Clone(req).(*pb.SequenceRequest)
	fromOne.State = one[0].State
	_, err = collectErr(context.Background(), conn, fromOne)
	if s, _ := status.FromError(err); s.Code() != codes.FailedPrecondition || !contains(s.Message(), "kind") {
		t.Fatalf("a single corpus's state: %v, want FailedPrecondition naming kind", err)
	}
	back := &pb.SequenceRequest{Files: []string{a}, Streams: corpusStreams, Mb: "7", State: all[1].State}
	if _, err = collectErr(context.Background(), conn, back); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a mixture's state for one corpus: %v, want FailedPrecondition", err)
	}
}

// TestMixtureRequests: invariants 5 and 10 for mixtures. Bad weights are
// refused naming weights; every file of a mixture is checked as a single
// file is, and a refused one is named by its index with the text a single
// file gets; a data error names the corpus's file.
func TestMixtureRequests(t *testing.T) {
	top := t.TempDir()
	data, secret := filepath.Join(top, "data"), filepath.Join(top, "secret")
	os.Mkdir(data, 0o755)
	os.Mkdir(secret, 0o755)
	body, _ := os.ReadFile(writeCorpus(t, 12))
	os.WriteFile(filepath.Join(data, "a.ctf"), body, 0o644)
	os.WriteFile(filepath.Join(secret, "s.ctf"), body, 0o644)
	badB, _ := os.ReadFile(writeCorpusB(t, 20, func(i int) bool { return i == 6 }))
	os.WriteFile(filepath.Join(data, "bad.ctf"), badB, 0o644)
	_, conn, _ := startServer(t, serve.Options{DataDirs: []string{data}})

	mix := func(files, weights []string) *pb.SequenceRequest {
		return &pb.SequenceRequest{Files: files, Weights: weights, Streams: corpusStreams, Mb: "4"}
	}
	many := make([]string, serve.MaxCorpora+1)
	for i := range many {
		many[i] = "1"
	}
	for _, c := range []struct {
		req  *pb.SequenceRequest
		code codes.Code
		msg  string
	}{
		{mix([]string{"a.ctf", "a.ctf"}, []string{"1"}), codes.InvalidArgument, "weights: 1 weights for 2 files"},
		{mix([]string{"a.ctf", "a.ctf"}, []string{"1", "0"}), codes.InvalidArgument, "weights[1]: "},
		{mix([]string{"a.ctf", "a.ctf"}, []string{"0.5", "x"}), codes.InvalidArgument, "weights[1]: "},
		{mix([]string{"a.ctf", "a.ctf"}, []string{"0.5", "samples:9"}), codes.InvalidArgument, "weights: "},
		{mix(many, many), codes.InvalidArgument, "files: a mixture of 65 corpora"},
		{mix([]string{"a.ctf", "missing.ctf"}, []string{"1", "1"}), codes.NotFound, `files[1]: "missing.ctf"`},
		{mix([]string{"a.ctf", "bad.ctf"}, []string{"1", "1"}), codes.DataLoss, `files[1]: "bad.ctf": more than 0 bad sequences (max_errors); the last: line 13, column `},
	} {
		_, err := collectErr(context.Background(), conn, c.req)
		if s, _ := status.FromError(err); s.Code() != c.code || !contains(s.Message(), c.msg) {
			t.Errorf("%v %v: %v, want %v with %q", c.req.Files[:min(2, len(c.req.Files))], c.req.Weights[:min(2, len(c.req.Weights))], err, c.code, c.msg)
		}
	}
	// A file outside the data root, existing or not: the code and text of
	// a single file, under files[1].
	for _, p := range []string{filepath.Join(secret, "s.ctf"), filepath.Join(secret, "none.ctf"), "../secret/s.ctf"} {
		single := callErr(t, conn, false, p)
		_, err := collectErr(context.Background(), conn, mix([]string{"a.ctf", p}, []string{"1", "1"}))
		s, _ := status.FromError(err)
		if single.Code() == codes.OK || s.Code() != single.Code() || s.Message() != strings.Replace(single.Message(), "files", "files[1]", 1) {
			t.Errorf("%s in a mixture: %v; alone: %v", p, err, single.Err())
		}
		if strings.Contains(s.Message(), secret) && !strings.HasPrefix(p, secret) {
			t.Errorf("%s: the message names the data root's outside: %v", p, err)
		}
	}
}

// TestMixtureWindowLimit: invariant 11 for mixtures. The corpora's windows
// count together against MaxWindowBytes: a mixture of two corpora whose
// windows each fit the limit, and together do not, is refused before a
// minibatch; each alone is served.
func TestMixtureWindowLimit(t *testing.T) {
	a, b := writeCorpus(t, 300), writeCorpusB(t, 300, nil)
	_, small, _ := startServer(t, serve.Options{MaxWindowBytes: 14000})
	base := &pb.SequenceRequest{Streams: corpusStreams, Mb: "8", ChunkBytes: 512, WindowChunks: 8, MaxMinibatches: 3}
	for _, f := range []string{a, b} {
		r := proto.Clone(base).(*pb.SequenceRequest)
		r.Files = []string{f}
		if msgs, err := collectErr(context.Background(), small, r); err != nil || len(msgs) != 3 {
			t.Fatalf("%s alone: %d minibatches, %v", f, len(msgs), err)
		}
	}
	r := proto.Clone(base).(*pb.SequenceRequest)
	r.Files, r.Weights = []string{a, b}, []string{"1", "1"}
	msgs, err := collectErr(context.Background(), small, r)
	if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || len(msgs) != 0 ||
		!contains(s.Message(), "window_chunks: the randomization windows of the mixture's 2 corpora") || !contains(s.Message(), "14000 bytes") {
		t.Fatalf("two windows past the limit: %d minibatches, %v", len(msgs), err)
	}
}
