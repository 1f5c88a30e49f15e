package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hubd/hubd/internal/store"
)

// metrics are the Prometheus series /metrics serves: requests and latency by operationId and status,
// the database pool's state, and the Go runtime's.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// series are each operation's series resolved from the vectors, by operation: looking them up by
	// label values on every request hashes and locks (a few microseconds when an event answers
	// thousands of parked polls at once).
	series sync.Map // operation -> *operationSeries
}

type operationSeries struct {
	latency prometheus.Observer
	codes   sync.Map // status -> prometheus.Counter
}

func newMetrics(st *store.Store) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hubd_http_requests_total", Help: "HTTP requests by operationId and status.",
		}, []string{"operation", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hubd_http_request_duration_seconds", Help: "HTTP request latency by operationId.",
			Buckets: prometheus.DefBuckets,
		}, []string{"operation"}),
	}
	m.registry.MustRegister(m.requests, m.latency, poolCollector{st},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(operation string, status int, elapsed time.Duration) {
	s, ok := m.series.Load(operation)
	if !ok {
		s, _ = m.series.LoadOrStore(operation, &operationSeries{latency: m.latency.WithLabelValues(operation)})
	}
	ops := s.(*operationSeries)
	ops.latency.Observe(elapsed.Seconds())
	c, ok := ops.codes.Load(status)
	if !ok {
		c, _ = ops.codes.LoadOrStore(status, m.requests.WithLabelValues(operation, strconv.Itoa(status)))
	}
	c.(prometheus.Counter).Inc()
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// poolCollector reports pgxpool statistics at scrape time.
type poolCollector struct{ st *store.Store }

var (
	poolTotal    = prometheus.NewDesc("hubd_db_pool_connections", "Database connections in the pool.", nil, nil)
	poolIdle     = prometheus.NewDesc("hubd_db_pool_idle_connections", "Idle database connections.", nil, nil)
	poolInUse    = prometheus.NewDesc("hubd_db_pool_acquired_connections", "Database connections in use.", nil, nil)
	poolMax      = prometheus.NewDesc("hubd_db_pool_max_connections", "Maximum database connections.", nil, nil)
	poolAcquires = prometheus.NewDesc("hubd_db_pool_acquires_total", "Connection acquisitions.", nil, nil)
	poolWaits    = prometheus.NewDesc("hubd_db_pool_empty_acquires_total", "Acquisitions that waited for a connection.", nil, nil)
)

func (poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolTotal, poolIdle, poolInUse, poolMax, poolAcquires, poolWaits} {
		ch <- d
	}
}

func (p poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := p.st.Pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolTotal, prometheus.GaugeValue, float64(s.TotalConns()))
	ch <- prometheus.MustNewConstMetric(poolIdle, prometheus.GaugeValue, float64(s.IdleConns()))
	ch <- prometheus.MustNewConstMetric(poolInUse, prometheus.GaugeValue, float64(s.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaits, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
}
