"""A soak of `spatialobs serve --http`: a mixed load at fixed rates for a long time, memory and latency over time.

Not part of CI (``tests/test_serve_soak.py`` runs it for a few seconds to keep it working)::

    python benchmarks/soak.py --minutes 30 --out soak.json

It starts the real command on a free loopback port with a fresh root folder
holding a copy of the 2,504-shape real tldraw file (from ``../shared/data``
beside the checkout; a seeded synthetic workspace of 2,500 shapes when it is
absent) and drives it open-loop, each operation from its own thread with its
own keep-alive connection, at fixed rates (requests are sent on schedule; a
request that is late because the previous one was slow is sent at once and
its lateness counted):

* ``observe`` of the document (every tenth with ``since`` the previous token, so
  change tracking is exercised), 10/s;
* ``apply`` of one random ``move_node`` or ``update_styles`` to it, 4/s;
* ``save`` of it over the same file, 0.5/s;
* ``screen_add`` of one of 400 seeded screens to one index, 4/s (after the
  first pass every add is a revisit, so the index stops growing).

Every ``--interval`` seconds it samples the server process's resident memory
(``/proc/PID/status``: VmRSS), open file descriptors and CPU seconds used in
the window, the machine's load average (latency on a shared machine follows
it), and each operation's p50/p99/max latency and error count over the window; it prints one line per
sample and, at the end, the summary: memory at the end of warm-up (the first
fifth) and at the end, the least-squares slope of memory over the rest in
MB per 10 minutes, p99 per operation in the first and last thirds, and the
number of errors. Everything stops by itself after ``--minutes`` (or
``--seconds``); the server is always stopped.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
REAL = REPO.parent / "shared" / "data" / "canvases" / "QuentinJoanon__VictoryZone-Front__wireframe.tldr"
RATES = {"observe": 10.0, "apply": 4.0, "save": 0.5, "screen_add": 4.0}


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds the process has used."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _load() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def _pct(xs: List[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] if s else float("nan")


def _screens(n: int, seed: int) -> List[Dict[str, Any]]:
    rng = random.Random(seed)
    roles = ["button", "edit", "text", "toolbar", "list item", "check box", "menu item"]
    words = ["File", "Edit", "Save", "Open", "Inbox", "Send", "Cancel", "OK", "Search", "Settings", "Help", "Next"]
    out = []
    for k in range(n):
        els = []
        for i in range(rng.randrange(6, 30)):
            x, y = rng.randrange(0, 700), rng.randrange(0, 500)
            els.append({"bounds": [x, y, x + rng.randrange(20, 200), y + rng.randrange(10, 60)],
                        "role": rng.choice(roles), "text": f"{rng.choice(words)} {k % 37} {i}",
                        "clickable": rng.random() < 0.5})
        out.append({"width": 800, "height": 600, "meta": {"app": "soak"}, "elements": els})
    return out


class _Server:
    def __init__(self, root: Path) -> None:
        env = dict(os.environ)
        env.pop("SPATIALOBS_TOKEN", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "spatialobs", "serve", "--root", str(root), "--http",
                                      "127.0.0.1:0"], cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self.log: List[str] = []
        ready = threading.Event()
        self.port = 0

        def drain() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line)
                if "listening on http://" in line and not self.port:
                    self.port = int(line.split("listening on http://", 1)[1].split()[0].rsplit(":", 1)[1])
                    ready.set()
            ready.set()

        threading.Thread(target=drain, daemon=True).start()
        if not ready.wait(120) or not self.port:
            self.stop()
            raise RuntimeError("the server did not start: " + "".join(self.log)[-2000:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


class _Load(threading.Thread):
    """One operation at a fixed rate on its own connection until ``stop``; latencies kept per sample window."""

    def __init__(self, name: str, rate: float, port: int, make: Any, stop: threading.Event) -> None:
        super().__init__(daemon=True, name=name)
        self.op, self.rate, self.port, self.make, self.stop = name, rate, port, make, stop
        self.lock = threading.Lock()
        self.window: List[float] = []
        self.errors: List[str] = []
        self.late = 0
        self.count = 0

    def take(self) -> Tuple[List[float], List[str], int]:
        with self.lock:
            w, e, late = self.window, self.errors, self.late
            self.window, self.errors, self.late = [], [], 0
        return w, e, late

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        t0 = time.monotonic()
        k = 0
        while not self.stop.is_set():
            due = t0 + k / self.rate
            wait = due - time.monotonic()
            if wait > 0:
                if self.stop.wait(wait):
                    break
            elif wait < -0.5 / self.rate:
                with self.lock:
                    self.late += 1
            k += 1
            method, path, body = self.make()
            start = time.perf_counter()
            error = None
            try:
                conn.request(method, path, body=None if body is None else json.dumps(body),
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = json.loads(resp.read())
                if resp.status != 200 or not data.get("ok"):
                    error = f"{resp.status} {str(data)[:200]}"
                else:
                    self.on_result(data["result"])
            except (OSError, http.client.HTTPException, ValueError) as exc:
                error = f"{type(exc).__name__}: {exc}"
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            took = time.perf_counter() - start
            with self.lock:
                self.count += 1
                self.window.append(took)
                if error:
                    self.errors.append(error)
        conn.close()

    def on_result(self, result: Dict[str, Any]) -> None:
        pass


def soak(seconds: float, interval: float, out: Optional[Path], seed: int = 26) -> Dict[str, Any]:
    """Run the soak; returns (and writes to ``out``) the samples and the summary."""
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="spatialobs-soak-"))
    if REAL.is_file():
        shutil.copy(REAL, root / "board.tldr")
        source = f"{REAL.name} (2,504 shapes)"
    else:
        from spatialobs.canvas.scenarios.handoff import synthetic_workspace

        (root / "board.tldr").write_text(json.dumps(synthetic_workspace(2500, seed=seed).to_tldraw()))
        source = "synthetic workspace of 2,500 shapes (the real file is absent)"
    server = _Server(root)
    stop = threading.Event()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.request("POST", "/v1/documents", body=json.dumps({"path": "board.tldr", "name": "board"}),
                     headers={"Content-Type": "application/json"})
        assert json.loads(conn.getresponse().read())["ok"]
        conn.request("GET", "/v1/documents/board/observe?max_objects=2000&max_relations=0")
        objs = json.loads(conn.getresponse().read())["result"]["observation"]["objects"]
        conn.close()
        targets = [o["id"] for o in objs if o["type"] in ("geo", "note", "text", "frame")] or [o["id"] for o in objs]
        screens = _screens(400, seed)
        token: List[Optional[str]] = [None]
        counter = [0]

        def observe() -> Tuple[str, str, Any]:
            counter[0] += 1
            if counter[0] % 10 == 0 and token[0]:
                return "POST", "/v1/documents/board/observe", {"since": token[0]}
            return "GET", "/v1/documents/board/observe", None

        def apply() -> Tuple[str, str, Any]:
            nid = rng.choice(targets)
            op = ({"op": "move_node", "id": nid, "dx": rng.randrange(-5, 6), "dy": rng.randrange(-5, 6)}
                  if rng.random() < 0.7 else
                  {"op": "update_styles", "id": nid, "styles": {"color": rng.choice(["red", "blue", "green"])}})
            return "POST", "/v1/documents/board/apply", {"ops": [op]}

        def save() -> Tuple[str, str, Any]:
            return "POST", "/v1/documents/board/save", {}

        def screen_add() -> Tuple[str, str, Any]:
            return "POST", "/v1/screens/soak/add", {"screen": rng.choice(screens)}

        makers = {"observe": observe, "apply": apply, "save": save, "screen_add": screen_add}
        loads = {name: _Load(name, RATES[name], server.port, makers[name], stop) for name in RATES}

        def keep_token(result: Dict[str, Any]) -> None:
            token[0] = result.get("token")

        loads["observe"].on_result = keep_token  # type: ignore[method-assign]
        started = time.monotonic()
        for t in loads.values():
            t.start()
        samples: List[Dict[str, Any]] = []
        cpu = _cpu_s(server.proc.pid)
        print(f"soak: {seconds:.0f} s on {source}; rates/s {RATES}; sample every {interval:.0f} s", flush=True)
        next_at = started + interval
        while True:
            end = min(next_at, started + seconds)
            while time.monotonic() < end:
                time.sleep(min(0.5, max(0.0, end - time.monotonic())))
                if server.proc.poll() is not None:
                    raise RuntimeError("the server exited: " + "".join(server.log)[-2000:])
            now_cpu = _cpu_s(server.proc.pid)
            row: Dict[str, Any] = {"t": round(time.monotonic() - started, 1), "rss_mb": round(_rss_mb(server.proc.pid), 1),
                                   "fds": _fds(server.proc.pid), "server_cpu_s": round(now_cpu - cpu, 2),
                                   "machine_load": _load(), "ops": {}}
            cpu = now_cpu
            for name, t in loads.items():
                w, errors, late = t.take()
                row["ops"][name] = {"n": len(w), "p50_ms": round(1000 * _pct(w, 0.5), 2),
                                    "p99_ms": round(1000 * _pct(w, 0.99), 2),
                                    "max_ms": round(1000 * max(w), 2) if w else None,
                                    "errors": len(errors), "late": late, "first_error": errors[0] if errors else None}
            samples.append(row)
            print(f"t={row['t']:7.1f}s rss={row['rss_mb']:7.1f} MB fds={row['fds']:3d} cpu={row['server_cpu_s']:5.1f}s "
                  f"load={row['machine_load']:4.1f} " + " ".join(
                f"{n}: p50 {o['p50_ms']:.1f} p99 {o['p99_ms']:.1f} ms ({o['n']}, {o['errors']} err)"
                for n, o in row["ops"].items()), flush=True)
            if end >= started + seconds:
                break
            next_at += interval
        stop.set()
        for t in loads.values():
            t.join(timeout=60)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.request("GET", "/v1/screens/soak/stats")
        stats = json.loads(conn.getresponse().read())["result"]
        conn.close()
    finally:
        stop.set()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    summary = _summary(samples, stats, {n: t.count for n, t in loads.items()})
    summary["source"] = source
    print("soak summary: " + json.dumps(summary), flush=True)
    result = {"rates": RATES, "interval_s": interval, "samples": samples, "summary": summary}
    if out is not None:
        out.write_text(json.dumps(result, indent=1))
    return result


def _summary(samples: List[Dict[str, Any]], stats: Dict[str, Any], counts: Dict[str, int]) -> Dict[str, Any]:
    n = len(samples)
    warm = max(1, n // 5)
    rest = samples[warm - 1:]
    ts = [s["t"] for s in rest]
    rss = [s["rss_mb"] for s in rest]
    slope = 0.0
    if len(rest) >= 2 and max(ts) > min(ts):
        mt, mr = statistics.fmean(ts), statistics.fmean(rss)
        slope = sum((t - mt) * (r - mr) for t, r in zip(ts, rss)) / sum((t - mt) ** 2 for t in ts)
    third = max(1, n // 3)
    p99 = {}
    for op in samples[0]["ops"]:
        first = [s["ops"][op]["p99_ms"] for s in samples[:third] if s["ops"][op]["n"]]
        last = [s["ops"][op]["p99_ms"] for s in samples[-third:] if s["ops"][op]["n"]]
        p99[op] = {"first_third_median_p99_ms": round(statistics.median(first), 2) if first else None,
                   "last_third_median_p99_ms": round(statistics.median(last), 2) if last else None}
    cpu_first = statistics.median(s["server_cpu_s"] for s in samples[:third])
    cpu_last = statistics.median(s["server_cpu_s"] for s in samples[-third:])
    return {"seconds": samples[-1]["t"], "requests": counts,
            "server_cpu_s_per_window_first_last_third": [round(cpu_first, 2), round(cpu_last, 2)],
            "machine_load_min_median_max": [min(s["machine_load"] for s in samples),
                                            statistics.median(s["machine_load"] for s in samples),
                                            max(s["machine_load"] for s in samples)], "errors": sum(o["errors"] for s in samples for o in s["ops"].values()),
            "late": sum(o["late"] for s in samples for o in s["ops"].values()),
            "rss_mb_after_warmup": rest[0]["rss_mb"], "rss_mb_end": samples[-1]["rss_mb"],
            "rss_mb_max": max(s["rss_mb"] for s in samples),
            "rss_slope_mb_per_10min": round(slope * 600, 2), "fds_start_end": [samples[0]["fds"], samples[-1]["fds"]],
            "p99": p99, "index": stats}


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--minutes", type=float, default=30.0, help="how long to run (default 30)")
    g.add_argument("--seconds", type=float, help="how long to run, in seconds (short runs)")
    p.add_argument("--interval", type=float, default=30.0, help="seconds between samples (default 30)")
    p.add_argument("--out", type=Path, help="write the samples and the summary as JSON here")
    a = p.parse_args(argv)
    seconds = a.seconds if a.seconds is not None else 60 * a.minutes
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a terminated soak still stops its server
    if not seconds > 0 or not a.interval > 0:
        p.error("the duration and the interval must be positive")
    result = soak(seconds, min(a.interval, seconds), a.out)
    return 0 if result["summary"]["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
