"""The silicon backend's child process: map the job's memory and code, then stop under ptrace.

Standard library only, and started by path (``python -S child.py``), so it is
ready in milliseconds.  It reads one JSON line: {"amx": bool, "mappings": [[start, end,
prot, [[address, hex], ...]], ...]}; asks for AMX tile permission if told to; maps every
page range at its exact address (never over an existing mapping); copies the bytes in;
sets the protection; answers {"ready": true} (or {"error": ...}); then PTRACE_TRACEME
and SIGSTOP.  The parent sets the registers, runs the code and kills this process.
"""

import ctypes
import json
import os
import signal
import sys

SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 158, 0x1023, 18
PROT_RW, MAP_PRIVATE_ANONYMOUS, MAP_FIXED_NOREPLACE = 3, 0x22, 0x100000
PTRACE_TRACEME = 0


def main() -> None:
    job = json.loads(sys.stdin.readline())
    lib = ctypes.CDLL(None, use_errno=True)
    lib.mmap.restype = ctypes.c_void_p
    lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    lib.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    if job["amx"]:
        lib.syscall(SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)
    for start, end, prot, pieces in job["mappings"]:
        got = lib.mmap(start, end - start, PROT_RW, MAP_PRIVATE_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
        if got != start:
            print(json.dumps({"error": f"cannot map {start:#x}..{end:#x}: the address is in use"}), flush=True)
            return
        for address, data in pieces:
            ctypes.memmove(address, bytes.fromhex(data), len(data) // 2)
        if prot != PROT_RW:
            lib.mprotect(start, end - start, prot)
    print(json.dumps({"ready": True}), flush=True)
    lib.ptrace(PTRACE_TRACEME, 0, None, None)
    os.kill(os.getpid(), signal.SIGSTOP)
    os._exit(99)  # never reached: the parent kills this process after the run


if __name__ == "__main__":
    main()
