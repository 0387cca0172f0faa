#!/usr/bin/python3
"""A UDP relay on loopback that loses and delays datagrams, standing in for a bad network:
the kernel here has no netem, so loss and delay have to come from user space.

usage: lossy_relay.py --listen 127.0.0.1:A --to 127.0.0.1:B [--loss 0.05] [--delay-ms 100]
                      [--seed N] [--seconds 30]

Datagrams sent to A go on to B; B's answers go back to whoever sent to A. SRT needs both
directions: the sender's data one way, the receiver's ACKs and NAKs the other, and losing
those is part of a bad network too. Each sender to A gets an upstream socket of its own, as
behind a NAT, so a reconnect from a new port reaches B as a new peer.

Every datagram, either way, is dropped with probability --loss (drawn from a generator seeded
with --seed, so a run can be repeated); every datagram not dropped is held for --delay-ms
before it is sent on, in arrival order. The relay ends after --seconds, or on SIGTERM or
SIGINT, and then prints its counts as one JSON line on standard output. It prints
"relaying A -> B" on standard error once A is bound.
"""

import argparse
import collections
import json
import random
import select
import signal
import socket
import sys
import time

LARGEST_DATAGRAM = 65535


def address(text):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return host, int(port)


def probability(text):
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a probability between 0 and 1")
    return value


class Stopped(Exception):
    """Raised from the signal handler so the main loop ends where it is and prints counts."""


def stop(signum, frame):
    raise Stopped()


class Relay:
    def __init__(self, listen, to, loss, delay, seed):
        self.to = to
        self.loss = loss
        self.delay = delay
        self.random = random.Random(seed)
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(listen)
        # upstream socket per sender to A, and the sender each upstream socket answers
        self.upstream = {}
        self.sender_of = {}
        # (due time, socket to send from, destination, datagram, direction), oldest first:
        # one fixed delay keeps due times in arrival order, so a queue is enough
        self.held = collections.deque()
        self.counts = {
            "forward": {"relayed": 0, "dropped": 0},
            "backward": {"relayed": 0, "dropped": 0},
        }

    def upstream_for(self, sender):
        sock = self.upstream.get(sender)
        if sock is None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind((self.front.getsockname()[0], 0))
            self.upstream[sender] = sock
            self.sender_of[sock] = sender
        return sock

    def take(self, datagram, through, destination, direction):
        if self.random.random() < self.loss:
            self.counts[direction]["dropped"] += 1
            return
        self.held.append((time.monotonic() + self.delay, through, destination, datagram, direction))

    def send_due(self, now):
        while self.held and self.held[0][0] <= now:
            _, through, destination, datagram, direction = self.held.popleft()
            try:
                through.sendto(datagram, destination)
                self.counts[direction]["relayed"] += 1
            except OSError:
                # nobody listening at the far end yet (ICMP port unreachable): on a real
                # network that datagram would be lost too
                self.counts[direction]["dropped"] += 1

    def run(self, deadline):
        while True:
            now = time.monotonic()
            if now >= deadline:
                return
            self.send_due(now)
            wait = deadline - now
            if self.held:
                wait = min(wait, max(0.0, self.held[0][0] - now))
            readable, _, _ = select.select([self.front, *self.upstream.values()], [], [], wait)
            for sock in readable:
                try:
                    datagram, source = sock.recvfrom(LARGEST_DATAGRAM)
                except OSError:
                    # an ICMP error from an earlier send surfaces on the next read; skip it
                    continue
                if sock is self.front:
                    self.take(datagram, self.upstream_for(source), self.to, "forward")
                else:
                    self.take(datagram, self.front, self.sender_of[sock], "backward")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", type=address, required=True, help="HOST:PORT senders send to")
    parser.add_argument("--to", type=address, required=True, help="HOST:PORT of the receiver")
    parser.add_argument("--loss", type=probability, default=0.0, help="probability each datagram is dropped")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="time each datagram is held")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=30.0, help="the relay's whole run time")
    options = parser.parse_args()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    relay = Relay(options.listen, options.to, options.loss, options.delay_ms / 1000.0, options.seed)
    listen = relay.front.getsockname()
    print(f"relaying {listen[0]}:{listen[1]} -> {options.to[0]}:{options.to[1]}", file=sys.stderr, flush=True)
    try:
        relay.run(time.monotonic() + options.seconds)
    except Stopped:
        pass
    finally:
        # the signal handler is reset first, so a second signal cannot cut the report short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(json.dumps(relay.counts), flush=True)


if __name__ == "__main__":
    main()
