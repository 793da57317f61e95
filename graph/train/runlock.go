package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// RunLockName is the file a training run locks (flock) in its checkpoint
// directory for as long as it runs: a single-process run exclusively, the
// ranks of a distributed run shared, so that the ranks of one run train
// side by side while a second single-process run, or a single-process run
// beside ranks, is refused. Each rank also holds rank-R.lock exclusively,
// so that one rank cannot be started twice. The holder writes who it is
// (pid, host, start time) into the file it holds exclusively. The files
// stay after the run (removing a lock file would race with the next
// locker); a lock dies with its process, so a killed run leaves none
// held.
const RunLockName = "train.lock"

// ErrInUse marks a checkpoint directory another run is training in.
var ErrInUse = errors.New("train: checkpoint directory in use")

// runLock is the locks a run holds on its checkpoint directory.
type runLock struct{ files []*os.File }

// release drops the locks (closing a descriptor releases its flock).
func (l *runLock) release() {
	if l == nil {
		return
	}
	for _, f := range l.files {
		f.Close()
	}
	l.files = nil
}

// lockRun takes dir's run lock: exclusive for a single-process run (rank
// < 0), shared plus rank-R.lock exclusive for rank R of a distributed
// run. It fails at once, with ErrInUse naming the holder, when another
// process holds a conflicting lock.
func lockRun(dir string, rank int) (*runLock, error) {
	l := &runLock{}
	how := syscall.LOCK_EX
	if rank >= 0 {
		how = syscall.LOCK_SH
	}
	f, err := tryLock(filepath.Join(dir, RunLockName), how)
	if err != nil {
		return nil, inUse(dir, err, rank)
	}
	l.files = append(l.files, f)
	if rank < 0 {
		writeHolder(f, "train")
		return l, nil
	}
	rf, err := tryLock(rankLockPath(dir, rank), syscall.LOCK_EX)
	if err != nil {
		l.release()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s: rank %d of this run is already training here (%s): stop it first, or start this process with another --rank",
				ErrInUse, dir, rank, holder(rankLockPath(dir, rank)))
		}
		return nil, err
	}
	writeHolder(rf, fmt.Sprintf("train --rank %d", rank))
	l.files = append(l.files, rf)
	return l, nil
}

func rankLockPath(dir string, rank int) string {
	return filepath.Join(dir, fmt.Sprintf("rank-%d.lock", rank))
}

// tryLock opens path (creating it) and takes a flock on it without
// waiting.
func tryLock(path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, syscall.EROFS) || errors.Is(err, os.ErrPermission) {
		// A directory that cannot be written: lock through a read-only
		// descriptor of an existing lock file (flock allows it), so that
		// the run fails on the write it cannot make, naming its file.
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeHolder records the process holding f's lock in f (best effort: the
// lock is what counts, the text only names the holder).
func writeHolder(f *os.File, what string) {
	host, _ := os.Hostname()
	f.Truncate(0)
	f.WriteAt([]byte(fmt.Sprintf("pid %d on host %s (%s, since %s)\n", os.Getpid(), host, what, time.Now().UTC().Format(time.RFC3339))), 0)
}

// holder returns the holder text of the lock file at path.
func holder(path string) string {
	b, _ := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "a process that has not written its pid yet"
}

// inUse explains why dir's run lock could not be taken.
func inUse(dir string, err error, rank int) error {
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("train: locking %s: %w", filepath.Join(dir, RunLockName), err)
	}
	// Which kind of run holds it: ranks hold their rank files.
	var ranks []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		var r int
		if _, err := fmt.Sscanf(e.Name(), "rank-%d.lock", &r); err != nil || e.Name() != fmt.Sprintf("rank-%d.lock", r) {
			continue
		}
		if f, err := tryLock(filepath.Join(dir, e.Name()), syscall.LOCK_SH); err == nil {
			f.Close() // not held
			continue
		}
		ranks = append(ranks, fmt.Sprintf("rank %d: %s", r, holder(filepath.Join(dir, e.Name()))))
	}
	if len(ranks) > 0 {
		return fmt.Errorf("%w: %s: a distributed run is training in it (%s): a single-process train would destroy its checkpoint; wait for the run to end",
			ErrInUse, dir, strings.Join(ranks, "; "))
	}
	what := "another train is running in it"
	if rank >= 0 {
		what = "a single-process train is running in it"
	}
	return fmt.Errorf("%w: %s: %s (%s); two runs on one checkpoint directory would destroy each other's checkpoints: wait for it to end, or stop it",
		ErrInUse, dir, what, holder(filepath.Join(dir, RunLockName)))
}

// relock takes the run lock again for a Run after an earlier Run of the
// same Trainer released it, refusing when another run committed a
// checkpoint in between (the state New restored is stale).
func (t *Trainer) relock() error {
	if t.lock != nil {
		return nil
	}
	l, err := lockRun(t.dir, -1)
	if err != nil {
		return err
	}
	man, err := ReadManifest(t.dir)
	if err == nil && man != nil && man.Seq != t.man.Seq {
		err = fmt.Errorf("%w: %s: another run committed checkpoint number %d since this one was restored (number %d): start again", ErrInUse, t.dir, man.Seq, t.man.Seq)
	}
	if err != nil {
		l.release()
		return err
	}
	t.lock = l
	return nil
}
