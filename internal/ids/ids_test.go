package ids

import (
	"slices"
	"testing"
)

func TestIDsSortByCreation(t *testing.T) {
	var got []string
	for i := 0; i < 1000; i++ {
		got = append(got, New(User))
	}
	if !slices.IsSorted(got) {
		t.Fatal("ids are not in creation order")
	}
	if len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatal("duplicate ids")
	}
	if !Valid(User, got[0]) || Valid(Match, got[0]) || Valid(User, "usr_x") || Valid(User, got[0]+"0") {
		t.Fatal("Valid is wrong")
	}
}
