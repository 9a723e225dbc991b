package store

// AppendEvent lets tests record an event inside a transaction they hold.
var AppendEvent = appendEvent

// AddNotification and BlockedEitherWay let tests use the seams domains share.
var (
	AddNotification  = addNotification
	BlockedEitherWay = blockedEitherWay
	NotBlocked       = notBlocked
)

// AppendStream lets tests write stream events as a domain's change would.
var AppendStream = appendStream
