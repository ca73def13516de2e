"""The ``gdbserver`` command: a program under isasim as a gdb remote target.

    isasim gdbserver PROGRAM [--init INIT.json] [--function NAME] [--svl N] [--cpu MODEL] (--stdio | --port PORT)

``--stdio`` speaks gdb's remote protocol on standard input and output, for
``gdb -ex 'target remote | isasim gdbserver --stdio kernels.o --function f --init f.json'``; ``--port`` listens
on 127.0.0.1 only (0: a free port, printed), serves one client and ends when it leaves.  The protocol and the
session are core/gdbserver.py.
"""

from __future__ import annotations

import os
import signal
import socket
import sys

from ..core.errors import EXIT_OK, IsasimError, UsageError
from ..core.isa import get_isa, registered_isas
from .loading import is_object_file, is_trace_file, load_program_and_init


def register(subparsers, common) -> None:
    p = subparsers.add_parser("gdbserver", help="serve a program to gdb (target remote) with tiles and ZA as registers")
    common(p)
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", action="store_true",
                       help="speak gdb's remote protocol on stdin/stdout (gdb: target remote | isasim gdbserver --stdio ...)")
    where.add_argument("--port", type=int, metavar="PORT",
                       help="listen on 127.0.0.1:PORT for one gdb (0: any free port, printed)")
    p.set_defaults(func=cmd_gdbserver)


def cmd_gdbserver(args) -> int:
    from ..core.debug_addresses import AddressMap, address_map
    from ..core.gdb_remote import RemoteChannel
    from ..core.gdbserver import DebugSession, serve
    from ..core.render import console
    from ..core.stepper import Stepper

    if args.port is not None and not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: a port is 0 to 65535")
    loaded = load_program_and_init(args)
    isa = get_isa(loaded.isa_name)
    target = isa.debug_target(loaded.config)
    if target is None:
        served = [name for name in registered_isas()
                  if get_isa(name).debug_target(get_isa(name).configure({})) is not None]
        raise UsageError(f"isasim gdbserver has no gdb architecture for {loaded.isa_name} (it serves "
                         f"{', '.join(served)})")
    addresses = AddressMap()
    if not is_trace_file(args.program) and is_object_file(args.program):
        addresses = address_map(args.program, isa.elf_machines[0], loaded.program.labels, loaded.init.views)
    stepper = Stepper(loaded.isa_name, loaded.config, loaded.program, loaded.init, out=console(color=False),
                      max_steps=args.max_steps)
    session = DebugSession(stepper, target, addresses)
    if args.stdio:
        # the protocol owns standard output: anything else printed goes to standard error
        protocol_out = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # gdb's Ctrl-C arrives as a packet, not as a signal
        serve(session, RemoteChannel(0, protocol_out))
        return EXIT_OK
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", args.port))
    except OSError as error:
        raise IsasimError(f"cannot listen on 127.0.0.1:{args.port}: {error.strerror}") from None
    listener.listen(1)
    port = listener.getsockname()[1]
    print(f"isasim gdbserver: {args.program} on {isa.config_title(loaded.config)}, listening on 127.0.0.1:{port} "
          f"for one gdb (target remote :{port})", flush=True)
    try:
        client, _ = listener.accept()
    except KeyboardInterrupt:
        return 130
    finally:
        listener.close()  # one client: nobody else can connect while it is served, or after
    with client:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        serve(session, RemoteChannel.over_socket(client))
    print("isasim gdbserver: the client has gone", flush=True)
    return EXIT_OK
