package cputime

import (
	"bytes"
	"os"
	"strconv"
)

// Machine is what the machine's processors have done so far, as the
// kernel counts it in the first line of /proc/stat: all their time, and
// the part a virtual machine's host took for its other guests (steal).
// Benchmarks print the share taken beside their figures, which it skews.
type Machine struct {
	total, steal uint64 // clock ticks
	ok           bool
}

// ReadMachine reads the counts; where /proc/stat is missing or not as
// expected (outside Linux), it returns a Machine that StealSince refuses.
func ReadMachine() Machine {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Machine{}
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice]:
	// the guests' time is counted in user and nice already.
	if len(f) < 9 || string(f[0]) != "cpu" {
		return Machine{}
	}
	var m Machine
	for i, v := range f[1:9] {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return Machine{}
		}
		m.total += n
		if i == 7 {
			m.steal = n
		}
	}
	m.ok = true
	return m
}

// StealSince is the share of the processors' time, in percent, that the
// host took between m0 and m; ok is false when either could not be read
// or no time passed.
func (m Machine) StealSince(m0 Machine) (percent float64, ok bool) {
	if !m.ok || !m0.ok || m.total <= m0.total {
		return 0, false
	}
	return 100 * float64(m.steal-m0.steal) / float64(m.total-m0.total), true
}
