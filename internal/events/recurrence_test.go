package events

import (
	"testing"
	"time"

	"github.com/matchpoint-api/matchpoint/internal/apperr"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func expand(t *testing.T, rule string, start time.Time, loc *time.Location) []time.Time {
	t.Helper()
	r, err := ParseRule(rule)
	if err != nil {
		t.Fatalf("parse %q: %v", rule, err)
	}
	out, err := r.Expand(start, loc)
	if err != nil {
		t.Fatalf("expand %q: %v", rule, err)
	}
	return out
}

func wantTimes(t *testing.T, got []time.Time, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d occurrences %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if !got[i].Equal(utc(want[i])) {
			t.Errorf("occurrence %d = %s, want %s", i, got[i].UTC().Format(time.RFC3339), want[i])
		}
	}
}

func TestWeeklyAcrossSpringForward(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	// Tuesday 24 March 2026, 19:00 in Paris (CET, UTC+1). Clocks go forward
	// on Sunday 29 March: later sessions stay at 19:00 local, 17:00 UTC.
	start := time.Date(2026, 3, 24, 19, 0, 0, 0, paris)
	got := expand(t, "RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=5", start, paris)
	wantTimes(t, got, "2026-03-24T18:00:00Z", "2026-03-26T18:00:00Z", "2026-03-31T17:00:00Z", "2026-04-02T17:00:00Z", "2026-04-07T17:00:00Z")
	for _, o := range got {
		if h := o.In(paris).Hour(); h != 19 {
			t.Errorf("%s is %d:00 in Paris, want 19:00", o, h)
		}
	}
}

func TestWeeklyAcrossFallBackNewYork(t *testing.T) {
	ny := zone(t, "America/New_York")
	// Saturdays at 09:00; clocks go back on Sunday 1 November 2026.
	start := time.Date(2026, 10, 24, 9, 0, 0, 0, ny)
	got := expand(t, "FREQ=WEEKLY;COUNT=3", start, ny)
	wantTimes(t, got, "2026-10-24T13:00:00Z", "2026-10-31T13:00:00Z", "2026-11-07T14:00:00Z")
}

func TestDailyIntervalUntilDate(t *testing.T) {
	start := utc("2026-05-01T07:00:00Z")
	got := expand(t, "FREQ=DAILY;INTERVAL=2;UNTIL=20260507", start, time.UTC)
	wantTimes(t, got, "2026-05-01T07:00:00Z", "2026-05-03T07:00:00Z", "2026-05-05T07:00:00Z", "2026-05-07T07:00:00Z")
}

func TestUntilInstantIsInclusive(t *testing.T) {
	start := utc("2026-05-01T07:00:00Z")
	got := expand(t, "FREQ=DAILY;UNTIL=20260503T070000Z", start, time.UTC)
	wantTimes(t, got, "2026-05-01T07:00:00Z", "2026-05-02T07:00:00Z", "2026-05-03T07:00:00Z")
	got = expand(t, "FREQ=DAILY;UNTIL=20260503T065959Z", start, time.UTC)
	wantTimes(t, got, "2026-05-01T07:00:00Z", "2026-05-02T07:00:00Z")
}

func TestDailyByDayFilters(t *testing.T) {
	// Friday 1 May 2026; weekdays only.
	start := utc("2026-05-01T17:00:00Z")
	got := expand(t, "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;COUNT=4", start, time.UTC)
	wantTimes(t, got, "2026-05-01T17:00:00Z", "2026-05-04T17:00:00Z", "2026-05-05T17:00:00Z", "2026-05-06T17:00:00Z")
}

func TestStartOffRuleCountsFirst(t *testing.T) {
	// RFC 5545: the start is the first occurrence even when BYDAY skips it
	// (a Monday start for a Wednesday rule).
	start := utc("2026-05-04T10:00:00Z")
	got := expand(t, "FREQ=WEEKLY;INTERVAL=2;BYDAY=WE;COUNT=3", start, time.UTC)
	wantTimes(t, got, "2026-05-04T10:00:00Z", "2026-05-06T10:00:00Z", "2026-05-20T10:00:00Z")
}

func TestLocalTimeInTheGapMovesLater(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	// 02:30 does not exist on 29 March 2026 in Paris: RFC 5545 reads it with
	// the offset before the gap, 03:30 CEST.
	start := time.Date(2026, 3, 28, 2, 30, 0, 0, paris)
	got := expand(t, "FREQ=DAILY;COUNT=3", start, paris)
	wantTimes(t, got, "2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z")
	if l := got[1].In(paris); l.Hour() != 3 || l.Minute() != 30 {
		t.Errorf("gap occurrence is %s local, want 03:30", l)
	}
}

func TestRepeatedLocalTimeTakesTheFirst(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	// 02:30 happens twice on 25 October 2026: the first (CEST) is meant.
	got := LocalInstant(2026, 10, 25, 2, 30, 0, paris)
	if !got.Equal(utc("2026-10-25T00:30:00Z")) {
		t.Fatalf("got %s, want 00:30Z", got)
	}
	if got := LocalInstant(2026, 7, 1, 12, 0, 0, paris); !got.Equal(utc("2026-07-01T10:00:00Z")) {
		t.Fatalf("ordinary time: %s", got)
	}
}

func TestRuleStringIsCanonical(t *testing.T) {
	r, err := ParseRule("rrule:byday=th,tu;freq=weekly;count=4;interval=1")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.String(); got != "FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4" {
		t.Fatalf("String = %q", got)
	}
}

func TestBadRules(t *testing.T) {
	for _, rule := range []string{
		"", "FREQ=MONTHLY;COUNT=2", "FREQ=WEEKLY", "FREQ=WEEKLY;COUNT=2;UNTIL=20260601",
		"FREQ=DAILY;COUNT=0", "FREQ=DAILY;COUNT=101", "FREQ=DAILY;INTERVAL=0;COUNT=2", "FREQ=DAILY;INTERVAL=x;COUNT=2",
		"FREQ=WEEKLY;BYDAY=1MO;COUNT=2", "FREQ=WEEKLY;BYDAY=XX;COUNT=2", "FREQ=WEEKLY;BYMONTH=1;COUNT=2",
		"FREQ=DAILY;COUNT=2;COUNT=3", "FREQ=DAILY;UNTIL=2026-06-01", "FREQ=DAILY;UNTIL=20261301", "COUNT=2", "FREQ",
		"FREQ=WEEKLY;WKST=SU;COUNT=2",
	} {
		_, err := ParseRule(rule)
		if e, ok := apperr.As(err); !ok || e.Code != "invalid_recurrence" || e.Param != "recurrence" {
			t.Errorf("%q: err = %v, want invalid_recurrence", rule, err)
		}
	}
	// A rule that ends too late produces too many occurrences.
	r, err := ParseRule("FREQ=DAILY;UNTIL=20270101")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Expand(utc("2026-05-01T10:00:00Z"), time.UTC); err == nil {
		t.Fatal("a year of daily occurrences was accepted")
	}
}
