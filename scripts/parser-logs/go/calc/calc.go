package calc

func Add(a, b int) int { return a + b }

func Sub(a, b int) int { return a + b } // wrong on purpose: a failing test
