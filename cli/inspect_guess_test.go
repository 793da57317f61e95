package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/internal/shared"
)

// inspectReports runs inspect's inference on path twice, guessing the
// streams from the first guessBytes and from the whole file (the full
// scan), and returns both outcomes as JSON, with whether the guess was
// kept.
func inspectReports(t *testing.T, path string, guessBytes int64) (got, want string, guessed bool) {
	t.Helper()
	outcome := func(rep *inspectReport, fatal, err error) string {
		b, jerr := json.Marshal(rep)
		if jerr != nil {
			t.Fatal(jerr)
		}
		return fmt.Sprintf("%s\nfatal: %v\nerr: %v", b, fatal, err)
	}
	cfg := ctf.Config{ChunkBytes: 256}
	in := corpusFiles{ctx: t.Context()}
	got = outcome(inspectInferred(in, path, cfg, guessBytes))
	want = outcome(inspectInferred(in, path, cfg, 1<<62))
	if guess, whole, err := ctf.InferPrefix(path, guessBytes); err == nil && !whole && len(guess) > 0 {
		guessed = inspectGuess(in, path, cfg, guess) != nil
	}
	return got, want, guessed
}

// randomCTF writes a CTF file of a few streams. A clean file names every
// stream on every line, writes every dense sample with exactly its
// dimension and every sparse value as index:value; otherwise each line may
// bring a hazard that the guess from the file's start cannot foresee: a
// stream named late, a longer or shorter dense sample, a larger index late,
// a sparse value in a dense stream, a malformed token, a missing final
// newline.
func randomCTF(rng *rand.Rand, clean bool) string {
	type stream struct {
		name   string
		sparse bool
		dim    int
	}
	names := []string{"a", "S0", "feat", "L", "xyz"}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	streams := make([]stream, 1+rng.IntN(4))
	for i := range streams {
		streams[i] = stream{names[i], rng.IntN(2) == 0, 1 + rng.IntN(6)}
	}
	var b strings.Builder
	if rng.IntN(10) == 0 {
		b.WriteString("\xEF\xBB\xBF")
	}
	lines := 5 + rng.IntN(120)
	seq := 0
	for l := 0; l < lines; l++ {
		if l > 0 && rng.IntN(4) == 0 {
			seq++
		}
		fmt.Fprintf(&b, "%d", seq)
		hazard := !clean && l > 0 && rng.IntN(12) == 0
		wrote := false
		for i, st := range streams {
			if !clean && l > 0 && rng.IntN(3) == 0 && (wrote || i < len(streams)-1) {
				continue // not every stream on every line (a bad sequence, perhaps)
			}
			if !clean && l < lines/2 && i == len(streams)-1 && len(streams) > 1 && rng.IntN(3) == 0 {
				continue // named late, perhaps
			}
			wrote = true
			fmt.Fprintf(&b, "\t|%s", st.name)
			n := st.dim
			if st.sparse {
				n = 1 + rng.IntN(3)
			}
			if hazard && rng.IntN(2) == 0 {
				n += rng.IntN(3) - 1
			}
			for k := 0; k < n; k++ {
				switch {
				case st.sparse:
					idx := rng.IntN(st.dim)
					if hazard && rng.IntN(3) == 0 {
						idx += st.dim * (1 + rng.IntN(50))
					}
					fmt.Fprintf(&b, " %d:%d", idx, 1+rng.IntN(3))
				case hazard && rng.IntN(4) == 0:
					fmt.Fprintf(&b, " %d:1", rng.IntN(9))
				default:
					fmt.Fprintf(&b, " %d", rng.IntN(10))
				}
			}
			if hazard && rng.IntN(6) == 0 {
				b.WriteString(" x?")
			}
			if rng.IntN(5) == 0 {
				b.WriteString(" |# a comment")
			}
		}
		if l < lines-1 || clean || rng.IntN(4) != 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// The report of a file whose streams are guessed from its start is the
// report of the full scan, byte for byte, on clean files (where the guess
// is kept) and on files with every hazard (where it must be dropped).
func TestInspectGuessIsTheFullScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261124, 1))
	dir := t.TempDir()
	kept, dropped := 0, 0
	for i := range 300 {
		clean := i%2 == 0
		data := randomCTF(rng, clean)
		path := filepath.Join(dir, fmt.Sprintf("f%d.ctf", i))
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		guessBytes := int64(1 + rng.IntN(len(data)))
		if clean {
			// The first line names every stream: guess from at least it.
			guessBytes = int64(strings.IndexByte(data, '\n')+1) + int64(rng.IntN(len(data)/2+1))
		}
		got, want, guessed := inspectReports(t, path, guessBytes)
		if got != want {
			t.Fatalf("file %d (clean %v), guess from %d of %d bytes:\n%s\nguessed report:\n%s\nfull scan:\n%s", i, clean, guessBytes, len(data), data, got, want)
		}
		if guessed {
			kept++
		} else if guessBytes < int64(len(data)) {
			dropped++
		}
	}
	// Both ways were taken, or the test proves nothing about one of them.
	if kept < 50 || dropped < 50 {
		t.Fatalf("guess kept for %d files and dropped for %d; want at least 50 of each", kept, dropped)
	}
}

// The guess is kept for a real corpus (ATIS, clean), and gives its report.
func TestInspectGuessATIS(t *testing.T) {
	src := shared.Need(t, "ctf", "atis", "atis.test.ctf")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "atis.ctf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, want, guessed := inspectReports(t, path, 64<<10)
	if got != want {
		t.Fatalf("guessed report:\n%s\nfull scan:\n%s", got, want)
	}
	if !guessed {
		t.Fatal("the guess was dropped for ATIS, a clean file")
	}
}

func FuzzInspectGuess(f *testing.F) {
	f.Add([]byte("0\t|a 1 2\t|b 3:1\n1\t|a 4 5 |# c\n"), uint16(9))
	f.Add([]byte("0 |a 1:1\n0 |a 7:1\n1 |b 2\n"), uint16(9))
	f.Add([]byte("\xEF\xBB\xBF0 |x 1 2\n1 |x 1 2 3\n"), uint16(12))
	f.Fuzz(func(t *testing.T, data []byte, guess uint16) {
		path := filepath.Join(t.TempDir(), "f.ctf")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, want, _ := inspectReports(t, path, 1+int64(guess)%int64(len(data)+1))
		if got != want {
			t.Fatalf("guessed report:\n%s\nfull scan:\n%s", got, want)
		}
	})
}
