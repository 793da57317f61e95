package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// dataFileOf returns the data file name n is (temp false) or is a
// temporary of (.NAME.tmp-*, temp true), or "" when it is neither.
func dataFileOf(n string) (name string, temp bool) {
	if dataFile.MatchString(n) {
		return n, false
	}
	if i := strings.Index(n, ".tmp-"); strings.HasPrefix(n, ".") && i > 1 && dataFile.MatchString(n[1:i]) {
		return n[1:i], true
	}
	return "", false
}

// fileVersion is the N of a data file name NAME.vN.bin (-1 if none).
func fileVersion(name string) int64 {
	s := strings.TrimSuffix(name, ".bin")
	i := strings.LastIndex(s, ".v")
	if i < 0 {
		return -1
	}
	v, err := strconv.ParseInt(s[i+2:], 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// ownVersions reads the training log in dir and returns the file
// versions it shows runs of this directory wrote: the checkpoint number
// of each single-process line, the claim number of each distributed line
// (a claim is logged before its files are written). Lines it cannot read
// are skipped: the log is checked elsewhere.
func ownVersions(dir string) map[int64]bool {
	return loggedVersions(dir, -1)
}

// loggedVersions is ownVersions restricted to rank's claims (rank < 0:
// every line).
func loggedVersions(dir string, rank int) map[int64]bool {
	own := map[int64]bool{}
	data, err := os.ReadFile(filepath.Join(dir, LogName))
	if err != nil {
		return own
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Kind       string `json:"kind"`
			Rank       int    `json:"rank"`
			Claim      int64  `json:"claim"`
			Checkpoint int64  `json:"checkpoint"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch {
		case l.Kind != "" && (rank < 0 || l.Rank == rank):
			own[l.Claim] = true
		case l.Kind == "" && rank < 0 && l.Checkpoint > 0:
			own[l.Checkpoint] = true
		}
	}
	return own
}
