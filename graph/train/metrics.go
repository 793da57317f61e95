package train

// Metrics summarize ranks (1 = best): the filtered or sampled ranking
// metrics of an evaluation.
type Metrics struct {
	Count    int64   `json:"count"`
	MRR      float64 `json:"mrr"`
	Hits1    float64 `json:"hits@1"`
	Hits3    float64 `json:"hits@3"`
	Hits10   float64 `json:"hits@10"`
	MeanRank float64 `json:"mean_rank"`
}

// MetricsOf summarizes ranks.
func MetricsOf(ranks []float64) Metrics {
	var m Metrics
	for _, r := range ranks {
		m.Count++
		m.MRR += 1 / r
		m.MeanRank += r
		if r <= 1 {
			m.Hits1++
		}
		if r <= 3 {
			m.Hits3++
		}
		if r <= 10 {
			m.Hits10++
		}
	}
	if m.Count > 0 {
		n := float64(m.Count)
		m.MRR, m.MeanRank, m.Hits1, m.Hits3, m.Hits10 = m.MRR/n, m.MeanRank/n, m.Hits1/n, m.Hits3/n, m.Hits10/n
	}
	return m
}
