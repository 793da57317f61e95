package serve

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsHandler serves the metrics of g in Prometheus's text format; with
// a token it requires "Authorization: Bearer TOKEN", as the gRPC calls do.
func MetricsHandler(g prometheus.Gatherer, token string) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			if !tokenMatches(r.Header.Get("Authorization"), token) {
				http.Error(w, "missing or wrong token", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
	return mux
}
