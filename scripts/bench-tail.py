#!/usr/bin/env python3
"""Journal append -> line printed latency of `castscope tail` (p50/p99 over 1000 entries at
5 ms), through systemd-journal-remote writing a journal file that tail follows."""
import json, os, shutil, subprocess, sys, tempfile, threading, time

BIN = sys.argv[1]
JR = "/lib/systemd/systemd-journal-remote"
N = 1000
d = tempfile.mkdtemp(prefix="castscope-tail-bench-")
jdir = os.path.join(d, "j")
os.makedirs(jdir)
feeder = subprocess.Popen([JR, "--output=" + os.path.join(jdir, "live.journal"), "-"], stdin=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, env=dict(os.environ, SYSTEMD_JOURNAL_COMPACT="0"))
sid = "7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69"
def entry(k):
    us = int(time.time() * 1e6)
    return (f"__REALTIME_TIMESTAMP={us}\n_PID=811\nSYSLOG_IDENTIFIER=broadcast-relay\n"
            f"MESSAGE=session {sid} stats frames={k} bytes=1 fps=10.0 dropped=0\n\n").encode()
feeder.stdin.write(entry(0)); feeder.stdin.flush()
time.sleep(0.3)
tail = subprocess.Popen([BIN, "tail", "--directory", jdir, "--json", "--events"], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
arrived = {}
def reader():
    for line in tail.stdout:
        if '"type":"event"' in line and "frames=" in line:
            k = int(line.split("frames=")[1].split(" ")[0])
            arrived[k] = time.perf_counter()
threading.Thread(target=reader, daemon=True).start()
while True:
    l = tail.stderr.readline()
    if "following" in l or not l:
        break
sent = {}
for k in range(1, N + 1):
    sent[k] = time.perf_counter()
    feeder.stdin.write(entry(k)); feeder.stdin.flush()
    time.sleep(0.005)
deadline = time.time() + 5
while len(arrived) < N and time.time() < deadline:
    time.sleep(0.05)
tail.send_signal(2); tail.wait(timeout=5)
feeder.stdin.close(); feeder.wait()
shutil.rmtree(d, ignore_errors=True)
lat = sorted((arrived[k] - sent[k]) * 1000 for k in sent if k in arrived)
if not lat:
    sys.exit("no entries seen")
p = lambda q: lat[min(len(lat) - 1, int(q * (len(lat) - 1)))]
print(f"journal append -> line printed: {len(lat)}/{N} seen, p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms, max {lat[-1]:.1f} ms "
      f"(target p99 <= 100 ms)  {'PASS' if len(lat) == N and p(0.99) <= 100 else 'MISS'}")
