package store

// The hooks of addNotification, for the tests that register some.
var (
	RegisterMuteCheck             = registerMuteCheck
	RegisterNotificationPublisher = registerNotificationPublisher
)
