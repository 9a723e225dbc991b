package stream

import "github.com/prometheus/client_golang/prometheus"

// Register adds the hub's counters to reg.
func (h *Hub) Register(reg prometheus.Registerer) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "matchpoint_stream_connections",
			Help: "Open real-time stream connections on this node."},
			func() float64 { return float64(h.connections.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "matchpoint_stream_events_delivered_total",
			Help: "Events handed to live stream connections on this node (replays not counted)."},
			func() float64 { return float64(h.delivered.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "matchpoint_stream_dropped_total",
			Help: "Stream connections dropped for falling more than a buffer behind."},
			func() float64 { return float64(h.dropped.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "matchpoint_stream_gaps_skipped_total",
			Help: "Missing stream sequence numbers given up as rolled back."},
			func() float64 { return float64(h.gapsSkipped.Load()) }),
	)
}
