#!/usr/bin/python3
"""A fake SCPI instrument for tests and benchmarks: a multimeter and a power supply in one.

It listens on TCP (--tcp PORT, 0 picks a free port; the port is written to --port-file) and, with
--serial PATH, also talks over a tty (one end of a socat pty pair), reopening it if it vanishes.

Instrument commands (terminated by --terminator, default "\\n"; a trailing "\\r" is ignored):
  *IDN?            WEIR,FAKE-<kind>,0,1.0
  *RST, *CLS       no reply
  *OPC?            1
  MEAS:VOLT?       the multimeter's reading, "+1.234500E+00" (FAKE:MEAS sets it)
  MEAS:CURR?       the supply's current limit, read back
  MEAS:ARR?        four readings: "1.0,2.0,3.0,4.0" scaled by the reading
  MEAS:STAT?       a structured status line: "STAT:OK;VOLT:+1.234500E+00;TEMP:+23.50"
  VOLT x / VOLT?   the supply's voltage setpoint
  CURR x / CURR?   the supply's current limit
  OUTP ON|OFF / OUTP?
  SYST:ERR?        the oldest queued error, or 0,"No error"
  anything else    no reply; -113,"Undefined header" is queued

Fault injection, by switch at start or by control command from any connection (N: how many of
the next queries; -1 for ever; 0 off):
  FAKE:STALL N     no reply at all
  FAKE:GARBAGE N   reply "#?!garbage" instead of the value
  FAKE:NOTERM N    reply 64 KiB that never reaches a terminator
  FAKE:DROP N      close the connection instead of replying
  FAKE:MEAS x      set the multimeter's reading
  FAKE:COUNT?      queries answered so far (all connections)
  FAKE:KICK        close every instrument connection now (the listener stays)
  FAKE:RECOVERED?  ms from the last KICK to the first query answered on a newer connection (-1: not yet)

A plan of faults by position (--plan "3:garbage,5:stall,8:drop"): the measurement queries (MEAS:*)
are numbered from 1 across connections, and query N gets the fault the plan names (stall, garbage,
noterm or drop). With --count, the reading is that number, so each sample says which query it was.
"""
import argparse
import os
import selectors
import socket
import sys
import time

NOTERM_BYTES = 65536


class Instrument:
    def __init__(self, args):
        self.kind = args.kind
        self.reading = args.reading
        self.volt = 0.0
        self.curr = 0.1
        self.output = False
        self.errors = []
        self.answered = 0
        self.kicked_at = None  # time.monotonic() of the last FAKE:KICK
        self.recovered_ms = -1.0
        self.faults = {"stall": args.stall, "garbage": args.garbage, "noterm": args.noterm, "drop": args.drop}
        self.plan = {}
        for item in filter(None, (args.plan or "").split(",")):
            number, _, fault = item.partition(":")
            if fault not in self.faults:
                raise SystemExit("--plan: '%s' is not stall, garbage, noterm or drop" % fault)
            self.plan[int(number)] = fault
        self.count_readings = args.count
        self.measured = 0  # MEAS:* queries so far, on instrument connections

    def take_fault(self):
        """The fault the next query gets, if any, counting it down."""
        for name, left in self.faults.items():
            if left != 0:
                if left > 0:
                    self.faults[name] = left - 1
                return name
        return None

    def handle(self, line, link):
        """Returns (reply or None, action): action is None, 'drop', 'kick' or 'noterm'."""
        line = line.strip()
        if not line:
            return None, None
        head, _, arg = line.partition(" ")
        head = head.upper()
        if head.startswith("FAKE:"):
            link.control = True  # a control line: faults never hit its own queries
            return self.control(head[5:], arg.strip())
        is_query = head.endswith("?")
        if is_query and not link.control:
            fault = self.take_fault()
            if head.startswith("MEAS:"):
                self.measured += 1
                fault = self.plan.get(self.measured, fault)
                if self.count_readings:
                    self.reading = float(self.measured)
            if fault == "stall":
                return None, None
            if fault == "drop":
                return None, "drop"
            if fault == "noterm":
                return None, "noterm"
            if fault == "garbage":
                return "#?!garbage", None
        reply = self.command(head, arg.strip())
        if is_query and reply is not None and not link.control:
            self.answered += 1
            if self.kicked_at is not None and link.opened > self.kicked_at and self.recovered_ms < 0:
                self.recovered_ms = (time.monotonic() - self.kicked_at) * 1000.0
        return reply, None

    def control(self, head, arg):
        if head in ("STALL", "GARBAGE", "NOTERM", "DROP"):
            self.faults[head.lower()] = int(arg or "-1")
            return None, None
        if head == "MEAS":
            self.reading = float(arg)
            return None, None
        if head == "COUNT?":
            return str(self.answered), None
        if head == "RECOVERED?":
            return "%.3f" % self.recovered_ms, None
        if head == "KICK":
            self.kicked_at = time.monotonic()
            self.recovered_ms = -1.0
            return None, "kick"
        self.errors.append('-113,"Undefined header"')
        return None, None

    def command(self, head, arg):
        if head == "*IDN?":
            return "WEIR,FAKE-%s,0,1.0" % self.kind.upper()
        if head in ("*RST", "*CLS"):
            if head == "*RST":
                self.volt, self.curr, self.output = 0.0, 0.1, False
            self.errors.clear()
            return None
        if head == "*OPC?":
            return "1"
        if head in ("MEAS:VOLT?", "MEAS:VOLT:DC?"):
            return "%+.6E" % self.reading
        if head == "MEAS:CURR?":
            return "%+.6E" % self.curr
        if head == "MEAS:ARR?":
            return ",".join("%.6g" % (self.reading * k) for k in (1, 2, 3, 4))
        if head == "MEAS:STAT?":
            return "STAT:OK;VOLT:%+.6E;TEMP:%+.2f" % (self.reading, 23.5)
        if head in ("VOLT", "CURR"):
            try:
                value = float(arg)
            except ValueError:
                self.errors.append('-224,"Illegal parameter value"')
                return None
            if head == "VOLT":
                self.volt = value
            else:
                self.curr = value
            return None
        if head == "VOLT?":
            return "%.4f" % self.volt
        if head == "CURR?":
            return "%.4f" % self.curr
        if head == "OUTP":
            self.output = arg.upper() in ("ON", "1")
            return None
        if head == "OUTP?":
            return "1" if self.output else "0"
        if head == "SYST:ERR?":
            return self.errors.pop(0) if self.errors else '0,"No error"'
        self.errors.append('-113,"Undefined header"')
        return None


