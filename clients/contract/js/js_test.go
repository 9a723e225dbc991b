package js_test

import (
	"testing"

	"github.com/matchpoint-api/matchpoint/clients/contract"
)

// TestLibrary runs clients/js/test.sh against a real service on each engine.
func TestLibrary(t *testing.T) { contract.Run(t, "js") }
