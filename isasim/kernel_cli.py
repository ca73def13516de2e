"""The ``kernel`` subcommand: one of the seed article's kernels (x86_amx, arm_sme) at any size.

    isasim kernel NAME [--isa ISA] [--count N] [--k K] [--m M] [--n N] [--svl BITS] -o OUT.trace.json [--force]

The kernel is written as a trace file whose expectation is the reference result (numpy's exact
product), so that ``isasim replay OUT.trace.json`` runs and checks it.
"""

from __future__ import annotations

import inspect

from .cli import EXIT_OK, UsageError, add_config_options, config_from_options, positive_int
from .core.isa import DEFAULT_ISA, get_isa, has_hook, registered_isas
from .core.render import console
from .core.trace import write_trace


def register(sub) -> None:
    p = sub.add_parser("kernel", help="write one of the seed article's kernels, at any size, as a trace file")
    p.add_argument("name", metavar="NAME",
                   help="the kernel (" + "; ".join(f"{name}: {', '.join(get_isa(name).kernel_names)}"
                                                  for name in registered_isas()
                                                  if has_hook(get_isa(name), "build_kernel")) + ")")
    p.add_argument("--isa", default=DEFAULT_ISA, help=f"ISA of the kernel (default {DEFAULT_ISA})")
    p.add_argument("--count", type=positive_int,
                   help="blocks (batch kernels) or 32x32 output blocks (microkernels), at least 1")
    p.add_argument("--k", type=positive_int,
                   help="the K dimension: 1..64 (int8_block), 1..32 (bf16_block), a multiple of 64 "
                        "(int8_microkernel) or 32 (bf16_microkernel); any (arm_sme kernels)")
    p.add_argument("--m", type=positive_int, help="rows of C (arm_sme kernels)")
    p.add_argument("--n", type=positive_int, help="columns of C (arm_sme kernels)")
    add_config_options(p)  # --svl for the arm_sme kernels
    p.add_argument("-o", "--output", required=True, help="trace file to write (never overwritten without --force)")
    p.add_argument("--force", action="store_true", help="overwrite the output file")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.set_defaults(func=cmd_kernel)


def cmd_kernel(args) -> int:
    from .core.output import check_output_path

    isa_name = args.isa
    isa = get_isa(isa_name)
    if not has_hook(isa, "build_kernel"):
        raise UsageError(f"ISA {isa_name} has no kernels")
    if args.name not in isa.kernel_names:
        raise UsageError(f"{isa_name} has no kernel '{args.name}' (its kernels: {', '.join(isa.kernel_names)})")
    check_output_path(args.output, force=args.force)  # before building: a large kernel takes a while
    # M, N and the configuration (--svl) go only to an ISA whose build_kernel takes them (arm_sme), so the
    # x86 kernels are called exactly as before
    extra = {key: value for key, value in (("M", args.m), ("N", args.n), ("config", config_from_options(args, isa)))
             if value}
    taken = inspect.signature(isa.build_kernel).parameters
    for key in extra:
        if key not in taken:
            what = f"--{key.lower()}" if key != "config" else "configuration options (" + ", ".join(extra[key]) + ")"
            raise UsageError(f"{isa_name} kernels take no {what}")
    kernel = isa.build_kernel(args.name, count=args.count, K=args.k, **extra)  # refuses sizes it cannot build, up front
    write_trace(kernel.trace(), args.output, force=args.force)
    console(color=not args.no_color).print(f"wrote {args.output}: {kernel.description}, "
                                           f"{len(kernel.lines)} lines, {kernel.macs:,} multiply-adds")
    return EXIT_OK
