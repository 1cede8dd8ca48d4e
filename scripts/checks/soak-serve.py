#!/usr/bin/env python3
"""Soak test of `nmt serve`: for --minutes, well-behaved clients translate while hostile ones
send malformed JSON, wrong types, 10 MB bodies, 10,000-sentence requests, invalid UTF-8, hang
up mid-request, stall (slow clients) and open hundreds of connections at once. The server's
resident memory (VmRSS) is sampled every --every seconds; it must stay flat, and every request
must get an answer with the expected status.

    python3 scripts/checks/soak-serve.py MODEL_DIR [--minutes 10] [--nmt build/nmt] [--threads 2] [--workers 1]

Prints one line per RSS sample and a summary; exits 1 if a request got a wrong answer or the
server died. Standard library only."""
import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("model")
p.add_argument("--minutes", type=float, default=10)
p.add_argument("--every", type=float, default=30)
p.add_argument("--nmt", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "nmt"))
p.add_argument("--threads", type=int, default=2)
p.add_argument("--workers", type=int, default=1, help="the server's --workers")
p.add_argument("--clients", type=int, default=4, help="well-behaved clients (each waits for its answer, then 0-100 ms)")
data = os.environ.get("NMT_DATA") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "data")
p.add_argument("--source", default=os.path.join(data, "multi30k", "test_2016_flickr.en"))
args = p.parse_args()

sentences = open(args.source, encoding="utf-8").read().split("\n")[:-1]
server = subprocess.Popen([args.nmt, "serve", "-m", args.model, "--threads", str(args.threads), "--workers", str(args.workers), "--port", "0", "--timeout", "2", "-q"],
                          stderr=subprocess.PIPE, text=True)
port = None
for line in server.stderr:
    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
    if m:
        port = int(m.group(1))
        break
if port is None:
    sys.exit("soak: the server did not start")
threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()  # drain

stop = time.time() + 60 * args.minutes
counts = {}
failures = []
lock = threading.Lock()


def count(kind, ok, detail=""):
    with lock:
        counts[kind] = counts.get(kind, 0) + 1
        if not ok and len(failures) < 20:
            failures.append(f"{kind}: {detail}")


def exchange(raw, timeout=60):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(raw)
    except OSError:
        pass  # answered (413) and closed before reading it all
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
    except OSError:
        pass
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head[9:12]) if head.startswith(b"HTTP/1.1 ") else 0
    return status, body


def post(body, path="/translate"):
    if isinstance(body, str):
        body = body.encode()
    return exchange(b"POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % (path.encode(), len(body)) + body)


def expect(kind, status_wanted, result):
    status, body = result
    ok = status == status_wanted
    if ok and status != 200:
        try:
            ok = json.loads(body)["status"] == status_wanted
        except Exception:
            ok = False
    count(kind, ok, f"status {status}, body {body[:200]!r}")


def good_client(seed):
    rng = random.Random(seed)
    while time.time() < stop:
        texts = rng.sample(sentences, rng.randint(1, 4))
        body = {"text": texts[0]} if len(texts) == 1 else {"text": texts}
        if rng.random() < 0.1:
            body["beam"] = 4
        expect("translate", 200, post(json.dumps(body)))
        time.sleep(rng.random() * 0.1)


def hostile_client():
    rng = random.Random(7)
    big = b'{"text": "' + b"a" * (11 * 1024 * 1024) + b'"}'
    many = json.dumps({"text": ["Hello."] * 10000})
    cases = [
        ("malformed", 400, lambda: post('{"text": ["a"')),
        ("wrong-type", 400, lambda: post('{"text": {"a": 1}}')),
        ("empty", 400, lambda: post("")),
        ("utf8", 400, lambda: post(b'{"text": "\xff\xfe caf\xc3"}')),
        ("10MB", 413, lambda: post(big)),
        ("10k-sentences", 413, lambda: post(many)),
        ("404", 404, lambda: post("{}", "/nowhere")),
    ]
    while time.time() < stop:
        kind, status, send = rng.choice(cases)
        expect(kind, status, send())
        # Hanging up mid-request, and a stalled client the server must time out (--timeout 2).
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{\"text\": \"Hel")
        s.close()
        count("hang-up", True)
        if rng.random() < 0.05:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(b"POST /translate HTTP/1.1\r\n")
            t = time.time()
            reply = s.recv(100)  # the server hangs up, or answers 4xx, once --timeout has passed
            ended = reply == b"" or reply.startswith(b"HTTP/1.1 4")
            count("slow-client", ended and time.time() - t < 20, f"got {reply[:40]!r} after {time.time() - t:.1f}s")
            s.close()
        if rng.random() < 0.02:  # 300 connections at once
            conns = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(300)]
            for c in conns:
                c.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answered = sum(c.recv(12).startswith(b"HTTP/1.1 200") for c in conns)
            for c in conns:
                c.close()
            count("burst-300", answered == 300, f"{answered}/300 answered")
        time.sleep(0.05)


def heap_mib():
    """The server's malloc in-use bytes (/health), to tell a leak from RSS that only warms up."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            c.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := c.recv(65536):
                data += chunk
        return json.loads(data.split(b"\r\n\r\n", 1)[1]).get("heap_in_use_bytes", 0) / 2**20
    except (OSError, ValueError, IndexError):
        return float("nan")


def rss_mib():
    for line in open(f"/proc/{server.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


threads = [threading.Thread(target=good_client, args=(i,)) for i in range(args.clients)] + [threading.Thread(target=hostile_client)]
for t in threads:
    t.start()
start = time.time()
samples = []
while time.time() < stop and server.poll() is None:
    samples.append((time.time() - start, rss_mib(), heap_mib()))
    with lock:
        total = sum(counts.values())
    print(f"soak: {samples[-1][0] / 60:5.1f} min  RSS {samples[-1][1]:7.1f} MiB  heap in use {samples[-1][2]:7.1f} MiB  "
          f"requests {total}  load {os.getloadavg()[0]:.2f}", flush=True)
    time.sleep(min(args.every, max(0.0, stop - time.time())))
for t in threads:
    t.join()
alive = server.poll() is None
if alive:
    samples.append((time.time() - start, rss_mib(), heap_mib()))
    server.terminate()
    code = server.wait(60)
else:
    code = server.returncode
print("soak: requests by kind:", json.dumps(dict(sorted(counts.items()))))
if len(samples) >= 3:
    after_warmup = [s for s in samples if s[0] >= 60] or samples
    print(f"soak: RSS first {samples[0][1]:.1f} MiB, at 1 min {after_warmup[0][1]:.1f} MiB, last {samples[-1][1]:.1f} MiB, "
          f"max {max(s[1] for s in samples):.1f} MiB")
    print(f"soak: heap in use first {samples[0][2]:.1f} MiB, at 1 min {after_warmup[0][2]:.1f} MiB, last {samples[-1][2]:.1f} MiB, "
          f"max {max(s[2] for s in samples):.1f} MiB")
print(f"soak: server {'exited ' + str(code) + ' on SIGTERM' if alive else 'DIED with ' + str(code)}")
for f in failures:
    print("soak: FAILED", f)
sys.exit(0 if alive and code == 0 and not failures else 1)
