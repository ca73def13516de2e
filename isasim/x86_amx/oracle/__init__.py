"""The x86 oracle: this machine's own CPU, the ``silicon`` backend.

    host.py     what this host is and can do (CPUID flags, the XSAVE features the kernel offers)
    ptrace.py   one child process under ptrace that holds a program and runs it, or steps it, on the CPU
    child.py    that child (standard library only, started by path)
    backend.py  SiliconBackend: runs and lockstep runs as the core's Backend, the AMX features the host
                executes as measured (host_amx), and time_on_silicon for the benchmarks
"""

from .backend import (EXECUTES_HIDDEN, MeasuredAmx, SiliconBackend, SiliconMemory, host_amx, host_model,
                      observed_state, time_on_silicon)
from .host import HostCpu, host_cpu, platform_problem
from .ptrace import PTRACE_CONT, PTRACE_SINGLESTEP, RF, ChildProcess

__all__ = ["EXECUTES_HIDDEN", "MeasuredAmx", "SiliconBackend", "SiliconMemory", "host_amx", "host_model",
           "observed_state", "time_on_silicon", "HostCpu", "host_cpu", "platform_problem", "PTRACE_CONT",
           "PTRACE_SINGLESTEP", "RF", "ChildProcess"]
