#!/usr/bin/python3
"""A loopback MPEG-TS receiver for the publish family: takes UDP datagrams on 127.0.0.1:PORT
(straight from a sender, or relayed from SRT by srt-live-transmit), writes every byte to a
file, and with --arrivals notes when each video PES (one access unit) arrived: its PTS, and
time.monotonic_ns() (CLOCK_MONOTONIC, the clock of V4L2 buffer timestamps) at the datagram that
brought its first and its last TS packet. A PES ends where the next one of its PID starts, so
its last packet is known only then, but the time noted is that packet's own.

Prints "ready" once bound, and runs until SIGTERM or SIGINT, then writes what it has. Its
socket buffer is made large (SO_RCVBUFFORCE as root): a keyframe comes as a burst of a few
hundred datagrams, more than the default buffer holds, and a receiver that loses datagrams
would blame the sender.

  receiver.py PORT OUT.ts [--arrivals ARRIVALS.csv]
"""

import signal
import socket
import sys
import time

TS_PACKET = 188
RECEIVE_BUFFER = 32 * 1024 * 1024
# Linux's SO_RCVBUFFORCE (socket(7)), which Python's socket module does not name.
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


class Stop(Exception):
    pass


def stop(signum, frame):
    raise Stop()


def pes_pts(packet, start):
    """The PTS of a PES that starts at packet[start:], or None when it is not a video PES with
    one (stream_id 0xE0–0xEF)."""
    if packet[start:start + 3] != b"\x00\x00\x01" or not 0xE0 <= packet[start + 3] <= 0xEF:
        return None
    if not packet[start + 7] & 0x80:
        return None
    b = packet[start + 9:start + 14]
    if len(b) < 5:
        return None
    return (((b[0] >> 1) & 0x07) << 30) | (b[1] << 22) | ((b[2] >> 1) << 15) | (b[3] << 7) | (b[4] >> 1)


class Arrivals:
    """PTS → (first, last) arrival of each video PES, in arrival order."""

    def __init__(self):
        self.rows = []
        self.open = {}
        self.pending = b""

    def add(self, data, now):
        data = self.pending + data
        offset = 0
        while offset + TS_PACKET <= len(data):
            if data[offset] != 0x47:
                # Lost sync (a datagram lost or cut): find the next sync byte.
                offset += 1
                continue
            self.packet(data[offset:offset + TS_PACKET], now)
            offset += TS_PACKET
        self.pending = data[offset:]

    def packet(self, packet, now):
        pid = ((packet[1] & 0x1F) << 8) | packet[2]
        control = (packet[3] >> 4) & 0x03
        if pid == 0x1FFF or not control & 0x01:
            return
        start = 4 + (1 + packet[4] if control & 0x02 else 0)
        if start >= TS_PACKET:
            return
        if packet[1] & 0x40:
            pts = pes_pts(packet, start)
            if pts is not None:
                self.close(pid)
                self.open[pid] = [pts, now, now]
                return
        current = self.open.get(pid)
        if current is not None:
            current[2] = now

    def close(self, pid):
        current = self.open.pop(pid, None)
        if current is not None:
            self.rows.append(current)

    def write(self, path):
        for pid in list(self.open):
            self.close(pid)
        with open(path, "w") as out:
            out.write("pts,first_ns,last_ns\n")
            for pts, first, last in self.rows:
                out.write(f"{pts},{first},{last}\n")


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--arrivals"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    port, output = int(argv[1]), argv[2]
    arrivals = Arrivals() if len(argv) == 5 else None
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
    sock.bind(("127.0.0.1", port))
    received = 0
    with open(output, "wb") as out:
        print("ready", flush=True)
        try:
            while True:
                data = sock.recv(65536)
                now = time.monotonic_ns()
                out.write(data)
                received += len(data)
                if arrivals is not None:
                    arrivals.add(data, now)
        except Stop:
            pass
    if arrivals is not None:
        arrivals.write(argv[4])
    print(f"received {received} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
