"""The options the commands share: the common ones of a command that runs a program (PROGRAM, --init,
--function, --isa, --max-steps, --no-color, --engine), every ISA's configuration options (--cpu, --svl, ...), the
--show views, and the backends the help texts and --against name."""

from __future__ import annotations

from ..core.arguments import positive_int
from ..core.compiled import ENGINES
from ..core.errors import UsageError
from ..core.isa import DEFAULT_ISA, get_isa, registered_isas
from ..core.machine import DEFAULT_STEP_LIMIT


def add_common_options(p, *, program=True):
    """The options of a command that runs a program (``program``: also PROGRAM, --init, --function and the
    configuration options); what build_parser hands the commands and the ISAs' own commands as ``common``."""
    if program:
        p.add_argument("program", help="assembly file (.s), trace file (.json) or object file (ELF .o, "
                                       "with --function)")
        p.add_argument("--init", help="initial registers and memory (JSON: {\"regs\":..., \"memory\": [...]}; "
                                      "for --function also \"args\": [...])")
        p.add_argument("--function", metavar="NAME",
                       help="the function of an object file to run (its C++ or extern \"C\" name)")
        add_config_options(p)
    p.add_argument("--isa", default=DEFAULT_ISA, help=f"ISA of an assembly file (default {DEFAULT_ISA})")
    p.add_argument("--max-steps", type=positive_int, default=DEFAULT_STEP_LIMIT,
                   help="stop with an error after this many instructions (default %(default)s)")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.add_argument("--engine", choices=ENGINES, default=None,
                   help="what runs a plain run: compiled (the ISA's compiled loop where it has one, the Python "
                        "semantics for the rest) or python (the Python semantics only); default: $ISASIM_ENGINE, "
                        "else compiled. Stepping and recorded runs always use Python; the results are the same")


def config_options() -> dict[str, tuple[str, list]]:
    """Every registered ISA's configuration options: flag -> (configuration key, the ISAs that take it)."""
    options: dict[str, tuple[str, list]] = {}
    for name in registered_isas():
        for option in get_isa(name).config_options:
            options.setdefault(option.flag, (option.key, []))[1].append(name)
    return options


def config_dest(flag: str) -> str:
    return "config_" + flag.lstrip("-").replace("-", "_")


def add_config_options(parser) -> None:
    """Every registered ISA's configuration options (--cpu, --svl, ...) on ``parser``."""
    for flag, (_key, isas) in config_options().items():
        option = next(o for o in get_isa(isas[0]).config_options if o.flag == flag)
        parser.add_argument(flag, dest=config_dest(flag), metavar=option.metavar,
                            help=f"{' and '.join(isas)}: {option.help}")


def config_from_options(args, isa) -> dict:
    """The configuration keys set on the command line, each checked to be one ``isa`` (an Isa or its
    name) takes."""
    name = isa if isinstance(isa, str) else isa.name
    given = {}
    for flag, (key, isas) in config_options().items():
        value = getattr(args, config_dest(flag), None)
        if value is None:
            continue
        if name not in isas:
            raise UsageError(f"{flag} is an option of {' and '.join(isas)}, not of {name}")
        given[key] = value
    return given


def parse_show(specs: list[str], isa_name: str) -> dict[str, str]:
    """--show VIEW:TYPE choices as {array name: element type}; each ISA knows its views (x86_amx: tmmN:TYPE)."""
    types = {}
    for spec in specs or []:
        for item in spec.split(","):
            try:
                name, element = get_isa(isa_name).parse_show(item)
            except ValueError as error:
                raise UsageError(f"--show {item!r}: {error}") from None
            types[name] = element
    return types


def other_backends() -> str:
    """The backends beside the simulator, by ISA, for help texts ("x86_amx: silicon")."""
    from ..core.backends import BACKENDS

    for name in registered_isas():
        get_isa(name)  # importing an ISA registers its backends
    by_isa = {name: ", ".join(b.name for b in BACKENDS.values() if b.name != "sim" and b.serves(name))
              for name in registered_isas()}
    return "; ".join(f"{name}: {names or 'none yet (no independent executable reference)'}"
                     for name, names in by_isa.items())


def default_oracle(isa) -> str:
    """The backend ``diff`` compares the simulator with unless --against names one (x86_amx: silicon)."""
    oracle = isa.default_oracle
    if oracle is None:
        raise UsageError(f"{isa.name} has no default backend to compare with: give --against")
    return oracle

