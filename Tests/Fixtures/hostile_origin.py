#!/usr/bin/env python3
"""Hostile loopback origin for DownloadCache's security tests: the test scripts the exact response bytes.

Python standard library only, raw sockets (no http.server: nothing is parsed, fixed or added on the way out).
Start it with `python3 -u hostile_origin.py`; it binds 127.0.0.1 on a free port, prints `LISTENING <port>`
and exits as soon as its standard input closes (so a crashed test run leaves no server behind).

Control plane: standard input / standard output, one JSON object per line, one JSON reply line per command
(the HTTP port carries test traffic only, so every request it records came from the code under test).
Bytes travel as base64 ("*_b64" keys).

  {"op": "script", "target": "/a", "responses": [RESPONSE, ...]}
        Answers requests for `target` with the responses in order; the last one repeats. `target` matches
        the request target exactly (path + query); a target without "?" also matches any query on that path.
        A new script for a target replaces the old one and restarts its sequence. Reply {"ok": true}.
  {"op": "requests"}                    Reply {"ok": true, "requests": [REQUEST, ...]} in arrival order.
  {"op": "requests", "target": "/a"}    The same, only requests whose target's path is "/a" (query ignored).
  {"op": "reset"}                       Forgets every script and every recorded request. Reply {"ok": true}.
  Any failure: {"ok": false, "error": "<words>"}.

RESPONSE (every key but raw_b64 optional):
  "raw_b64":  the exact bytes written to the socket: status line, header lines, blank line, body. Nothing
              is added (no Date, no Content-Length, no Connection).
  "delay":    seconds slept before the first byte is written.
  "trickle":  {"from": offset, "bytes": n, "interval": seconds}: bytes [0, offset) are written at once,
              the rest n bytes at a time with `interval` seconds between writes. `from` defaults to the end
              of the head (the first blank line + 4), so the head arrives whole and the body trickles.
  "then":     what happens after the bytes are written:
              "close" (default)   shut the connection down (FIN).
              "keep-alive"        read the next request from the same connection (pipelined bytes the
                                  client already sent count as the next request: request smuggling shows).
              "hold"              write nothing more and keep the connection open until the client closes.
              "reset"             close with SO_LINGER 0 (the client sees a connection reset).

REQUEST (what arrived, as framed by this server: a head up to the first blank line, then a body of the
Content-Length it declared (digits only) or its chunked body; any other framing means no body):
  "connection": ordinal of the TCP connection it arrived on (0, 1, ... in accept order),
  "method", "target", "version": from the request line (latin-1 text),
  "headers":    [[name, value], ...] as received (value with surrounding whitespace trimmed),
  "raw_b64":    every byte of the request: head and body exactly as read,
  "body_b64":   the body bytes (chunked framing removed).

Unscripted targets get `404 Not Found` with a Content-Length, and the connection is kept alive.
"""

import base64
import json
import os
import socket
import struct
import sys
import threading
import time

_lock = threading.Lock()
_scripts = {}  # target -> {"responses": [...], "next": index}
_requests = []  # recorded REQUEST objects
_connections = [0]  # next connection ordinal

NOT_FOUND = (b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n"
             b"Cache-Control: no-store\r\n\r\nnot found\n")
MAX_HEAD = 1 << 20  # a request head larger than this ends the connection


