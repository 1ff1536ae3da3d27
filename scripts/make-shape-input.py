#!/usr/bin/env python3
"""Session shapes that `make-bench-input.py`'s densities do not cover, for memory and speed
probes (issue 15: peak RSS must stay under 64 MB at every density and shape).

  make-shape-input.py churn OUT MB K       K extension sessions open at once, their lines
                                           interleaved (`log stream` style); each short
                                           (connect, ~180 frames, close); one ending is
                                           replaced by a new process at once
  make-shape-input.py relay OUT MB K       a relay's text (`journalctl -o short-iso-precise`)
                                           with K sessions open at once, each accepted,
                                           ~60 stats lines, closed
  make-shape-input.py relay-yearless OUT MB K   the same as `-o short-precise` (no year)
  make-shape-input.py relay-export OUT MB K     the same as `journalctl -o export` on stdout
                                           when OUT is -, for systemd-journal-remote
  make-shape-input.py mix OUT MB           one extension session streaming for the whole
                                           file (`log show` default style) whose frame
                                           lines interleave with the host app's recognized
                                           lines and unrelated daemons' lines

Deterministic (seeded); MB is the size written, in MiB.
"""
import random
import sys
import time

SID = "-1b7e-4f0e-9a51-2f1d3c4b5a69"


def writer(out):
    return sys.stdout if out == "-" else open(out, "w")


def stream_ts(us):
    """`log stream` style time at +0100, from microseconds after 2026-03-12 00:00 local."""
    s, u = divmod(us, 1_000_000)
    return f"2026-03-{12 + s // 86400:02d} {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{u:06d}+0100"


def churn(out, mb, k):
    rnd = random.Random(46)
    size = mb << 20

    def script():
        lines = ["broadcast started"]
        for _ in range(rnd.randint(0, 2)):
            lines += ["Open socket connection", "failure: socket file missing"]
        lines += ["Open socket connection", "client stream open completed", "client stream open completed"]
        lines += ["video sample processed successfully"] * rnd.randint(150, 210)
        lines += ["server socket closed", "client connection did close: (null)"]
        return lines

    next_pid = 2000
    live = []
    for _ in range(k):
        live.append([next_pid, script(), 0])
        next_pid += 1
    us, written, started = 0, 0, k
    f = writer(out)
    f.write("Timestamp                       (process)[PID]\n")
    while written < size:
        buf = []
        for _ in range(20000):
            us += rnd.randint(1, 200)
            i = rnd.randrange(k)
            pid, lines, at = live[i]
            buf.append(f"{stream_ts(us)}  localhost BroadcastExtension[{pid}]: {lines[at]}\n")
            if at + 1 == len(lines):
                live[i] = [next_pid, script(), 0]
                next_pid += 1
                started += 1
                if next_pid > 99999:
                    next_pid = 2000
            else:
                live[i][2] = at + 1
        chunk = "".join(buf)
        f.write(chunk)
        written += len(chunk)
    if f is not sys.stdout:
        f.close()
    print(f"{out}: {written} bytes, {started} sessions started", file=sys.stderr)


def relay(out, mb, k, style):
    rnd = random.Random(47)
    size = mb << 20
    t0 = 1773266400 * 1_000_000  # 2026-03-11 22:00:00 UTC

    def ts(us):
        s, u = divmod(t0 + us, 1_000_000)
        t = time.gmtime(s)
        if style == "yearless":
            return time.strftime("%b %e %H:%M:%S", t) + f".{u:06d}"
        return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{u:06d}+00:00"

    n = 0
    live = []

    def new():
        nonlocal n
        n += 1
        return [f"{n:08x}{SID}", 0, rnd.randint(40, 80), 0]  # id, stats so far, stats wanted, frames

    for _ in range(k):
        live.append(new())
    us, written = 0, 0
    f = writer(out)
    while written < size:
        buf = []
        for _ in range(20000):
            us += rnd.randint(1, 200)
            i = rnd.randrange(k)
            s = live[i]
            if s[1] == 0 and s[3] == 0:
                msg = f"session {s[0]} accepted peer=iPhone14,2 room=r{k}"
                s[3] = 1
            elif s[1] < s[2]:
                s[1] += 1
                msg = f"session {s[0]} stats frames=10 bytes={281000 + s[1]} fps=10.0 dropped=0"
            else:
                msg = f"session {s[0]} closed reason=peer-eof frames={s[1] * 10} duration={s[1]}.0s"
                live[i] = new()
            if style == "export":
                buf.append(f"__REALTIME_TIMESTAMP={t0 + us}\n_HOSTNAME=relay1\n_PID=811\nSYSLOG_IDENTIFIER=broadcast-relay\n"
                           f"_SYSTEMD_UNIT=broadcast-relay.service\nPRIORITY=6\nMESSAGE={msg}\n\n")
            else:
                buf.append(f"{ts(us)} relay1 broadcast-relay[811]: {msg}\n")
        chunk = "".join(buf)
        f.write(chunk)
        written += len(chunk)
    if f is not sys.stdout:
        f.close()
    print(f"{out}: {written} bytes, {n} relay sessions", file=sys.stderr)


def mix(out, mb):
    rnd = random.Random(5)
    size = mb << 20
    head = "Timestamp                       Thread     Type        Activity             PID    TTL  \n"

    def ts(us):
        s, u = divmod(us, 1_000_000)
        return f"2026-03-12 {8 + s // 3600 % 14:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{u:06d}+0100"
    ext = " 0x2f1c4    Default     0x0                  812    0    BroadcastExtension: "
    host = ["[AudioMode] Selected device: Speaker {n}", "[JitsiMeetSDK] conference joined {n}", "server stream open completed",
            "Broadcast started", "[JitsiMeetSDK] participant left id={n}",
            "kernel: memorystatus: set assertion priority({n}) target BroadcastExtension:812"]
    us, written, n = 0, 0, 0
    f = writer(out)
    buf = [head]
    for m in ["broadcast started", "Open socket connection", "client stream open completed"]:
        us += 1000
        buf.append(ts(us) + ext + m + "\n")
    while written < size:
        for _ in range(5000):
            us += 1000
            n += 1
            r = rnd.random()
            if r < 0.5:
                buf.append(ts(us) + ext + "video sample processed successfully\n")
            elif r < 0.7:
                buf.append(f"{ts(us)} 0x2e0a1    Default     0x0                  640    0    JitsiDemo: "
                           f"[org.jitsi.demo:JitsiMeetSDK] {rnd.choice(host).format(n=n)}\n")
            else:
                buf.append(f"{ts(us)} 0x1a2      Default     0x0                  33     0    runningboardd: "
                           f"(RunningBoard) Set jetsam priority to {n % 100} [0] flag[1]\n")
        chunk = "".join(buf)
        f.write(chunk)
        written += len(chunk)
        buf = []
    if f is not sys.stdout:
        f.close()


def main():
    a = sys.argv
    if len(a) < 4:
        sys.exit(__doc__)
    shape, out, mb = a[1], a[2], int(a[3])
    if shape == "churn":
        churn(out, mb, int(a[4]))
    elif shape in ("relay", "relay-yearless", "relay-export"):
        relay(out, mb, int(a[4]), {"relay": "iso", "relay-yearless": "yearless", "relay-export": "export"}[shape])
    elif shape == "mix":
        mix(out, mb)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
