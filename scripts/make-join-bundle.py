#!/usr/bin/env python3
"""make-join-bundle.py SEED N PERIOD NOISE_PER_MIN OFFSET OUTDIR

A generated bundle for checking relay joins: OUTDIR/phone.log, a phone's N broadcasts (`log
show` text, one every PERIOD s on average, 5 to 90 s long), and OUTDIR/relay.export, a relay's
journal in export format (make a journal file of it with `systemd-journal-remote
--output=relay.journal - < relay.export`) with each broadcast's relay session (room rK for the
phone's K-th broadcast, S(K+1) in castscope's numbering; the relay's clock OFFSET s ahead,
±0.3 s of jitter) and other phones' sessions at random (NOISE_PER_MIN a minute, 5 to 90 s
long, room o). Constructed data, not a real relay's."""
import sys, random, os, uuid
seed, n, period, noise, offset, out = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
rng = random.Random(seed)
BASE = 1773307200.0  # 2026-03-12 09:20:00 UTC
os.makedirs(out, exist_ok=True)
def ts(t):
    tt = BASE + t + 3600
    sec = int(tt); us = int(round((tt - sec) * 1e6))
    if us >= 1000000: sec += 1; us -= 1000000
    import time
    g = time.gmtime(sec)
    return "%04d-%02d-%02d %02d:%02d:%02d.%06d+0100" % (g.tm_year, g.tm_mon, g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec, us)
phone = []; relay = []
def R(t, sid, ev, msg, extra=()):
    relay.append((t, sid, ev, msg, extra))
t = 0.0
for k in range(n):
    t += period * (0.5 + rng.random())
    pid = 3000 + k
    dur = rng.uniform(5, 90)
    P = lambda dt, m: phone.append((t + dt, "%s  localhost BroadcastExtension[%d]: [io.livekit.example.flutter:Broadcast] %s\n" % (ts(t + dt), pid, m)))
    P(0, "broadcast started"); P(0.005, "open socket connection"); P(0.007, "client stream open completed")
    f = 0.107
    while f < dur: P(f, "video sample processed successfully"); f += 0.5
    P(dur, "server socket closed"); P(dur + 0.001, "client connection did close: (null)")
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    a = t + 0.007 + offset + rng.uniform(-0.3, 0.3)
    c = t + dur + offset + rng.uniform(-0.3, 0.3)
    R(a, sid, "accepted", "accepted peer=iPhone14,2 room=r%d" % k, ("RELAY_PEER=iPhone14,2", "RELAY_ROOM=r%d" % k))
    s = a + 1
    while s < c: R(s, sid, "stats", "stats frames=10 bytes=281461 fps=10.0 dropped=0", ("RELAY_FRAMES=10", "RELAY_FPS=10.0")); s += 1
    R(c, sid, "closed", "closed reason=peer-eof frames=%d duration=%.1fs" % (int(dur * 2), c - a), ("RELAY_REASON=peer-eof", "RELAY_FRAMES=%d" % int(dur * 2)))
end = t + 120
x = -300.0
while noise > 0:
    x += rng.expovariate(noise / 60.0)
    if x > end + offset: break
    dur = rng.uniform(5, 90)
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    R(x, sid, "accepted", "accepted peer=iPad13,4 room=o", ("RELAY_PEER=iPad13,4", "RELAY_ROOM=o"))
    s = x + 1
    while s < x + dur: R(s, sid, "stats", "stats frames=10 bytes=281461 fps=10.0 dropped=0", ("RELAY_FRAMES=10", "RELAY_FPS=10.0")); s += 1
    R(x + dur, sid, "closed", "closed reason=peer-eof frames=%d duration=%.1fs" % (int(dur * 2), dur), ("RELAY_REASON=peer-eof", "RELAY_FRAMES=%d" % int(dur * 2)))
phone.sort(key=lambda p: p[0]); relay.sort(key=lambda r: r[0])
with open(os.path.join(out, "phone.log"), "w") as fh:
    fh.write("Timestamp                       (process)[PID]\n")
    for _, l in phone: fh.write(l)
with open(os.path.join(out, "relay.export"), "w") as fh:
    for i, (t, sid, ev, msg, extra) in enumerate(relay):
        us = int((BASE + t) * 1e6)
        fields = ["__CURSOR=s=4f1d0c6e2b8a4e55a0c3d9b7e1f2a3b4;i=%x;b=9b2e6c1d4f3a4b5c8d7e6f5a4b3c2d1e;m=%x;t=%x;x=1" % (i + 1, i + 1, us),
                  "__REALTIME_TIMESTAMP=%d" % us, "__MONOTONIC_TIMESTAMP=%d" % (1000000000 + i * 1000),
                  "_BOOT_ID=9b2e6c1d4f3a4b5c8d7e6f5a4b3c2d1e", "_PID=811", "_HOSTNAME=relay1", "_TRANSPORT=journal",
                  "_SYSTEMD_UNIT=broadcast-relay.service", "SYSLOG_IDENTIFIER=broadcast-relay", "PRIORITY=6",
                  "RELAY_SESSION=" + sid, "RELAY_EVENT=" + ev] + list(extra) + ["MESSAGE=session %s %s" % (sid, msg)]
        fh.write("\n".join(fields) + "\n\n")
