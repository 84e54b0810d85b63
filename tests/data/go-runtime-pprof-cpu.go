// go-runtime-pprof-cpu.go - wrote tests/data/go-runtime-pprof-cpu.pb.gz (go 1.19, Debian 12):
// `go build -o gop . && ./gop go-runtime-pprof-cpu.pb.gz`. A profile from an independent
// writer (Go's runtime/pprof) for tests/test_import.c.
package main

import (
	"os"
	"runtime/pprof"
	"time"
)

//go:noinline
func spinA(n int) int { s := 0; for i := 0; i < n; i++ { s += i * i % 7 }; return s }

//go:noinline
func spinB(n int) int { s := 0; for i := 0; i < n; i++ { s += i * i % 5 }; return s }

func main() {
	f, _ := os.Create(os.Args[1])
	pprof.StartCPUProfile(f)
	end := time.Now().Add(400 * time.Millisecond)
	s := 0
	for time.Now().Before(end) {
		s += spinA(200000) + 2*spinB(100000)
	}
	pprof.StopCPUProfile()
	f.Close()
	if s == 42 { println(s) }
}
