package eval

// RankEdgesUnfiltered ranks the resolved test edges among every entity of
// the corrupted side's type with no candidate removed (invariant 8): only
// the true entity itself is not its own competitor, so another true edge
// scoring higher counts against the ranked one. This is the raw ranking
// that PBG's torchbiggraph_eval reports for a relation with all_negs (on
// an unpartitioned type, or within the partition for a partitioned one:
// see Report.WithinPartition), so its figures can be set beside PBG's.
func (e *Evaluator) RankEdgesUnfiltered(test Edges) Report {
	rep := e.newReport(test)
	all, part := e.ranksKnown(test, [2]map[[2]uint32][]uint32{{}, {}}, &rep)
	e.summarize(&rep, all, part)
	return rep
}
