"""Makes fake_reduce_checker.py's checks in one long-lived process, so that each check run by
`vkgraphy debug reduce` or `polygraphy debug reduce` does not import onnx again (0.5 s of a check
that otherwise takes a few milliseconds). The check itself is the same function.

    python checker_server.py SOCKET     serves until terminated

Tests start one per module with the interpreter their checker command names:

    SERVER = CheckerServer(PYTHON)
    def setUpModule(): SERVER.start()
    def tearDownModule(): SERVER.stop()

start() sets VKGRAPHY_FAKE_CHECKER_SERVER, which the checker (run by the tools with the tests'
environment) reads; without it, or when the server cannot be reached, the checker checks itself.
"""
import argparse
import json
import os
import shutil
import socketserver
import subprocess
import sys
import tempfile
import time

import fake_reduce_checker


class _Check(socketserver.StreamRequestHandler):
    def handle(self):
        args = argparse.Namespace(**json.loads(self.rfile.readline()))
        code, output = fake_reduce_checker.check(args)
        self.wfile.write((json.dumps({"code": code, "output": output}) + "\n").encode())


class CheckerServer:
    def __init__(self, python):
        self.python = python
        self.proc = None
        self.dir = None

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="vkgraphy_checker_")
        socket_path = os.path.join(self.dir, "checker.sock")
        self.proc = subprocess.Popen([self.python, os.path.abspath(__file__), socket_path])
        deadline = time.monotonic() + 60
        while not os.path.exists(socket_path):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the checker server ({self.python} {__file__}) did not start")
            time.sleep(0.02)
        os.environ[fake_reduce_checker.SERVER_ENV] = socket_path

    def stop(self):
        os.environ.pop(fake_reduce_checker.SERVER_ENV, None)
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


def main():
    import onnx  # noqa: F401  (imported once, before the first check)

    with socketserver.ThreadingUnixStreamServer(sys.argv[1], _Check) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
