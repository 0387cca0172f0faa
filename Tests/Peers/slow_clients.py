#!/usr/bin/env python3
"""Many clients that send a request head one byte every two seconds (slow-loris), and beside
them a well-behaved client whose answers are timed. Bounded in count and in time.

usage: slow_clients.py PORT COUNT SECONDS [--auth USER:PASSWORD]
Prints JSON: how many slow connections were open when the good requests were made, and each
good request's status and seconds.
"""

import base64
import json
import socket
import sys
import threading
import time

HOST = "127.0.0.1"


def main():
    port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    auth = None
    if len(sys.argv) > 5 and sys.argv[4] == "--auth":
        auth = base64.b64encode(sys.argv[5].encode()).decode()
    head = b"GET /status HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 200
    sockets = []
    for _ in range(count):
        try:
            s = socket.create_connection((HOST, port), timeout=5)
            s.setblocking(False)
            sockets.append(s)
        except OSError:
            break
    opened = len(sockets)
    stop = threading.Event()

    def trickle():
        sent = 0
        while not stop.is_set() and sent < len(head):
            for s in sockets:
                try:
                    s.send(head[sent:sent + 1])
                except OSError:
                    pass
            sent += 1
            stop.wait(2.0)

    trickler = threading.Thread(target=trickle)
    trickler.start()
    time.sleep(1.0)
    good = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        request = "GET /status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        if auth:
            request += "Authorization: Basic " + auth + "\r\n"
        started = time.monotonic()
        status = None
        try:
            with socket.create_connection((HOST, port), timeout=10) as s:
                s.sendall((request + "\r\n").encode())
                first = s.recv(64)
                if first.startswith(b"HTTP/1.1 "):
                    status = int(first[9:12])
        except OSError:
            pass
        good.append([status, round(time.monotonic() - started, 3)])
        time.sleep(0.5)
    still_open = 0
    for s in sockets:
        try:
            still_open += 1 if s.recv(1) != b"" else 0
        except BlockingIOError:
            still_open += 1
        except OSError:
            pass
    stop.set()
    trickler.join()
    for s in sockets:
        s.close()
    print(json.dumps({"opened": opened, "still_open": still_open, "good": good}))


if __name__ == "__main__":
    main()
