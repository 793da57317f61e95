package serve_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// callErr makes one call, sequences (path a corpus) or graph (path a
// config), and returns its status; a call that hangs fails the test.
func callErr(t *testing.T, conn *grpc.ClientConn, graph bool, path string) *status.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	if graph {
		var st pb.Batches_GraphClient
		if st, err = pb.NewBatchesClient(conn).Graph(ctx, &pb.GraphRequest{Config: path, AllWorkers: true}); err == nil {
			for err == nil {
				_, err = st.Recv()
			}
		}
	} else {
		_, err = collectErr(ctx, conn, &pb.SequenceRequest{Files: []string{path}, Streams: corpusStreams, Mb: "4"})
	}
	if err == nil || err.Error() == "EOF" {
		return status.New(codes.OK, "")
	}
	s, _ := status.FromError(err)
	if s.Code() == codes.DeadlineExceeded {
		t.Fatalf("%s: the call hung (%v)", path, err)
	}
	return s
}

// TestDataRoot: invariant 10. Requests read files under the data
// directories only: relative paths are taken in the first one; absolute
// paths outside them, `..` and links leading out are refused with one code
// and one text, whether the file exists or not; a link into another data
// directory is followed. Graph configs are confined with the paths they
// name, and their errors give the position, never the file's text.
func TestDataRoot(t *testing.T) {
	top := t.TempDir()
	data, other, secret := filepath.Join(top, "data"), filepath.Join(top, "other"), filepath.Join(top, "secret")
	for _, d := range []string{data, other, secret} {
		os.Mkdir(d, 0o755)
	}
	corpus := writeCorpus(t, 12)
	body, _ := os.ReadFile(corpus)
	for _, p := range []string{filepath.Join(data, "c.ctf"), filepath.Join(other, "o.ctf"), filepath.Join(secret, "s.ctf")} {
		os.WriteFile(p, body, 0o644)
	}
	os.Symlink(filepath.Join(secret, "s.ctf"), filepath.Join(data, "out.ctf"))
	os.Symlink(filepath.Join(secret, "none.ctf"), filepath.Join(data, "dangling.ctf"))
	os.Symlink(secret, filepath.Join(data, "outdir"))
	os.Symlink(filepath.Join(other, "o.ctf"), filepath.Join(data, "into-other.ctf"))
	os.Symlink("c.ctf", filepath.Join(data, "in.ctf"))
	// A credentials-like file that is TOML with a syntax error quoting it.
	os.WriteFile(filepath.Join(secret, "creds.toml"), []byte("[default]\nkey = AKIAEXAMPLEKEY\n"), 0o600)
	os.WriteFile(filepath.Join(data, "creds.toml"), []byte("[default]\nkey = AKIAEXAMPLEKEY\n"), 0o600)
	os.WriteFile(filepath.Join(data, "bad-key.toml"), []byte("AKIAEXAMPLEKEY = 1\n"), 0o600)

	_, conn, _ := startServer(t, serve.Options{DataDirs: []string{data, other}})
	for _, p := range []string{"c.ctf", filepath.Join(data, "c.ctf"), "in.ctf", "./sub/../c.ctf", "into-other.ctf", filepath.Join(other, "o.ctf")} {
		if s := callErr(t, conn, false, p); s.Code() != codes.OK {
			t.Errorf("%s: %v, want it served", p, s.Err())
		}
	}
	if s := callErr(t, conn, false, "nothing.ctf"); s.Code() != codes.NotFound {
		t.Errorf("a missing file in the data directory: %v, want NotFound", s.Err())
	}
	// Refused alike, whether the file behind exists or not.
	var texts []string
	for _, p := range []string{
		filepath.Join(secret, "s.ctf"), filepath.Join(secret, "none.ctf"), "/etc/passwd", "/etc/no-such-file",
		"../secret/s.ctf", "../secret/none.ctf", filepath.Join(data, "..", "secret", "s.ctf"),
		"out.ctf", "dangling.ctf", "outdir/s.ctf", "outdir/none.ctf",
	} {
		s := callErr(t, conn, false, p)
		if s.Code() != codes.PermissionDenied {
			t.Errorf("%s: %v, want PermissionDenied", p, s.Err())
		}
		texts = append(texts, strings.Replace(s.Message(), p, "PATH", 1))
	}
	for i, txt := range texts {
		if txt != texts[0] {
			t.Errorf("refusal %d reads %q, refusal 0 %q: they must not differ", i, txt, texts[0])
		}
	}
	if !strings.Contains(texts[0], "files: ") || !strings.Contains(texts[0], "--data-dir") {
		t.Errorf("refusal %q: want the field and the flag named", texts[0])
	}

	// Graph configs: the file, and the paths it names.
	cfg := graphFixture(t)
	cfgDir := filepath.Dir(cfg)
	text, _ := os.ReadFile(cfg)
	outside := filepath.Join(data, "outside.toml") // names a store outside the data directories
	os.WriteFile(outside, text, 0o644)
	if s := callErr(t, conn, true, cfg); s.Code() != codes.PermissionDenied {
		t.Errorf("a config outside: %v, want PermissionDenied", s.Err())
	}
	if s := callErr(t, conn, true, "outside.toml"); s.Code() != codes.PermissionDenied || !strings.Contains(s.Message(), "entity_path") {
		t.Errorf("a config naming a store outside: %v, want PermissionDenied naming entity_path", s.Err())
	}
	for _, p := range []string{filepath.Join(secret, "creds.toml"), "creds.toml", "bad-key.toml"} {
		s := callErr(t, conn, true, p)
		if s.Code() == codes.OK || strings.Contains(s.Message(), "AKIA") {
			t.Errorf("%s: %v: the file's text must not reach the client", p, s.Err())
		}
	}
	if s := callErr(t, conn, true, "creds.toml"); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), "line 2, column") {
		t.Errorf("a TOML syntax error: %v, want InvalidArgument with its line and column", s.Err())
	}
	_, conn2, _ := startServer(t, serve.Options{DataDirs: []string{cfgDir}})
	if s := callErr(t, conn2, true, "graph.toml"); s.Code() != codes.OK {
		t.Errorf("the config under the data directory: %v", s.Err())
	}
	os.Symlink(filepath.Join(secret, "creds.toml"), filepath.Join(cfgDir, "ent", "leak.json"))
	if s := callErr(t, conn2, true, "graph.toml"); s.Code() != codes.PermissionDenied {
		t.Errorf("a link out of the entity directory: %v, want PermissionDenied", s.Err())
	}
}

