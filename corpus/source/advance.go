package source

import "fmt"

// Advance moves past whole sequences holding exactly n samples, in timeline
// order, without loading their data: the part of a global minibatch that
// belongs to other ranks, for callers that assemble global minibatches of
// their own (corpus/mixture). The step count does not change. A count that
// ends inside a sequence is an error, and the Source stays where it was.
// Advance ignores epoch and sweep ends: the caller chose n.
func (s *Source) Advance(n uint64) error {
	if s.err != nil {
		return s.err
	}
	start, step := s.pos, s.step
	pos, labels := s.pos, s.labels
	countLabels := s.countsLabels()
	for end := start + n; pos < end; {
		u := s.peek(int(min(end-pos, 1024)))
		if pos+uint64(u.samples) > end {
			if err := s.Seek(start); err != nil {
				return err
			}
			s.step = step
			return fmt.Errorf("source: advance by %d from position %d ends inside a sequence", n, start)
		}
		s.aheadAt++
		pos += uint64(u.samples)
		if countLabels {
			labels += uint64(s.layout.LabelCount(u.ord))
		}
	}
	s.pos, s.labels = pos, labels
	return nil
}
