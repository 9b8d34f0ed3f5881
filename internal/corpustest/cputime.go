package corpustest

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime returns the user and system CPU time this process has used so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU reports the CPU time per operation since start as "cpu-ms/op". On a shared machine wall time
// (ns/op) includes waiting for other processes; CPU time does not, and for a parallel operation it shows the
// total work across cores.
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(CPUTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
