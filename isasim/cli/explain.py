"""The ``explain`` command.

    isasim explain INSTRUCTION [--isa ISA] [--seed S] [--init FILE] [--svg FILE] [--html FILE] [--force]
                               [--width W] [--no-color] [the ISA explainer's own options]
    isasim explain FILE.o --function NAME --at LOC [the same options]

INSTRUCTION is assembly text (quoted) or the bytes of one instruction in hex, with
spaces or not; or an object file, whose function NAME's instruction LOC (an index, a label
or an address, as the stepper's ``break`` takes it) is explained from its bytes.  The options only one ISA understands (x86_amx: ``--m``, ``--n``,
``--shape``, ``--start-row``, ``--cpu``) are declared by that ISA's explainer
(``OPTIONS``, see :class:`isasim.core.explain.Explainer`); this module adds them to the
parser and hands their values to the explainer by name.  The ISAs' configuration options
(arm_sme: ``--svl``, ``--features``) are taken as ``run`` takes them and reach the explainer
in ``ExplainOptions.config``.  ``isasim.cli.build_parser`` adds the
command with ``register(sub, common)``.  It replaces no file it did not write without
``--force`` (see :mod:`isasim.core.output`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.errors import IsasimError
from ..core.explain import (
    EXPLAINERS, ExplainError, ExplainOptions, explainer, print_explanation, render_html, render_svg,
    split_instruction_argument,
)
from ..core.isa import DEFAULT_ISA
from ..core.output import check_outputs, write_output
from ..core.render import console
from .loading import is_object_file, object_isa
from .options import config_dest, config_from_options, config_options


def _load_init(path: str):
    from ..core.trace import load_json, parse_init

    data = load_json(path)
    try:
        return parse_init(data.get("init", data) if isinstance(data, dict) and "format" in data else data)
    except IsasimError as error:
        raise error.located(path)


def cmd_explain(args) -> int:
    # refuse an output that must not be written before printing anything (--html prog.s must not eat prog.s)
    check_outputs({"--svg": args.svg, "--html": args.html}, force=args.force,
                  inputs=(args.init, *(word for word in args.instruction if Path(word).is_file())))
    isa = getattr(args, "isa", None) or DEFAULT_ISA
    if len(args.instruction) == 1 and is_object_file(args.instruction[0]):
        isa = object_isa(args.instruction[0], isa)  # an object file's ISA is its ELF header's
    compiled = _compiled_instruction(args, isa)
    if compiled is not None:
        heading, text, code = compiled
    else:
        heading, (text, code) = None, split_instruction_argument(args.instruction, force_hex=args.hex)
    module = explainer(isa)
    own = {option.dest for option in module.OPTIONS}
    for option in _isa_options():
        if option.dest not in own and getattr(args, option.dest, None) is not None:
            raise ExplainError(f"{option.flag} is not an explain option of ISA {isa}")
    options = ExplainOptions(
        seed=args.seed, init=_load_init(args.init) if args.init else None, init_source=args.init,
        max_steps=getattr(args, "max_steps", None) or 10_000,
        isa_options={dest: getattr(args, dest, None) for dest in sorted(own)},
        # the same configuration options `run` takes (arm_sme's --svl), refused for an ISA without them
        config=config_from_options(args, isa),  # by name: an explainer need not be a whole ISA
    )
    expl = module.explain(text, code, options)
    out = console(color=not args.no_color, width=args.width)
    if heading is not None:
        out.print(heading, markup=False, highlight=False, soft_wrap=True)  # one line, however long the path
    print_explanation(expl, out, plain=args.no_color)
    if args.svg:
        if expl.figure is None:
            raise ExplainError("this instruction has no picture to draw")
        write_output(args.svg, render_svg(expl.figure), force=args.force)
        out.print(f"wrote {args.svg}")
    if args.html:
        write_output(args.html, render_html(expl), force=args.force)
        out.print(f"wrote {args.html}")
    return 0


def _compiled_instruction(args, isa_name: str) -> tuple[str, None, bytes] | None:
    """For ``explain FILE.o --function NAME --at LOC``: a heading naming the instruction, and its bytes
    as the object file holds them (the ISA's ``load_object`` reads the function, as ``run`` does; LOC is
    an index, a label or an address, as the stepper's ``break`` takes it).  None for an instruction given
    as text or hex."""
    from ..core.isa import get_isa
    from ..core.stepper import locate_instruction
    from ..core.trace import Init

    words = args.instruction
    obj = len(words) == 1 and is_object_file(words[0])
    if not obj:
        if args.function is not None or args.at is not None:
            named = f"{words[0]} is not an ELF object file (it does not start with the ELF magic); " \
                if len(words) == 1 and Path(words[0]).is_file() else ""
            raise ExplainError(f"{named}--function and --at name an instruction of an object file: isasim explain "
                               f"FILE.o --function NAME --at LOC")
        return None
    isa = get_isa(isa_name)
    if not isa.elf_machines:
        raise ExplainError(f"{words[0]} is an ELF object file, and isasim cannot load one for {isa_name}")
    if args.function is None:
        raise ExplainError(f"{words[0]} is an ELF object file: name the function with --function NAME and the "
                           "instruction with --at LOC")
    program, _init = isa.load_object(words[0], args.function, Init())
    count = len(program.instructions)
    if args.at is None:
        last = program.instructions[-1].address
        raise ExplainError(f"name the instruction of {args.function} to explain with --at: an index (0 to "
                           f"{count - 1}) or an address ({program.instructions[0].address:#x} to {last:#x})")
    try:
        ins = locate_instruction(program, args.at)
    except ValueError as error:
        raise ExplainError(f"--at {args.at}: {error}") from None
    if ins.encoding is None:
        raise ExplainError(f"--at {args.at}: the instruction has no bytes to explain")
    heading = f"{words[0]}: {args.function} #{ins.index} at {ins.address:#x}: {ins.text}"
    if getattr(ins.form, "group", None) == "builtin":  # arm_sme's memset, __arm_tpidr2_save ...: by name, not UDF
        return heading, ins.text, None
    return heading, None, bytes(ins.encoding)


def _isa_options():
    """The explain options every ISA's explainer declares, each flag once (the first declaration's help)."""
    seen = {}
    for isa in EXPLAINERS:
        for option in explainer(isa).OPTIONS:
            seen.setdefault(option.flag, option)
    return list(seen.values())


def _add_config_options(parser) -> None:
    """The ISAs' configuration options (arm_sme's --svl, --features), as `run` has them, except a flag an
    explainer declares itself: x86_amx's explain --cpu stays its explainer's option, so its output is unchanged."""
    from ..core.isa import get_isa

    declared = set(parser._option_string_actions)  # argparse keeps no public list of the flags it has
    for flag, (_key, isas) in config_options().items():
        if flag in declared:
            continue
        option = next(o for o in get_isa(isas[0]).config_options if o.flag == flag)
        parser.add_argument(flag, dest=config_dest(flag), metavar=option.metavar,
                            help=f"{' and '.join(isas)}: {option.help}")


def register(subparsers, common) -> None:
    """Add ``explain`` to the ``isasim`` command (``common`` adds the options every command has, as
    isasim.cli.options.add_common_options does)."""
    from ..core.arguments import non_negative_int, positive_int

    value_types = {"text": str, "count": non_negative_int}
    p = subparsers.add_parser("explain", help="explain one instruction: encoding, operation, faults, a worked example")
    p.add_argument("instruction", nargs="*", metavar="INSTRUCTION",
                   help="assembly text (quote it) or the instruction's bytes in hex")
    common(p, program=False)
    p.add_argument("--hex", action="store_true", help="read INSTRUCTION as hex bytes")
    p.add_argument("--function", metavar="NAME",
                   help="INSTRUCTION is an object file (ELF .o): explain an instruction of this function (with --at)")
    p.add_argument("--at", metavar="LOC", help="with --function: the instruction, by index (3), label or address (0x...)")
    for option in _isa_options():
        try:
            p.add_argument(option.flag, dest=option.dest, type=value_types[option.value], metavar=option.metavar,
                           help=option.help)
        except argparse.ArgumentError:  # common() gives every command this option already (an ISA's --cpu)
            pass
    _add_config_options(p)
    p.add_argument("--seed", type=non_negative_int, default=1,
                   help="seed of the generated example data, 0 or more (default 1)")
    init_help = "; ".join(h for h in (explainer(isa).INIT_HELP for isa in EXPLAINERS) if h)
    p.add_argument("--init", help="example data: an init file (regs, memory)" + (f"; {init_help}" if init_help else ""))
    p.add_argument("--svg", metavar="FILE", help="also draw the picture as a self-contained SVG")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page (text and picture)")
    p.add_argument("--width", type=positive_int, default=None,
                   help="terminal width to lay out for, in columns (default: the terminal's)")
    p.add_argument("--force", action="store_true", help="overwrite the --svg or --html file if it exists")
    p.set_defaults(func=cmd_explain)
