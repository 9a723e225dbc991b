package moderation

import (
	"testing"
)

// Typical chat messages: what messaging sends through Check all day.
var typical = []string{
	"Anyone up for doubles on Saturday morning? We need a fourth.",
	"Running 10 minutes late, start warming up without me",
	"Court 3 is booked for 6pm Thursday, see you there",
	"Great game today! Your backhand has really improved, same time next week?",
	"I'll bring the balls, can you bring water?",
	"Can we move our game to 7 instead of 6?",
	"We lost 4-6 6-3 8-10 in the super tiebreak, so close",
	"ok",
}

func BenchmarkCheck(b *testing.B) {
	e := Default()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e.Check(typical[i%len(typical)], ContextMessage)
		i++
	}
}

func BenchmarkCheckObfuscated(b *testing.B) {
	e := Default()
	text := "I'\u200bl\u200bl k1l1 h1m if he comes пеаr the club again, y o u w o n ' t s e e i t c o m i n g"
	b.ReportAllocs()
	for b.Loop() {
		e.Check(text, ContextMessage)
	}
}