// TestDataRootUnreadable: a file the server may not read is refused as a
// missing one outside the data directories is (not as root, who reads
// everything).
func TestDataRootUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	data, secret := t.TempDir(), t.TempDir()
	p := filepath.Join(secret, "locked.ctf")
	os.WriteFile(p, []byte("1 |x 1 2\n"), 0o000)
	_, conn, _ := startServer(t, serve.Options{DataDirs: []string{data}})
	a, b := callErr(t, conn, false, p), callErr(t, conn, false, filepath.Join(secret, "none.ctf"))
	if a.Code() != b.Code() || strings.Replace(a.Message(), p, "P", 1) != strings.Replace(b.Message(), filepath.Join(secret, "none.ctf"), "P", 1) {
		t.Errorf("unreadable %v and missing %v differ", a.Err(), b.Err())
	}
}

// TestNonRegularFiles: FIFOs, directories, sockets and devices are refused
// before they are opened, naming their kind: a FIFO cannot hold the call
// in open() and /dev/zero cannot fill the server's memory.
func TestNonRegularFiles(t *testing.T) {
	data := t.TempDir()
	fifo := filepath.Join(data, "fifo.ctf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	os.Mkdir(filepath.Join(data, "dir.ctf"), 0o755)
	sock := filepath.Join(data, "sock.ctf")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.Symlink(fifo, filepath.Join(data, "link-to-fifo.toml"))
	_, conn, _ := startServer(t, serve.Options{DataDirs: []string{data, "/dev"}})
	for _, c := range []struct {
		path, kind string
	}{
		{fifo, "named pipe"}, {"fifo.ctf", "named pipe"}, {"dir.ctf", "directory"}, {sock, "socket"},
		{"/dev/zero", "device"}, {"/dev/null", "device"}, {"link-to-fifo.toml", "named pipe"},
	} {
		for _, graph := range []bool{false, true} {
			s := callErr(t, conn, graph, c.path)
			if s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), c.kind) || !strings.Contains(s.Message(), "not a regular file") {
				t.Errorf("%s (graph %v): %v, want InvalidArgument naming a %s", c.path, graph, s.Err(), c.kind)
			}
		}
	}
}
