package store

// AppendEvent lets tests record an event inside a transaction they hold.
var AppendEvent = appendEvent
