"""What a command's PROGRAM names, loaded: an assembly file (with --init for its initial state), a trace
file, or a function of an object file (ELF, with --function), with the configuration the options set."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import IsasimError, TraceFormatError, UsageError
from ..core.isa import get_isa, registered_isas
from ..core.machine import Machine
from ..core.program import Program
from ..core.trace import Init, Trace, load_json, parse_expect, parse_init, read_trace
from .options import config_from_options


def read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise IsasimError("no such file", source=path) from None
    except IsADirectoryError:
        raise IsasimError("is a directory, not a file", source=path) from None
    except UnicodeDecodeError:
        raise IsasimError("not a UTF-8 text file", source=path) from None
    except OSError as error:
        raise IsasimError(f"cannot read ({error.strerror})", source=path) from None


def is_trace_file(path: str) -> bool:
    return path.endswith(".json")


ELF_MAGIC = b"\x7fELF"


def is_object_file(path: str) -> bool:
    """Whether ``path`` starts with the ELF magic (a compiler's .o or a linked program)."""
    try:
        with open(path, "rb") as file:
            return file.read(4) == ELF_MAGIC
    except OSError:  # read_text says what is wrong with it
        return False


def object_isa(path: str, given: str) -> str:
    """The ISA of the ELF file at ``path``, from its header's e_machine (EM_X86_64: x86_amx, EM_AARCH64:
    arm_sme): the ISA whose ``elf_machines`` holds it.  ``given`` (--isa) stands where it is not the
    default and names another ISA, or where no ISA loads that machine (its loader then says what the file
    is); --isa naming the ISA the header names, or left out, is the header's."""
    from ..core.isa import DEFAULT_ISA

    try:
        with open(path, "rb") as file:
            header = file.read(20)
    except OSError:
        return given
    if len(header) < 20 or header[5] not in (1, 2):
        return given
    machine = int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")
    found = next((name for name in registered_isas() if machine in get_isa(name).elf_machines), None)
    if found is None or (given != DEFAULT_ISA and given != found):
        return given
    return found


@dataclass(frozen=True)
class Loaded:
    """What a command's PROGRAM (and --init) load into: the ISA, its configuration, the program, its initial
    state, the trace PROGRAM is (None for assembly or an object file), and the init file's expectations
    with their producer (None where it has none; `run` checks them)."""

    isa_name: str
    config: dict
    program: Program
    init: Init
    trace: Trace | None
    expect: tuple[dict, str] | None


def load_program_and_init(args) -> Loaded:
    """PROGRAM is assembly (with --init for the initial state), a trace file, or an object file (ELF)
    whose function --function names, loaded by the ISA's ``load_object`` hook."""
    trace = None
    expect = None  # what an init file says the run must end with (its "expect"), checked by `run`
    function = getattr(args, "function", None)
    obj = not is_trace_file(args.program) and is_object_file(args.program)
    if function is not None and not obj:
        raise UsageError(f"--function names a function of an object file, and {args.program} is "
                         f"{'a trace' if is_trace_file(args.program) else 'not an ELF object file'}")
    if obj:
        args.isa = object_isa(args.program, args.isa)  # the ELF header says which ISA, not --isa
        isa = get_isa(args.isa)
        if not isa.elf_machines:
            with_hook = [name for name in registered_isas() if get_isa(name).elf_machines]
            raise UsageError(f"{args.program} is an ELF object file, and isasim cannot load one for {args.isa} "
                             f"(it can for: {', '.join(with_hook) or 'no ISA'})")
        if function is None:
            raise UsageError(f"{args.program} is an ELF object file: name the function to run with --function NAME")
    if is_trace_file(args.program):
        trace = read_trace(args.program)
        config = dict(trace.config)
        text, source, init = "\n".join(trace.program), f"{args.program}:program", trace.init
        isa_name = trace.isa
    else:
        text, source = ("", args.program) if obj else (read_text(args.program), args.program)
        isa_name, config, init = args.isa, {}, Init()
        if args.init:
            data = load_json(args.init)
            try:
                init = parse_init(data.get("init", data) if isinstance(data, dict) and "format" in data else data)
            except IsasimError as error:
                raise error.located(args.init)
            if isinstance(data, dict) and isinstance(data.get("config"), dict):
                config.update(data["config"])
            expect = init_expectations(data, args.init)
    state_source = args.program if trace is not None else (args.init or args.program)
    isa = get_isa(isa_name)
    given = config_from_options(args, isa)
    config.update(given)
    try:
        config = isa.configure(config)
    except IsasimError as error:
        raise error if given else error.located(state_source)
    if obj:
        program, init = isa.load_object(args.program, function, init)
    else:
        if init.args:
            raise IsasimError("init.args: arguments are for a function of an object file (--function); "
                              "give an assembly program its registers in init.regs", source=state_source)
        program = isa.assemble(text, source=source)
    isa.check_program(program, config)  # what the configuration rules out is refused before anything runs
    try:  # every register, region and array the file names must exist before anything runs or prints
        Machine(isa_name, config).load_init(program, init)
    except IsasimError as error:
        raise error.located(state_source)
    return Loaded(isa_name, config, program, init, trace, expect)


def init_expectations(data, source: str) -> tuple[dict, str] | None:
    """An init file's ``"expect"`` (the format of a trace's) and ``"producer"`` (who worked the expectations
    out), or None where it has none: `run` then checks the end of the run as it checks a trace's."""
    if not isinstance(data, dict) or data.get("expect") is None:
        return None
    producer = data.get("producer", "")
    try:
        if not isinstance(producer, str):
            raise TraceFormatError("producer: must be a string (who worked the expectations out)")
        return parse_expect(data["expect"]), producer
    except IsasimError as error:
        raise error.located(source)