class Reader:
    """Buffered reads from one client socket; `None` from any read means the client closed."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def _fill(self):
        try:
            data = self.sock.recv(65536)
        except OSError:
            return False
        if not data:
            return False
        self.buffer += data
        return True

    def until(self, marker, limit):
        while marker not in self.buffer:
            if len(self.buffer) > limit or not self._fill():
                return None
        index = self.buffer.index(marker) + len(marker)
        data, self.buffer = self.buffer[:index], self.buffer[index:]
        return data

    def exactly(self, count):
        while len(self.buffer) < count:
            if not self._fill():
                return None
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data


def _read_request(reader, connection):
    """Reads one request; returns the REQUEST dict or None when the client closed first."""
    head = reader.until(b"\r\n\r\n", MAX_HEAD)
    if head is None:
        return None
    lines = head[:-4].split(b"\r\n")
    request_line = lines[0].decode("latin-1").split(" ")
    method = request_line[0] if request_line else ""
    target = request_line[1] if len(request_line) > 1 else ""
    version = request_line[2] if len(request_line) > 2 else ""
    headers = []
    for line in lines[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        headers.append([name, value.strip(" \t")])
    raw = head
    body = b""
    lengths = [v for n, v in headers if n.lower() == "content-length"]
    codings = [v for n, v in headers if n.lower() == "transfer-encoding"]
    if codings and codings[-1].lower().endswith("chunked"):
        while True:
            size_line = reader.until(b"\r\n", MAX_HEAD)
            if size_line is None:
                return None
            raw += size_line
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                break
            if size == 0:
                while True:  # trailer lines up to the blank line
                    trailer = reader.until(b"\r\n", MAX_HEAD)
                    if trailer is None:
                        return None
                    raw += trailer
                    if trailer == b"\r\n":
                        break
                break
            chunk = reader.exactly(size + 2)
            if chunk is None:
                return None
            raw += chunk
            body += chunk[:-2]
    elif lengths and lengths[0].strip().isdigit():
        body = reader.exactly(int(lengths[0].strip()))
        if body is None:
            return None
        raw += body
    return {"connection": connection, "method": method, "target": target, "version": version,
            "headers": headers, "raw_b64": base64.b64encode(raw).decode(),
            "body_b64": base64.b64encode(body).decode()}


def _path(target):
    return target.split("?", 1)[0]


def _pick(target):
    """The next scripted RESPONSE for `target`, or None (unscripted)."""
    with _lock:
        script = _scripts.get(target) or _scripts.get(_path(target))
        if script is None:
            return None
        responses = script["responses"]
        index = min(script["next"], len(responses) - 1)
        script["next"] += 1
        return responses[index]


def _send(sock, response):
    """Writes one RESPONSE; returns what to do next ("close", "keep-alive", "hold", "reset")."""
    data = base64.b64decode(response.get("raw_b64", ""))
    delay = float(response.get("delay") or 0)
    if delay > 0:
        time.sleep(delay)
    trickle = response.get("trickle")
    try:
        if trickle:
            head_end = data.find(b"\r\n\r\n")
            start = int(trickle.get("from", head_end + 4 if head_end >= 0 else 0))
            step = max(1, int(trickle.get("bytes", 1)))
            interval = float(trickle.get("interval", 1.0))
            sock.sendall(data[:start])
            offset = start
            while offset < len(data):
                time.sleep(interval)
                sock.sendall(data[offset:offset + step])
                offset += step
        else:
            sock.sendall(data)
    except OSError:
        return "close"
    return response.get("then", "close")


def _serve(sock, connection):
    reader = Reader(sock)
    try:
        while True:
            request = _read_request(reader, connection)
            if request is None:
                return
            with _lock:
                _requests.append(request)
            response = _pick(request["target"])
            if response is None:
                sock.sendall(NOT_FOUND)
                continue
            then = _send(sock, response)
            if then == "keep-alive":
                continue
            if then == "hold":
                while reader._fill():
                    reader.buffer = b""
                return
            if then == "reset":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
    except OSError:
        return
    finally:
        try:
            sock.close()
        except OSError:
            pass


def _accept(listener):
    while True:
        try:
            sock, _ = listener.accept()
        except OSError:
            return
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with _lock:
            connection = _connections[0]
            _connections[0] += 1
        threading.Thread(target=_serve, args=(sock, connection), daemon=True).start()


def _command(line):
    command = json.loads(line)
    op = command.get("op")
    if op == "script":
        responses = command.get("responses") or []
        if not responses:
            raise ValueError("a script needs at least one response")
        for response in responses:
            base64.b64decode(response.get("raw_b64", ""), validate=True)
        with _lock:
            _scripts[command["target"]] = {"responses": responses, "next": 0}
        return {"ok": True}
    if op == "requests":
        target = command.get("target")
        with _lock:
            found = [r for r in _requests if target is None or _path(r["target"]) == _path(target)]
        return {"ok": True, "requests": found}
    if op == "reset":
        with _lock:
            _scripts.clear()
            del _requests[:]
        return {"ok": True}
    raise ValueError("unknown op %r" % op)


def main():
    # Descriptors inherited from the launching test process (its sockets) must not stay open here.
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(256)
    threading.Thread(target=_accept, args=(listener,), daemon=True).start()
    print("LISTENING %d" % listener.getsockname()[1], flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = _command(line)
        except (ValueError, KeyError, TypeError) as error:
            reply = {"ok": False, "error": str(error)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
