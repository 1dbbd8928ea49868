package broken

import "testing"

func TestDoesNotCompile(t *testing.T) {
	var x int = "text"
	_ = x
}
