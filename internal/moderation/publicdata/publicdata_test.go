package publicdata

import "testing"

func TestDataSetsLoadWithTheirPublishedSizes(t *testing.T) {
	d, err := Davidson()
	if err != nil {
		t.Fatal(err)
	}
	s, err := SMS()
	if err != nil {
		t.Fatal(err)
	}
	var classes [3]int
	for _, x := range d {
		classes[x.Label]++
	}
	spam := 0
	for _, x := range s {
		spam += x.Label
	}
	if len(d) != 24783 || classes != [3]int{1430, 19190, 4163} {
		t.Errorf("Davidson: %d rows, classes %v", len(d), classes)
	}
	if len(s) != 5574 || spam != 747 {
		t.Errorf("SMS: %d rows, %d spam", len(s), spam)
	}
}

func TestHeldOutIsAStableFifth(t *testing.T) {
	s, err := SMS()
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, x := range s {
		if HeldOut(x.Text) {
			held++
		}
		if HeldOut(x.Text) != HeldOut(x.Text) {
			t.Fatal("split not deterministic")
		}
	}
	if f := float64(held) / float64(len(s)); f < 0.17 || f > 0.23 {
		t.Errorf("held-out fraction %.3f", f)
	}
}
