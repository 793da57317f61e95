package serve

import "github.com/prometheus/client_golang/prometheus"

// metrics are the service's Prometheus series (docs/serve.md, "Metrics").
type metrics struct {
	batches   *prometheus.CounterVec
	samples   prometheus.Counter
	bytes     *prometheus.CounterVec
	clients   *prometheus.GaugeVec
	waiting   prometheus.Gauge
	parseWait *prometheus.CounterVec
	calls     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "batchprep_serve_batches_sent_total",
			Help: "Minibatches (sequences) and batch records (graph) sent."}, []string{"call"}),
		samples: prometheus.NewCounter(prometheus.CounterOpts{Name: "batchprep_serve_samples_sent_total",
			Help: "Samples sent in sequence minibatches (this rank's part, minibatch-size stream)."}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "batchprep_serve_bytes_sent_total",
			Help: "Encoded message bytes sent."}, []string{"call"}),
		clients: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "batchprep_serve_clients",
			Help: "Calls in progress."}, []string{"call"}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "batchprep_serve_waiting_calls",
			Help: "Calls waiting for a slot (serve --max-concurrent-calls)."}),
		parseWait: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "batchprep_serve_parse_wait_seconds_total",
			Help: "Time calls spent waiting for the next minibatch or record to be prepared (parsing, loading)."}, []string{"call"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "batchprep_serve_calls_total",
			Help: "Calls ended, by gRPC status code."}, []string{"call", "code"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.batches, m.samples, m.bytes, m.clients, m.waiting, m.parseWait, m.calls} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
