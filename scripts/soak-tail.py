#!/usr/bin/env python3
"""`make soak`: castscope tail exactly once across SIGKILL, SIGTERM and rotation, on real journal
files written live by systemd-journal-remote.

A writer appends numbered relay `stats` entries (bytes=N is the entry's number) to journal files
in a directory, starting a new file and archiving the old one (renamed to `name@….journal`, as
journald does) every ROTATE_EVERY cycles. `castscope tail -D DIR --cursor-file F --from-start
--events --json >> out` is started CYCLES times and each run is killed after a random 0.2–1.2 s,
alternately with SIGKILL and SIGTERM. A last run reads to the end. Every number written must
appear exactly once in out, and every line of out must be whole JSON: prints lost, repeated,
torn; exit 1 when any is not 0.

Usage: soak-tail.py BINARY [CYCLES]   (env SOAK_SEED for the random kill times)
"""
import json, os, random, signal, subprocess, sys, tempfile, threading, time

JR = "/lib/systemd/systemd-journal-remote"
SID = "7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69"


class Writer(threading.Thread):
    def __init__(self, directory, rate=int(os.environ.get("SOAK_RATE", "2000"))):
        super().__init__(daemon=True)
        self.dir, self.rate = directory, rate
        self.written = 0
        self.file_no = 0
        self.stop = threading.Event()
        self.rotate = threading.Event()
        self.lock = threading.Lock()

    def start_file(self):
        path = os.path.join(self.dir, f"relay-{self.file_no}.journal")
        p = subprocess.Popen([JR, "--output=" + path, "-"], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=dict(os.environ, SYSTEMD_JOURNAL_COMPACT="0"))
        return path, p

    def run(self):
        path, p = self.start_file()
        t0 = int(time.time() * 1e6)
        while not self.stop.is_set():
            if self.rotate.is_set():
                self.rotate.clear()
                p.stdin.close()
                p.wait()
                os.rename(path, path.replace(".journal", f"@{self.file_no:016x}-archived.journal"))
                self.file_no += 1
                path, p = self.start_file()
            chunk = []
            for _ in range(max(1, self.rate // 50)):
                n = self.written + len(chunk)
                chunk.append(f"__REALTIME_TIMESTAMP={t0 + n * 1000}\n_PID=811\n_HOSTNAME=relay1\n"
                             f"SYSLOG_IDENTIFIER=broadcast-relay\nPRIORITY=6\n"
                             f"MESSAGE=session {n // 200:08x}{SID[8:]} stats frames=10 bytes={n} fps=10.0 dropped=0\n\n")
            p.stdin.write("".join(chunk).encode())
            p.stdin.flush()
            with self.lock:
                self.written += len(chunk)
            time.sleep(0.02)
        p.stdin.close()
        p.wait()


def main():
    binary = sys.argv[1]
    cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    rotate_every = max(1, cycles // 5)
    rng = random.Random(int(os.environ.get("SOAK_SEED", "12")))
    work = tempfile.mkdtemp(prefix="castscope-soak-")
    jdir = os.path.join(work, "journal")
    os.mkdir(jdir)
    cursor = os.path.join(work, "cursor")
    out_path = os.path.join(work, "out.jsonl")
    writer = Writer(jdir)
    writer.start()
    time.sleep(0.3)
    cmd = [binary, "tail", "-D", jdir, "--cursor-file", cursor, "--from-start", "--events", "--json"]
    kills = {"KILL": 0, "TERM": 0}
    with open(out_path, "ab") as out:
        for k in range(cycles):
            if k and k % rotate_every == 0:
                writer.rotate.set()
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.2, 1.2))
            sig = signal.SIGKILL if k % 2 == 0 else signal.SIGTERM
            p.send_signal(sig)
            p.wait()
            kills[sig.name[3:]] += 1
        writer.stop.set()
        writer.join()
        # The last run reads to the end of what was written, then stops on SIGTERM.
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        # (A debug build on a busy machine reads a few thousand entries a second: wait while
        # it makes progress.)
        last, stalled_since = -1, time.time()
        while time.time() - stalled_since < 30:
            time.sleep(0.5)
            with open(out_path, "rb") as f:
                seen = sum(1 for line in f if b'"type":"event"' in line)
            if seen >= writer.written:
                break
            if seen != last:
                last, stalled_since = seen, time.time()
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        p.wait()
    counts = {}
    torn = 0
    with open(out_path, "rb") as f:
        for line in f:
            try:
                obj = json.loads(line)
            except ValueError:
                torn += 1
                continue
            if obj.get("type") != "event":
                continue
            msg = obj.get("message", "")
            n = int(msg.split("bytes=")[1].split()[0])
            counts[n] = counts.get(n, 0) + 1
    lost = sum(1 for n in range(writer.written) if n not in counts)
    repeated = sum(c - 1 for c in counts.values() if c > 1)
    files = len(os.listdir(jdir))
    print(f"soak: {cycles} cycles ({kills['KILL']} SIGKILL, {kills['TERM']} SIGTERM), {writer.file_no} rotations "
          f"({files} journal files), {writer.written} entries written: {lost} lost, {repeated} repeated, {torn} torn lines")
    ok = lost == 0 and repeated == 0 and torn == 0
    if ok:
        subprocess.run(["rm", "-rf", work])
    else:
        print(f"soak: kept {work} for a look")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
