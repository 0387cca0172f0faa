#!/usr/bin/python3
"""Sends an HTTP server what a broken or hostile client would, over raw sockets, and prints
what came back as one JSON object: malformed requests (seeded random bytes among them), a
huge header, bad ranges, paths that try to leave the recordings' folders, slow-loris
connections, wrong passwords. Bounded in count and in time (about 20 s).

usage: http_abuse.py PORT FILE_URL [--auth USER:PASSWORD] [--seed N]
  FILE_URL: the path of a file /recordings serves (for the ranges)
"""

import base64
import json
import random
import socket
import sys
import threading
import time

HOST = "127.0.0.1"


def exchange(port, data, timeout=8.0):
    """Sends data, reads until the server closes or has answered a head; returns the status
    (None when it closed without one) and the seconds it took."""
    started = time.monotonic()
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        try:
            s.sendall(data)
        except OSError:
            pass
        received = b""
        try:
            while b"\r\n\r\n" not in received and len(received) < 65536:
                chunk = s.recv(4096)
                if not chunk:
                    break
                received += chunk
        except OSError:
            pass
    status = None
    if received.startswith(b"HTTP/1.1 ") and len(received) >= 12:
        try:
            status = int(received[9:12])
        except ValueError:
            status = None
    return status, time.monotonic() - started


def get(port, path, headers=None):
    lines = [f"GET {path} HTTP/1.1", "Host: localhost", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return exchange(port, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


def slow_loris(port, results, index):
    """A request head sent one byte a second: the time until the server closes it."""
    started = time.monotonic()
    head = b"GET /status HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 40
    try:
        with socket.create_connection((HOST, port), timeout=30) as s:
            for byte in head:
                s.sendall(bytes([byte]))
                time.sleep(1.0)
                if time.monotonic() - started > 25:
                    break
    except OSError:
        pass
    results[index] = round(time.monotonic() - started, 2)


def main():
    port = int(sys.argv[1])
    file_url = sys.argv[2]
    auth = None
    seed = 1
    args = sys.argv[3:]
    while args:
        if args[0] == "--auth":
            auth = args[1]
            args = args[2:]
        elif args[0] == "--seed":
            seed = int(args[1])
            args = args[2:]
        else:
            sys.exit(f"unknown argument {args[0]}")
    good = {}
    if auth:
        good["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    report = {}

    loris = [None] * 3
    threads = [threading.Thread(target=slow_loris, args=(port, loris, i)) for i in range(len(loris))]
    for t in threads:
        t.start()

    rng = random.Random(seed)
    malformed = [
        b"GARBAGE\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET / HTTP/1.1\r\nNoColonHere\r\n\r\n",
        b"GET /\x00status HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST /events HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        b"POST /events HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n{",
        b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ]
    malformed += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 600))) for _ in range(40)]
    report["malformed"] = [exchange(port, data)[0] for data in malformed]

    report["huge_header"] = get(port, "/status", {"X-Big": "a" * 100_000, **good})[0]
    report["many_headers"] = get(port, "/status", {**{f"X-{i}": "b" for i in range(300)}, **good})[0]

    ranges = ["bytes=0-99", "bytes=-100", "bytes=99999999999-", "bytes=abc", "bytes=5-3", "bytes=-0",
              "bytes=0-0,5-10", "items=0-5", "bytes=" + "9" * 40 + "-"]
    report["ranges"] = {r: get(port, file_url, {"Range": r, **good})[0] for r in ranges}

    folder = file_url.rsplit("/", 1)[0]
    paths = [
        folder + "/..%2F..%2F..%2Fetc%2Fpasswd",
        folder + "/../../../etc/passwd",
        "/recordings/../../etc/passwd",
        folder + "/%2e%2e",
        folder + "/.",
        folder + "/secret.txt",
        "/recordings/elsewhere/" + file_url.rsplit("/", 1)[1],
        folder + "/" + file_url.rsplit("/", 1)[1] + "%00.txt",
        "/live/..%2F..%2Fetc%2Fpasswd",
        "/live/-1.m4s",
        "/live/99999999999999999999.m4s",
        "/live.m3u8?_HLS_msn=99999&_HLS_part=0",
        "/live.m3u8?_HLS_msn=-1",
    ]
    report["paths"] = {p: get(port, p, good)[0] for p in paths}

    if auth:
        user = auth.split(":", 1)[0]
        wrong = {}
        for i, credentials in enumerate([f"{user}:wrong", "nobody:" + auth.split(":", 1)[1], f"{user}:"]):
            header = {"Authorization": "Basic " + base64.b64encode(credentials.encode()).decode()}
            status, took = get(port, "/status", header)
            wrong[str(i)] = [status, round(took, 2)]
        report["wrong_passwords"] = wrong
        report["no_password"] = get(port, "/status")[0]
        report["malformed_auth"] = get(port, "/status", {"Authorization": "Basic !!!"})[0]

    for t in threads:
        t.join(timeout=40)
    report["slow_loris_closed_after"] = loris
    report["status_after"] = get(port, "/status", good)[0]
    print(json.dumps(report))


if __name__ == "__main__":
    main()
