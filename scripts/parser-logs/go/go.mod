module example.com/parsertests

go 1.19
