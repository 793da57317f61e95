package train

import "github.com/batchprep/batchprep/graph/config"

// When a checkpoint is committed (docs/training.md, "When"). A commit
// writes every changed resident partition; those still to be trained
// are written again when they leave the buffer. With the default interval
// (checkpoint_buckets unset) and partitions that do not all fit in the
// buffer, a commit that falls due waits for the end of
// the buffer state, the first next bucket that needs a partition the
// buffer does not hold, at most every more buckets: the partition that
// load evicts was just written and leaves clean, one write fewer per
// commit. An explicit checkpoint_buckets commits exactly where it says. A
// commit that falls inside a group of interleaved buckets waits for the
// group's end (group.go). Run and PredictIO share the clock, so the
// predicted bytes equal the counted ones; commits never change what is
// trained, so a run resumed at any of them trains the same batches.

// AlignCommits reports whether cfg's commits wait for buffer state ends:
// with the default interval, when some entity type has more partitions
// than the buffer holds (else nothing is ever evicted).
func AlignCommits(cfg *config.Config) bool {
	if cfg.CheckpointBuckets > 0 {
		return false
	}
	for _, e := range cfg.Entities {
		if e.NumPartitions > cfg.Buffer() {
			return true
		}
	}
	return false
}

// commitClock carries a commit that fell due and has not been made.
type commitClock struct {
	due    bool
	waited int // buckets trained since it fell due
}

// after reports whether the step after the bucket at pos (followed by
// next) commits; grouped is true while the group of interleaved buckets
// at pos has buckets left.
func (c *commitClock) after(t *Trainer, pos, next Position, grouped bool) bool {
	if next.Epoch != pos.Epoch {
		*c = commitClock{}
		return true
	}
	if c.due {
		c.waited++
	}
	c.due = c.due || t.commitAfter(pos, next)
	if !c.due || grouped || t.align && c.waited < t.every && !t.needsLoad(next) {
		return false
	}
	*c = commitClock{}
	return true
}

// needsLoad reports whether the bucket at next needs a partition the
// buffer does not hold now.
func (t *Trainer) needsLoad(next Position) bool {
	for _, k := range t.needed(t.bucketAt(next)) {
		if !t.res.has(k) {
			return true
		}
	}
	return false
}