class Link:
    """One instrument connection: a socket or a tty fd, with its input buffer."""

    def __init__(self, fd, sock=None):
        self.fd = fd
        self.sock = sock
        self.inbuf = b""
        self.control = False
        self.opened = time.monotonic()

    def send(self, data):
        view = memoryview(data)
        deadline = time.monotonic() + 5
        while view and time.monotonic() < deadline:
            try:
                n = self.sock.send(view) if self.sock else os.write(self.fd, view)
                view = view[n:]
            except BlockingIOError:
                time.sleep(0.001)

    def close(self):
        if self.sock:
            self.sock.close()
        else:
            os.close(self.fd)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tcp", type=int, default=0, help="TCP port to listen on (0: a free one)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port-file", help="write the TCP port here once listening")
    p.add_argument("--serial", help="also serve this tty path (one end of a socat pty pair)")
    p.add_argument("--kind", default="dmm", help="what *IDN? says: dmm, psu, ...")
    p.add_argument("--reading", type=float, default=1.2345, help="the multimeter's reading")
    p.add_argument("--terminator", default="\\n", help='reply terminator, e.g. "\\r\\n"')
    for name in ("stall", "garbage", "noterm", "drop"):
        p.add_argument("--" + name, type=int, default=0, metavar="N", help="fault for the next N queries (-1: all)")
    p.add_argument("--plan", help='faults by measurement query number: "3:garbage,5:stall"')
    p.add_argument("--count", action="store_true", help="the reading is the measurement query's number")
    args = p.parse_args()
    term = args.terminator.encode().decode("unicode_escape").encode()
    inst = Instrument(args)
    sel = selectors.DefaultSelector()

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.host, args.tcp))
    listener.listen(16)
    listener.setblocking(False)
    sel.register(listener, selectors.EVENT_READ, None)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % listener.getsockname()[1])
        os.rename(tmp, args.port_file)

    links = []
    serial = [None]

    def open_serial():
        try:
            fd = os.open(args.serial, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            return
        link = Link(fd)
        serial[0] = link
        links.append(link)
        sel.register(fd, selectors.EVENT_READ, link)

    def drop(link):
        sel.unregister(link.sock if link.sock else link.fd)
        link.close()
        links.remove(link)
        if link is serial[0]:
            serial[0] = None

    next_serial_try = 0.0
    while True:
        if args.serial and serial[0] is None and time.monotonic() >= next_serial_try:
            open_serial()
            next_serial_try = time.monotonic() + 0.1
        for key, _ in sel.select(timeout=0.1):
            if key.data is None:
                try:
                    conn, _ = listener.accept()
                except BlockingIOError:
                    continue
                conn.setblocking(False)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                link = Link(conn.fileno(), conn)
                links.append(link)
                sel.register(conn, selectors.EVENT_READ, link)
                continue
            link = key.data
            try:
                data = link.sock.recv(65536) if link.sock else os.read(link.fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                drop(link)
                continue
            link.inbuf += data
            while b"\n" in link.inbuf and link in links:
                line, link.inbuf = link.inbuf.split(b"\n", 1)
                reply, action = inst.handle(line.decode(errors="replace").rstrip("\r"), link)
                if action == "drop":
                    drop(link)
                elif action == "kick":
                    for other in [l for l in links if l.sock is not None and l is not link]:
                        drop(other)
                elif action == "noterm":
                    link.send(b"x" * NOTERM_BYTES)
                elif reply is not None:
                    link.send(reply.encode() + term)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
