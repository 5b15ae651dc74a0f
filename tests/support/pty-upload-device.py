"""A traced device's side of the trace box's UART upload (reference section 3.1), on a
pseudo-terminal: it holds the master of a pty whose slave is the gateway's serial port, and
answers as a device on the other end of the cable does (see pty-upload-device.ts).

Lines of JSON on stdin:
  {"behave": {"answers": {"rate": hex|null, "ackLength": hex|null, "ackData": hex|null}, "trace": hex}}
      how to answer from now on (null: never), and trace bytes to send at once;
  {"line": "break"|"idle", "atMs": n}
      the state of the line as the gateway's port set it (a pty carries no break, see the .ts).
Lines of JSON on stdout:
  {"event": "ready", "path": slave}
  {"event": "break", "heldMs": n, "bitRate": bps}      the break released, after heldMs
  {"event": "length", "length": n, "bitRate": bps}      the 4-byte little-endian length read
  {"event": "data", "hex": ..., "bitRate": bps}         the data read, all of it
  {"event": "stray", "hex": ...}                        bytes read outside an upload
bitRate is the pty's output speed when the bytes came: what the gateway's port was set to,
read from the master (TCGETS2 on a pty master reads the slave's termios).
"""

import fcntl
import json
import os
import select
import struct
import sys
import tty

TCGETS2 = 0x802C542A  # _IOR('T', 0x2A, struct termios2): 44 bytes, c_ospeed at offset 40


def speed(fd: int) -> int:
    buf = bytearray(44)
    fcntl.ioctl(fd, TCGETS2, buf)
    return struct.unpack_from("I", buf, 40)[0]


def emit(event: dict) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def main() -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    emit({"event": "ready", "path": os.ttyname(slave)})
    answers = {"rate": None, "ackLength": None, "ackData": None}
    state = "idle"
    pending = b""
    length = 0
    data = b""
    break_at = None
    lines = b""
    while True:
        ready, _, _ = select.select([master, sys.stdin.buffer], [], [])
        if sys.stdin.buffer in ready:
            chunk = os.read(sys.stdin.fileno(), 65536)
            if not chunk:
                return
            lines += chunk
            while b"\n" in lines:
                line, lines = lines.split(b"\n", 1)
                command = json.loads(line)
                if "behave" in command:
                    answers = command["behave"]["answers"]
                    os.write(master, bytes.fromhex(command["behave"]["trace"]))
                elif command.get("line") == "break":
                    break_at = command["atMs"]
                elif command.get("line") == "idle" and break_at is not None:
                    held = command["atMs"] - break_at
                    break_at = None
                    # A break starts an upload over: what came before it is void.
                    pending, data, state = b"", b"", "length"
                    emit({"event": "break", "heldMs": held, "bitRate": speed(master)})
                    if answers["rate"] is None:
                        state = "idle"
                    else:
                        os.write(master, bytes.fromhex(answers["rate"]))
        if master in ready:
            try:
                pending += os.read(master, 65536)
            except OSError:
                # EIO: no one holds the slave open but us (the gateway closed its port).
                continue
            while pending:
                if state == "idle":
                    emit({"event": "stray", "hex": pending.hex()})
                    pending = b""
                elif state == "length":
                    if len(pending) < 4:
                        break
                    length = struct.unpack_from("<I", pending)[0]
                    pending = pending[4:]
                    # The acknowledgement first: it is due within 100 ms.
                    if answers["ackLength"] is not None:
                        os.write(master, bytes.fromhex(answers["ackLength"]))
                    emit({"event": "length", "length": length, "bitRate": speed(master)})
                    state = "data"
                else:
                    take = pending[: length - len(data)]
                    data += take
                    pending = pending[len(take) :]
                    if len(data) == length:
                        if answers["ackData"] is not None:
                            os.write(master, bytes.fromhex(answers["ackData"]))
                        emit({"event": "data", "hex": data.hex(), "bitRate": speed(master)})
                        state = "idle"


if __name__ == "__main__":
    main()
