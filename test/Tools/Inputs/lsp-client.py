#!/usr/bin/env python3
"""Drives a language server over stdin/stdout for lit tests.

  lsp-client.py MESSAGES SERVER [ARG...]

Sends every line of MESSAGES that starts with `SEND:` (a JSON-RPC message)
to SERVER with LSP's Content-Length framing, closes its input, and prints
every message the server sends back, one pretty-printed JSON object each,
keys sorted. Fails when the server's output is not correctly framed JSON,
when the server exits with a non-zero status, or after 60 seconds.
"""
import json
import re
import subprocess
import sys

HEADER = re.compile(rb"Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n")


def frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def unframe(data):
    messages = []
    while data:
        match = HEADER.match(data)
        if not match:
            sys.exit(f"lsp-client: bad framing at: {data[:80]!r}")
        end = match.end() + int(match.group(1))
        if end > len(data):
            sys.exit("lsp-client: message shorter than its Content-Length")
        messages.append(json.loads(data[match.end():end]))
        data = data[end:]
    return messages


def main():
    path, server = sys.argv[1], sys.argv[2:]
    with open(path) as f:
        requests = [json.loads(line.split("SEND:", 1)[1]) for line in f
                    if line.lstrip("#/ ").startswith("SEND:")]
    proc = subprocess.run(server, input=b"".join(map(frame, requests)),
                          capture_output=True, timeout=60)
    for message in unframe(proc.stdout):
        print(json.dumps(message, indent=1, sort_keys=True))
    if proc.returncode:
        sys.stderr.write(proc.stderr.decode(errors="replace"))
        sys.exit(f"lsp-client: server exited with status {proc.returncode}")


if __name__ == "__main__":
    main()
