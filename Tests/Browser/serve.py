#!/usr/bin/python3
"""Serves a directory on 127.0.0.1 for a headless browser and prints the first report the page
POSTs to /report (one JSON line on standard output), then exits.

usage: serve.py DIRECTORY  (prints "port N" on standard error once it listens)
"""

import http.server
import os
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode("utf-8", "replace")
        self.send_response(204)
        self.end_headers()
        print(body.replace("\n", " "), flush=True)
        self.server.reported = True


def main():
    os.chdir(sys.argv[1])
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    server.reported = False
    print(f"port {server.server_address[1]}", file=sys.stderr, flush=True)
    while not server.reported:
        server.handle_request()


if __name__ == "__main__":
    main()
