#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sink.py PORT FILE: an HTTP receiver for the push benchmark: answers every POST 204,
appends "<seconds> <bytes>" per request to FILE."""
import http.server
import sys
import time


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        n = len(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()
        with open(sys.argv[2], "a") as f:
            f.write("%.6f %d\n" % (time.monotonic(), n))

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
