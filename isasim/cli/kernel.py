"""The ``kernel`` subcommand: one of the seed article's kernels (x86_amx, arm_sme) at any size.

    isasim kernel NAME [--isa ISA] [--count N] [--k K] [--m M] [--n N] [--svl BITS] -o OUT.trace.json [--force]
    isasim kernel NAME ... --run [--workers N | --cluster ADDR] [-o OUT.trace.json]

The kernel is written as a trace file whose expectation is the reference result (numpy's exact
product), so that ``isasim replay OUT.trace.json`` runs and checks it.  ``--run`` simulates it here and
says PASS (C is the reference's bytes) or FAIL (exit 1, naming the first element that differs); with
--workers or --cluster the kernel runs split by output block (isasim.core.kernel_parallel), each block
range an independent run of the same loop, and C is assembled from the parts.
"""

from __future__ import annotations

from ..core.arguments import positive_int
from ..core.errors import EXIT_DIFFERENT, EXIT_OK, UsageError
from ..core.isa import DEFAULT_ISA, get_isa, registered_isas
from ..core.render import console
from ..core.trace import write_trace
from .options import add_config_options, config_from_options


def register(subparsers) -> None:
    """Add ``kernel`` to the ``isasim`` command."""
    p = subparsers.add_parser("kernel", help="write one of the seed article's kernels, at any size, as a trace file")
    p.add_argument("name", metavar="NAME",
                   help="the kernel (" + "; ".join(f"{name}: {', '.join(get_isa(name).kernel_names)}"
                                                  for name in registered_isas()
                                                  if get_isa(name).kernel_names) + ")")
    p.add_argument("--isa", default=DEFAULT_ISA, help=f"ISA of the kernel (default {DEFAULT_ISA})")
    p.add_argument("--count", type=positive_int,
                   help="blocks (batch kernels) or 32x32 output blocks (microkernels), at least 1")
    p.add_argument("--k", type=positive_int,
                   help="the K dimension: 1..64 (int8_block), 1..32 (bf16_block), a multiple of 64 "
                        "(int8_microkernel) or 32 (bf16_microkernel); any (arm_sme kernels)")
    p.add_argument("--m", type=positive_int, help="rows of C (arm_sme kernels)")
    p.add_argument("--n", type=positive_int, help="columns of C (arm_sme kernels)")
    add_config_options(p)  # --svl for the arm_sme kernels
    p.add_argument("-o", "--output", help="trace file to write (never overwritten without --force); required "
                                          "unless --run is given")
    p.add_argument("--force", action="store_true", help="overwrite the output file")
    p.add_argument("--run", action="store_true", help="simulate the kernel and check C against the reference "
                                                      "(PASS/FAIL)")
    p.add_argument("--max-steps", type=positive_int, metavar="N",
                   help="with --run: the most instructions a run (or each part) may execute "
                        "(default: the program's length plus a million)")
    from ..core import parallel

    parallel.add_options(p, "the kernel's output blocks (with --run)")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.set_defaults(func=cmd_kernel)


def cmd_kernel(args) -> int:
    from ..core.output import check_outputs

    isa_name = args.isa
    isa = get_isa(isa_name)
    if not isa.kernel_names:
        raise UsageError(f"ISA {isa_name} has no kernels")
    if args.name not in isa.kernel_names:
        raise UsageError(f"{isa_name} has no kernel '{args.name}' (its kernels: {', '.join(isa.kernel_names)})")
    in_parallel = args.workers is not None or args.cluster is not None
    if not args.run:
        if in_parallel:
            raise UsageError("--workers and --cluster say where --run simulates the kernel: give --run too")
        if args.max_steps is not None:
            raise UsageError("--max-steps limits the run: give --run too")
        if not args.output:
            raise UsageError("the following arguments are required: -o/--output (or --run to simulate the kernel)")
    if args.output:
        check_outputs({"-o": args.output}, force=args.force)  # before building: a large kernel takes a while
    # an ISA's kernels refuse, up front and in one line, a size or option they cannot be built with
    kernel = isa.build_kernel(args.name, count=args.count, K=args.k, M=args.m, N=args.n,
                              config=config_from_options(args, isa) or None)
    out = console(color=not args.no_color)
    if args.output:
        write_trace(kernel.trace(), args.output, force=args.force)
        out.print(f"wrote {args.output}: {kernel.description}, {len(kernel.lines)} lines, "
                  f"{kernel.macs:,} multiply-adds", markup=False)
    if not args.run:
        return EXIT_OK
    return _run(args, kernel, out, in_parallel)


def _run(args, kernel, out, in_parallel: bool) -> int:
    """Simulate ``kernel`` (in this process, or split on the pool the options open) and hold C to its
    expected bytes."""
    from ..core.kernel_parallel import contiguous, run_parts, run_whole

    trace = kernel.trace()  # the ISA and configuration the kernel's trace runs with
    address, expected = kernel.expected[0]
    output = contiguous(address, len(expected))
    limit = args.max_steps or 0
    if in_parallel:
        from dataclasses import replace

        from ..core.parallel import pool_from_options

        with pool_from_options(args) as pool:  # a malformed --cluster: one line, before anything runs
            parts = [replace(part, max_steps=limit) for part in kernel.parts(pool.workers)]
            where = f"{len(parts)} part{'s' * (len(parts) != 1)} on {pool.where}"
            got = run_parts(pool, trace.isa, trace.config, kernel.init, parts, output)
    else:
        where = "this process"
        got = run_whole(trace.isa, trace.config, kernel.init, kernel.lines, output, limit, source=kernel.name)
    if got == expected:
        out.print(f"[bold green]PASS[/bold green]: {kernel.description} ({where}): C is the reference's "
                  f"{len(expected):,} bytes")
        return EXIT_OK
    out.print(f"[bold red]FAIL[/bold red]: {kernel.description} ({where}): {first_difference(kernel, got, expected)}")
    return EXIT_DIFFERENT


_ELEMENTS = {"int32": "<i4", "fp32": "<f4", "uint32": "<u4", "int8": "i1", "uint8": "u1", "int16": "<i2",
             "uint16": "<u2", "bf16": "<u2", "fp16": "<u2"}


def first_difference(kernel, got: bytes, expected: bytes) -> str:
    """The first element of C (in memory order, as the C region's view types it) that differs."""
    import numpy as np

    address = kernel.expected[0][0]
    element = next((view.element for view in kernel.init.views if view.address == address), "uint8")
    dtype = np.dtype(_ELEMENTS.get(element, "u1"))
    mine, theirs = np.frombuffer(got, dtype=dtype), np.frombuffer(expected, dtype=dtype)
    wrong = np.flatnonzero(mine != theirs) if mine.size == theirs.size else np.array([0])
    index = int(wrong[0])
    differing = int(wrong.size)
    return (f"{differing:,} of {theirs.size:,} {element} elements of C differ; the first is element {index} "
            f"(address {address + index * dtype.itemsize:#x}): got {mine[index].item()!r}, "
            f"expected {theirs[index].item()!r}")
