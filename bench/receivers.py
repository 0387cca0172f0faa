"""The loopback receivers the publish family sends to, each a process of its own so its CPU is
never counted as the sender's: an SRT listener (srt-live-transmit) writing what it gets to a
file or relaying it to a UDP port, an MPEG-TS receiver on a UDP port (receiver.py), and nginx
with its RTMP module, started with a configuration of the bench's own that records every
stream to an FLV file.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from common import ToolFailed, tail

RECEIVER = Path(__file__).resolve().parent / "receiver.py"
NGINX_RTMP_MODULE = Path("/usr/lib/nginx/modules/ngx_rtmp_module.so")
# How long a receiver may take to bind its port.
START_SECONDS = 10


def free_port(kind):
    """A port on 127.0.0.1 nobody holds now ("udp" or "tcp"); the receiver binds it next."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bound(port, kind):
    """Whether something is bound to `port` (UDP) or listens on it (TCP), from /proc/net."""
    for table in (f"/proc/net/{kind}", f"/proc/net/{kind}6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port and (kind == "udp" or fields[3] == "0A"):
                return True
    return False


class Receiver:
    """One receiving process, stopped with SIGINT (srt-live-transmit and receiver.py then write
    what they have and exit)."""

    def __init__(self, name, argv, port, kind, log, stdout=subprocess.DEVNULL):
        self.name = name
        self.argv = [str(a) for a in argv]
        self.log = log
        with open(log, "wb") as err:
            self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err)
        deadline = time.monotonic() + START_SECONDS
        while not bound(port, kind):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise ToolFailed(f"{name} receiver did not come up on port {port}: {' '.join(self.argv)}\n"
                                 f"{tail(Path(log))}")
            time.sleep(0.02)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def srt_listener(port, destination, log, options=""):
    """srt-live-transmit waiting for one SRT caller on 127.0.0.1:port; what it receives goes to
    `destination`: a file (through its standard output) or a udp:// URL."""
    source = f"srt://127.0.0.1:{port}?mode=listener{options}"
    if str(destination).startswith("udp://"):
        return Receiver("SRT", ["srt-live-transmit", "-q", source, destination], port, "udp", log)
    out = open(destination, "wb")
    try:
        return Receiver("SRT", ["srt-live-transmit", "-q", source, "file://con"], port, "udp", log, stdout=out)
    finally:
        out.close()


def udp_receiver(port, output, log, arrivals=None):
    """receiver.py on 127.0.0.1:port, writing what it gets to `output` (and, with `arrivals`,
    when each picture arrived)."""
    argv = [sys.executable, RECEIVER, port, output, *(["--arrivals", arrivals] if arrivals else [])]
    return Receiver("UDP", argv, port, "udp", log)


class Nginx:
    """nginx with the RTMP module on 127.0.0.1:port, in the foreground as one process, its
    configuration, logs and recordings in `directory`: rtmp://127.0.0.1:PORT/live/NAME is
    recorded to directory/NAME.flv."""

    def __init__(self, directory: Path):
        if not NGINX_RTMP_MODULE.exists():
            raise ToolFailed(f"{NGINX_RTMP_MODULE} is missing (make bench-deps installs libnginx-mod-rtmp)")
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.port = free_port("tcp")
        config = directory / "nginx.conf"
        config.write_text(
            f"load_module {NGINX_RTMP_MODULE};\n"
            "daemon off;\nmaster_process off;\nworker_processes 1;\n"
            f"error_log {directory / 'error.log'} warn;\npid {directory / 'nginx.pid'};\n"
            "events { worker_connections 64; }\n"
            f"rtmp {{ server {{ listen 127.0.0.1:{self.port};\n"
            f"  application live {{ live on; record all; record_path {directory}; record_unique off; }} }} }}\n")
        self.receiver = Receiver("RTMP", ["nginx", "-e", directory / "error.log", "-p", directory, "-c", config],
                                 self.port, "tcp", directory / "nginx.log")

    def url(self, name):
        return f"rtmp://127.0.0.1:{self.port}/live/{name}"

    def recording(self, name):
        return self.directory / f"{name}.flv"

    def stop(self):
        # nginx ends at once on SIGINT; a recording it was still writing is closed first.
        self.receiver.stop()


def remove(*paths):
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
