"""The connection limits of the HTTP server one by one, on real uvicorn with the command's configuration.

(The load test with many slow clients at once is test_serve_slow_clients.py.)
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.test_serve_errors import read_response
from tests.test_serve_support import address, exact_request, http_server, inprocess_server

from spatialobs.serve.connections import ConnectionLimits
from spatialobs.serve.service import ServiceError


def _closed_within(sock: socket.socket, seconds: float) -> float:
    """Seconds until the server closes ``sock`` (reading and dropping what it sends); fails after ``seconds``."""
    t0 = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except socket.timeout:
        pytest.fail(f"the server held the connection over {seconds} s")
    except OSError:  # reset
        pass
    return time.monotonic() - t0


def test_over_the_cap_with_every_connection_busy_a_new_one_gets_503(tmp_path):
    with inprocess_server(tmp_path, ConnectionLimits(max_connections=3, body_timeout=5, body_deadline=10)) as base:
        busy = []
        for _ in range(3):  # each is mid-request: headers sent, body awaited
            s = socket.create_connection(address(base), timeout=10)
            s.sendall(f"POST /v1/documents HTTP/1.1\r\nHost: {base[7:]}\r\nContent-Type: application/json\r\n"
                      "Content-Length: 50\r\n\r\n{".encode())
            busy.append(s)
        time.sleep(0.3)
        extra = socket.create_connection(address(base), timeout=10)
        data = read_response(extra)
        extra.close()
        head, body = data.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 503 ") and json.loads(body)["error"]["code"] == "unavailable"
        for s in busy:
            s.close()
        time.sleep(0.3)
        assert exact_request(base, "GET", "/v1/documents", [("Host", base[7:])])[0] == 200


def test_over_the_cap_an_idle_connection_makes_room(tmp_path):
    with inprocess_server(tmp_path, ConnectionLimits(max_connections=2)) as base:
        idle = [socket.create_connection(address(base), timeout=10) for _ in range(2)]
        time.sleep(0.2)
        t0 = time.monotonic()
        assert exact_request(base, "GET", "/v1/documents", [("Host", base[7:])])[0] == 200
        assert time.monotonic() - t0 < 5
        assert _closed_within(idle[0], 5) < 1  # the least recently active one was closed for it
        for s in idle:
            s.close()


def test_a_client_that_stops_reading_is_dropped(tmp_path):
    with inprocess_server(tmp_path, ConnectionLimits(write_timeout=1.0)) as base:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(address(base))
        # pipelined requests whose answers (about 8 kB each) it never reads
        request = f"GET /v1/tools HTTP/1.1\r\nHost: {base[7:]}\r\n\r\n".encode()
        sock.sendall(request * 2000)
        time.sleep(3.0)
        t0 = time.monotonic()
        got = 0
        sock.settimeout(10)
        try:
            while True:
                part = sock.recv(65536)
                if not part:
                    break
                got += len(part)
        except OSError:
            pass
        sock.close()
        assert time.monotonic() - t0 < 5  # it was closed, not still writing
        size = len(exact_request(base, "GET", "/v1/tools", [("Host", base[7:])])[2])
        assert got < 2000 * size / 2  # far from every answer


def test_keep_alive_and_header_timeouts(tmp_path):
    with http_server(tmp_path, extra=["--keep-alive", "0.5", "--header-timeout", "1"]) as base:
        sock = socket.create_connection(address(base), timeout=10)
        sock.sendall(f"GET /v1/health HTTP/1.1\r\nHost: {base[7:]}\r\n\r\n".encode())
        assert read_response(sock).startswith(b"HTTP/1.1 200 ")
        assert _closed_within(sock, 5) < 0.5 + 1  # idle after its answer
        sock.close()
        sock = socket.create_connection(address(base), timeout=10)  # never sends
        assert 0.9 < _closed_within(sock, 5) < 1 + 1
        sock.close()
        sock = socket.create_connection(address(base), timeout=10)  # sends half a request line
        sock.sendall(b"GET /v1/hea")
        t0 = time.monotonic()
        data = read_response(sock)
        assert 0.9 < time.monotonic() - t0 < 2 and data.startswith(b"HTTP/1.1 408 ")
        assert json.loads(data.split(b"\r\n\r\n", 1)[1])["error"] == {
            "code": "timeout", "message": "the request headers did not arrive in time"}
        sock.close()


def test_malformed_and_oversize_request_heads_get_the_json_400(tmp_path):
    with http_server(tmp_path) as base:
        for raw in (b"NOT HTTP AT ALL\r\n\r\n", b"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
                    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n"):
            sock = socket.create_connection(address(base), timeout=10)
            try:
                sock.sendall(raw)
                data = read_response(sock)
            finally:
                sock.close()
            head, body = data.split(b"\r\n\r\n", 1)
            assert head.startswith(b"HTTP/1.1 400 ") and b"content-type: application/json" in head
            assert json.loads(body) == {"ok": False, "error": {"code": "bad_request", "message": "malformed HTTP request"}}
        # a head over the limit, whether it arrives in one read or in many
        for pieces in (1, 40):
            sock = socket.create_connection(address(base), timeout=10)
            raw = f"GET /v1/health HTTP/1.1\r\nHost: {base[7:]}\r\nX-Big: {'a' * 70000}\r\n\r\n".encode()
            try:
                step = -(-len(raw) // pieces)
                for k in range(0, len(raw), step):
                    sock.sendall(raw[k:k + step])
                data = read_response(sock)
            except OSError as exc:  # the server may close before the last piece
                pytest.fail(f"no answer: {exc}")
            finally:
                sock.close()
            head, body = data.split(b"\r\n\r\n", 1)
            assert head.split(b" ", 2)[1] in (b"400", b"431") and json.loads(body)["ok"] is False, data[:300]


@pytest.mark.parametrize("args, message", [
    (["--max-connections", "0"], "max_connections must be at least 1, got 0"),
    (["--header-timeout", "-1"], "header_timeout must be a positive number, got -1.0"),
    (["--body-timeout", "nan"], "body_timeout must be a positive number, got nan")])
def test_bad_limits_stop_the_command(tmp_path, args, message):
    import subprocess

    from tests.test_serve_support import REPO, serve_command

    out = subprocess.run(serve_command(tmp_path, "--http", "127.0.0.1:0", *args), cwd=REPO, capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and out.stderr.strip() == f"spatialobs: error: {message}"


def test_limits_are_checked():
    with pytest.raises(ServiceError, match="tick must be a positive number"):
        ConnectionLimits(tick=0)
