"""The GDB remote serial protocol's framing: packets in and out over a byte stream (a pipe or a socket).

A packet is ``$data#cc``: ``cc`` the two hex digits of the sum of data's bytes modulo 256.  Each side
acknowledges a packet with ``+`` (or asks for it again with ``-``) until gdb asks for QStartNoAckMode.  In
data, ``}`` escapes the next byte (XOR 0x20): binary packets (X, qXfer replies) escape ``$``, ``#``, ``}``
and ``*``.  A lone 0x03 byte outside a packet is gdb's interrupt (Ctrl-C).  (gdb's manual, "Remote
Protocol", "Overview".)

Nothing here knows what a packet means: :class:`RemoteChannel` yields packets as bytes and sends replies;
a packet whose checksum is wrong is answered ``-`` and dropped (gdb sends it again), and anything between
packets that is not an acknowledgement or an interrupt is skipped, so no input stops the channel.
"""

from __future__ import annotations

import os
import select
import socket

INTERRUPT = 0x03
ESCAPE = ord("}")
MAX_PACKET = 1 << 20  # a packet longer than this is not gdb's: it is dropped unread (answered '-')
_MUST_ESCAPE = frozenset(b"$#}*")


def checksum(data: bytes) -> int:
    return sum(data) & 0xFF


def escape(data: bytes) -> bytes:
    out = bytearray()
    for byte in data:
        if byte in _MUST_ESCAPE:
            out += bytes((ESCAPE, byte ^ 0x20))
        else:
            out.append(byte)
    return bytes(out)


def unescape(data: bytes) -> bytes:
    if ESCAPE not in data:
        return data
    out = bytearray()
    escaped = False
    for byte in data:
        if escaped:
            out.append(byte ^ 0x20)
            escaped = False
        elif byte == ESCAPE:
            escaped = True
        else:
            out.append(byte)
    return bytes(out)


def frame(data: bytes) -> bytes:
    body = escape(data)
    return b"$" + body + b"#" + f"{checksum(body):02x}".encode()


class Closed(Exception):
    """The client went away (end of input, or the connection was reset)."""


class RemoteChannel:
    """Packets over a pair of file descriptors (stdin/stdout) or one socket."""

    def __init__(self, read_fd: int, write_fd: int, sock: socket.socket | None = None):
        self.read_fd, self.write_fd, self.sock = read_fd, write_fd, sock
        self.buffer = bytearray()
        self.acknowledging = True  # until QStartNoAckMode
        self.interrupted = False  # a 0x03 arrived outside a packet and nobody has taken it yet
        self.last_sent = b""
        self.log = None  # a callable taking (direction, bytes), for --debug-protocol

    @classmethod
    def over_socket(cls, sock: socket.socket) -> "RemoteChannel":
        return cls(sock.fileno(), sock.fileno(), sock)

    # ---- bytes ------------------------------------------------------------------------------------
    def _fill(self, timeout: float | None) -> bool:
        """Read what has arrived into the buffer (waiting up to ``timeout`` seconds; None: until some does);
        False if nothing came in time.  Closed at the end of input."""
        ready, _, _ = select.select([self.read_fd], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = self.sock.recv(65536) if self.sock is not None else os.read(self.read_fd, 65536)
        except (ConnectionResetError, BrokenPipeError, OSError):
            raise Closed() from None
        if not chunk:
            raise Closed()
        if self.log:
            self.log("<-", chunk)
        self.buffer += chunk
        return True

    def _write(self, data: bytes) -> None:
        if self.log:
            self.log("->", data)
        try:
            if self.sock is not None:
                self.sock.sendall(data)
            else:
                view = memoryview(data)
                while view:
                    view = view[os.write(self.write_fd, view):]
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise Closed() from None

    # ---- packets ----------------------------------------------------------------------------------
    def send(self, data: bytes | str) -> None:
        if isinstance(data, str):
            data = data.encode("latin-1")
        self.last_sent = frame(data)
        self._write(self.last_sent)

    def poll_interrupt(self) -> bool:
        """Whether gdb has sent an interrupt (0x03) since the last call, without waiting."""
        if not self.interrupted:
            while self._fill(0):
                pass
            self._take_loose_bytes()
        found, self.interrupted = self.interrupted, False
        return found

    def _take_loose_bytes(self) -> None:
        """Consume acknowledgements and interrupts before the next packet (and any noise)."""
        while self.buffer and self.buffer[0] != ord("$"):
            byte = self.buffer.pop(0)
            if byte == INTERRUPT:
                self.interrupted = True
            elif byte == ord("-") and self.last_sent:
                self._write(self.last_sent)  # gdb asks for the last reply again

    def _drop_resent(self, raw: bytes) -> None:
        """Drop copies of the packet just read that are already waiting: gdb sends a packet again when our
        '+' is late (a slow start), and it sends the next one only after it has our reply, so a copy that is
        here before we replied is the same request, not a second one."""
        while self._fill(0):
            pass
        while self.buffer.startswith(raw):
            del self.buffer[:len(raw)]

    def receive(self) -> bytes:
        """The next packet's data (unescaped), waiting for it; Closed at the end of input."""
        while True:
            self._take_loose_bytes()
            if self.buffer:
                end = self.buffer.find(b"#")
                if end >= 0 and len(self.buffer) >= end + 3:
                    body = bytes(self.buffer[1:end])
                    given = bytes(self.buffer[end + 1:end + 3])
                    del self.buffer[:end + 3]
                    if b"$" in body:  # a packet cut short by the start of another: drop the broken part
                        self.buffer[0:0] = body[body.rindex(b"$"):] + b"#" + given
                        continue
                    try:
                        good = int(given, 16) == checksum(body)
                    except ValueError:
                        good = False
                    if not good and self.acknowledging:
                        self._write(b"-")
                        continue
                    if self.acknowledging:
                        self._drop_resent(b"$" + body + b"#" + given)
                        self._write(b"+")
                    return unescape(body)
                if len(self.buffer) > MAX_PACKET:
                    del self.buffer[:]
                    if self.acknowledging:
                        self._write(b"-")
                    continue
            self._fill(None)
