//go:build unix

package tokenizer

import (
	"syscall"
	"time"
)

// cpuTime returns the user and system CPU time of the process, so benchmarks can report the work done
// apart from the wall time, which other processes on a shared machine inflate.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
