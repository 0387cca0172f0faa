#!/usr/bin/python3
"""Drives a headless Chromium over the DevTools protocol: loads a page and evaluates a script in it.

usage: cdp.py URL SCRIPT.js [--timeout S] [--args JSON] [--window-size WxH] [--screenshot PNG]

SCRIPT.js is the body of an async function, `(async (args) => { SCRIPT })(ARGS)`, run once the
page has loaded; whatever it returns (JSON-serialisable) is printed as one JSON line on standard
output. `args` is the --args object ({} by default), so a script can keep its defaults at the top
and let a test change them. Any failure (Chromium not starting, the page not loading, the script
throwing, the time running out) exits 1 with a one-line message on standard error.

Every step is bounded by what is left of --timeout, and Chromium and its profile directory are
removed at the end whatever happened. Needs websocket-client (Debian: python3-websocket).

As a module:

    with Browser(timeout=30) as browser:
        browser.navigate("http://127.0.0.1:8080/")
        value = browser.evaluate("return document.title;")
"""

import argparse
import base64
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import websocket


class CDPError(Exception):
    pass


class Browser:
    def __init__(self, timeout=30.0, chromium="chromium", window_size=None, extra_flags=()):
        self.deadline = time.monotonic() + timeout
        self.chromium = chromium
        self.window_size = window_size
        self.extra_flags = list(extra_flags)
        self.process = None
        self.profile = None
        self.socket = None
        self.next_id = 0
        self.events = []
        self.stderr_tail = []
        self.step = "starting chromium"

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def remaining(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise CDPError(f"timed out {self.step}")
        return left

    def start(self):
        self.profile = tempfile.mkdtemp(prefix="cdp-chromium-")
        flags = ["--headless=new", "--no-sandbox", "--autoplay-policy=no-user-gesture-required",
                 "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
                 "--no-first-run", "--no-default-browser-check", "--mute-audio"]
        if self.window_size:
            flags.append("--window-size=" + self.window_size.replace("x", ","))
        # Its own process group, so the renderer and GPU processes go with it at the end.
        self.process = subprocess.Popen([self.chromium, *flags, *self.extra_flags, "about:blank"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        port = self._wait_for_port()
        self.step = "connecting to chromium"
        try:
            self.socket = websocket.create_connection(self._page_socket_url(port),
                                                      timeout=self.remaining(), suppress_origin=True)
        except (OSError, websocket.WebSocketException) as error:
            raise CDPError(f"{self.step}: {error}") from None

    def _wait_for_port(self):
        lines = queue.Queue()

        def drain():
            # Reads stderr to its end so Chromium never blocks on a full pipe.
            for raw in self.process.stderr:
                line = raw.decode("utf-8", "replace").rstrip()
                self.stderr_tail = (self.stderr_tail + [line])[-20:]
                lines.put(line)
        threading.Thread(target=drain, daemon=True).start()

        port_file = os.path.join(self.profile, "DevToolsActivePort")
        while True:
            try:
                line = lines.get(timeout=min(0.1, self.remaining()))
                match = re.search(r"DevTools listening on ws://[^:/]+:(\d+)/", line)
                if match:
                    return int(match.group(1))
            except queue.Empty:
                pass
            if os.path.exists(port_file):
                with open(port_file) as f:
                    first = f.readline().strip()
                if first.isdigit():
                    return int(first)
            if self.process.poll() is not None:
                tail = " | ".join(self.stderr_tail[-3:])
                raise CDPError(f"chromium exited with status {self.process.returncode}: {tail}")

    def _page_socket_url(self, port):
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",
                                            timeout=self.remaining()) as answer:
                    targets = json.load(answer)
            except OSError:
                # Listening, and not answering yet: asked again until the time is up.
                if self.remaining() <= 0.2:
                    raise
                time.sleep(0.1)
                continue
            pages = [t for t in targets if t.get("type") == "page" and "webSocketDebuggerUrl" in t]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
            time.sleep(0.1)

    def send(self, method, params=None):
        """Sends a command and returns its result; events that arrive meanwhile are kept."""
        self.next_id += 1
        ident = self.next_id
        self.socket.settimeout(self.remaining())
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params or {}}))
        while True:
            message = self._receive()
            if message.get("id") == ident:
                if "error" in message:
                    raise CDPError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})

    def _receive(self):
        self.socket.settimeout(self.remaining())
        try:
            message = json.loads(self.socket.recv())
        except websocket.WebSocketTimeoutException:
            raise CDPError(f"timed out {self.step}") from None
        if "method" in message:
            self.events.append(message)
        return message

    def wait_for_event(self, method):
        """Returns the first kept or future event of that name, removing it from the kept ones."""
        while True:
            for i, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(i)
            self._receive()

    def navigate(self, url):
        self.step = f"loading {url}"
        if self.window_size:
            # Headless windows have a minimum width; the emulated viewport has the size asked.
            width, height = (int(n) for n in self.window_size.split("x"))
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.send("Page.enable")
        self.events.clear()
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise CDPError(f"cannot load {url}: {result['errorText']}")
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, body, args=None):
        """Runs `body` as the body of an async function of `args` and returns its value."""
        self.step = "running the script"
        expression = f"(async (args) => {{\n{body}\n}})({json.dumps(args or {})})"
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CDPError("script failed: " + text.splitlines()[0])
        return result["result"].get("value")

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        if self.socket is not None:
            try:
                self.socket.close()
            except Exception:
                pass
            self.socket = None
        if self.process is not None:
            for sig, grace in ((signal.SIGTERM, 3), (signal.SIGKILL, 3)):
                try:
                    os.killpg(self.process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.process.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    pass
            self.process = None
        if self.profile is not None:
            shutil.rmtree(self.profile, ignore_errors=True)
            self.profile = None


def main():
    parser = argparse.ArgumentParser(description="Evaluate a script in a page in headless Chromium.")
    parser.add_argument("url")
    parser.add_argument("script", help="file holding the body of an async function of `args`")
    parser.add_argument("--timeout", type=float, default=30, help="seconds for everything (30)")
    parser.add_argument("--args", default="{}", help="JSON value the script sees as `args`")
    parser.add_argument("--window-size", help="WxH, such as 390x844")
    parser.add_argument("--screenshot", help="PNG file to write after the script has run")
    parser.add_argument("--chromium", default="chromium")
    options = parser.parse_args()

    # A test harness that gives up on us sends SIGTERM: clean up as for any other failure.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("cdp.py: terminated"))
    try:
        with open(options.script) as f:
            body = f.read()
        args = json.loads(options.args)
        with Browser(options.timeout, options.chromium, options.window_size) as browser:
            browser.navigate(options.url)
            value = browser.evaluate(body, args)
            if options.screenshot:
                browser.screenshot(options.screenshot)
        print(json.dumps(value))
    except (CDPError, OSError, ValueError, websocket.WebSocketException) as error:
        sys.exit(f"cdp.py: {error}")
    except KeyboardInterrupt:
        sys.exit("cdp.py: interrupted")


if __name__ == "__main__":
    main()
