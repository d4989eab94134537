package sandbox

import (
	"encoding/binary"
	"runtime"
)

// A seccomp filter for the processes of a Harden spec: ptrace and the
// process_vm_* calls fail with EPERM, so that no process can reach
// another's memory (code under test, its test runner's). Other calls are
// allowed. It is a classic BPF program over struct seccomp_data: the
// architecture at offset 4, the call number at 0.

// BPF instruction classes and fields (linux/filter.h).
const (
	bpfLdWAbs = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK   = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK   = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfRetK   = 0x06 // BPF_RET | BPF_K

	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000
	seccompRetKill  = 0x80000000 // SECCOMP_RET_KILL_PROCESS
	errEPERM        = 1

	auditArchX8664   = 0xc000003e
	auditArchAarch64 = 0xc00000b7
	x32SyscallBit    = 0x40000000
)

// deniedCalls are the calls a Harden spec refuses, by architecture.
var deniedCalls = map[string][]uint32{
	// ptrace, process_vm_readv, process_vm_writev, then pidfd_getfd (a
	// copy of another process's file) and process_madvise, numbered alike
	// on every architecture since Linux 5.1.
	"amd64": {101, 310, 311, 438, 440},
	"arm64": {117, 270, 271, 438, 440},
}

// bpfInsn is a struct sock_filter.
type bpfInsn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// hardenFilter is the filter's program for this machine's architecture,
// encoded as bwrap --seccomp reads it; nil when bench does not know the
// architecture's call numbers.
func hardenFilter() []byte {
	calls, ok := deniedCalls[runtime.GOARCH]
	if !ok {
		return nil
	}
	arch := uint32(auditArchX8664)
	if runtime.GOARCH == "arm64" {
		arch = auditArchAarch64
	}
	// [0] ld arch; [1] jeq arch ? next : kill; [2] ld nr;
	// amd64: [3] jge x32 bit ? deny : next; then one jeq per call, to deny;
	// allow; deny; kill.
	var p []bpfInsn
	p = append(p, bpfInsn{code: bpfLdWAbs, k: 4})
	p = append(p, bpfInsn{code: bpfJeqK, k: arch}) // jf set below
	p = append(p, bpfInsn{code: bpfLdWAbs, k: 0})
	if runtime.GOARCH == "amd64" {
		p = append(p, bpfInsn{code: bpfJgeK, k: x32SyscallBit}) // jt set below
	}
	for _, nr := range calls {
		p = append(p, bpfInsn{code: bpfJeqK, k: nr}) // jt set below
	}
	allow := len(p)
	p = append(p, bpfInsn{code: bpfRetK, k: seccompRetAllow})
	deny := len(p)
	p = append(p, bpfInsn{code: bpfRetK, k: seccompRetErrno | errEPERM})
	// A foreign architecture's calls (i386 through int 0x80) have other
	// numbers: such a process is killed, not filtered by the wrong table.
	kill := len(p)
	p = append(p, bpfInsn{code: bpfRetK, k: seccompRetKill})
	// Jumps are relative to the next instruction.
	p[1].jf = uint8(kill - 2)
	for i := 3; i < allow; i++ {
		p[i].jt = uint8(deny - i - 1)
	}
	out := make([]byte, 0, 8*len(p))
	for _, in := range p {
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, in.jt, in.jf)
		out = binary.NativeEndian.AppendUint32(out, in.k)
	}
	return out
}
