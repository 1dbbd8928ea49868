package calc

import (
	"fmt"
	"testing"
	"time"
)

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("2+3")
	}
}

func TestSub(t *testing.T) {
	if got := Sub(5, 3); got != 2 {
		t.Errorf("Sub(5, 3) = %d, want 2", got)
	}
}

func TestSkipped(t *testing.T) {
	t.Skip("not on this platform")
}

func TestTable(t *testing.T) {
	cases := []struct {
		name string
		a, b int
		want int
	}{
		{"zero", 0, 0, 0},
		{"négatif ünïcode", -1, -2, -3},
		{"with spaces (and parens)", 1, 1, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.a, c.b); got != c.want {
				t.Errorf("got %d", got)
			}
		})
	}
}

func TestParallel(t *testing.T) {
	for i := 0; i < 3; i++ {
		i := i
		t.Run(fmt.Sprintf("worker_%d", i), func(t *testing.T) {
			t.Parallel()
			time.Sleep(time.Duration(3-i) * 5 * time.Millisecond)
			fmt.Printf("worker %d printing without a newline...", i)
			t.Logf("worker %d done", i)
		})
	}
}

func TestNested(t *testing.T) {
	t.Run("outer", func(t *testing.T) {
		t.Run("inner_pass", func(t *testing.T) {})
		t.Run("inner_skip", func(t *testing.T) { t.Skip("later") })
		t.Run("inner_fail", func(t *testing.T) { t.Fail() })
	})
}

func TestNoNewline(t *testing.T) {
	fmt.Print("progress: 100%")
}
