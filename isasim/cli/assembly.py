"""The commands between text and bytes: ``asm`` (a listing of an assembly file, or of a compiled function)
and ``disasm`` (bytes as instructions, going on past what cannot be decoded, as objdump does).

    isasim asm PROGRAM [--function NAME] [--hex]
    isasim disasm HEX           (e.g. "c4e2705e c2" or a file with --file)
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core import arguments
from ..core.errors import EXIT_OK, IsasimError, UsageError
from ..core.isa import DEFAULT_ISA, get_isa
from .loading import is_object_file, load_program_and_init, read_text


def register(subparsers) -> None:
    """Add asm and disasm to the isasim command."""
    p = subparsers.add_parser("asm", help="assemble and print a listing (or list a compiled function)")
    p.add_argument("program", help="assembly file (.s), or object file (ELF .o, with --function)")
    p.add_argument("--function", metavar="NAME", help="the function of an object file to list")
    p.add_argument("--isa", default=DEFAULT_ISA, help=f"ISA of the assembly file (default {DEFAULT_ISA})")
    p.add_argument("--hex", action="store_true", help="print only the bytes")
    p.set_defaults(func=cmd_asm)

    p = subparsers.add_parser("disasm", help="disassemble bytes")
    p.add_argument("hex", nargs="*", help="bytes in hex")
    p.add_argument("--file", help="a raw binary file instead")
    p.add_argument("--isa", default=DEFAULT_ISA, help=f"ISA of the bytes (default {DEFAULT_ISA})")
    p.add_argument("--base", type=arguments.address, default=None,
                   help="address of the first byte (0 to 2^64-1; default the ISA's code base)")
    p.set_defaults(func=cmd_disasm)


def cmd_asm(args) -> int:
    if is_object_file(args.program) or args.function is not None:
        # a compiled function's listing: loaded as run loads it (no init: its addresses are the loader's)
        args.init = None
        program = load_program_and_init(args).program
    else:
        program = get_isa(args.isa).assemble(read_text(args.program), source=args.program)
    if args.hex:
        print(program.code.hex())
    else:
        print(program.listing())
    return EXIT_OK


def cmd_disasm(args) -> int:
    isa = get_isa(args.isa)
    if args.file:
        try:
            code = Path(args.file).read_bytes()
        except OSError as error:
            raise IsasimError(f"cannot read ({error.strerror})", source=args.file) from None
    else:
        text = "".join(args.hex or []).replace(" ", "").replace(",", "")
        text = re.sub(r"0x", "", text)
        if not text or not re.fullmatch(r"(?:[0-9a-fA-F]{2})+", text):
            raise UsageError("disasm needs bytes as hex digits, e.g. 'c4e2695ec1' (or --file BINARY)")
        code = bytes.fromhex(text)
    base = isa.code_base if args.base is None else args.base
    # An address is 64 bits: a negative base or one past 2^64 is no address, and code that would
    # run past 2^64 has no honest addresses either (the CPU would wrap to 0, objdump would not).
    if not 0 <= base < 1 << 64:
        shown = f"{base:#x}" if base >= 0 else f"-{-base:#x}"
        raise UsageError(f"--base {shown} is not a 64-bit address (0 to 0xffffffffffffffff)")
    if base + len(code) > 1 << 64:
        raise UsageError(f"--base {base:#x}: the {len(code)} bytes would run past the top of the 64-bit address "
                         f"space (the last byte may start at most at 0xffffffffffffffff)")
    from ..core.errors import DecodeError

    undecoded = []
    # Like objdump, go on past bytes isasim cannot decode; the exit status still says they were there.
    for address, encoding, text, note, decoded in isa.listing(code, base):
        comment = f"    # {note}" if note else ""
        print(f"{address:#x}:  {encoding.hex(' '):<30} {text}{comment}")
        if not decoded:
            undecoded.append((address, note))
    if undecoded:
        address, note = undecoded[0]
        raise DecodeError(f"cannot decode {len(undecoded)} of the {len(code)} bytes' instructions "
                          f"(the first at {address:#x}: {note})")
    return EXIT_OK

