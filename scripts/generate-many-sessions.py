#!/usr/bin/env python3
"""Writes one log (`log stream` style) with N screen-sharing sessions, for the report tests
(`python3 scripts/generate-many-sessions.py N OUT.log`). Nothing it writes is committed.

Every tenth session never connects (a retry storm on a missing socket file), every seventh
ends on a socket error whose text carries backticks, `**`, `|` and a redacted `<private>`
close reason; the rest connect, stream and stop. Deterministic: session k starts k×97 s
after 08:00 on 2026-03-12.
"""
import datetime as dt
import sys

TZ = dt.timezone(dt.timedelta(hours=1))


def ts(d):
    return d.strftime("%Y-%m-%d %H:%M:%S.%f%z")


def session(k, out):
    t0 = dt.datetime(2026, 3, 12, 8, 0, 0, tzinfo=TZ) + dt.timedelta(seconds=97 * k, microseconds=1000 * (k % 13))
    pid = 2000 + k
    def line(ms, text, proc="BroadcastExtension", p=None):
        out.append((t0 + dt.timedelta(milliseconds=ms),
                    f"{ts(t0 + dt.timedelta(milliseconds=ms))}  localhost {proc}[{p or pid}]: {text}"))
    line(0, "broadcast started")
    if k % 10 == 3:
        for i in range(12):
            line(5 + 100 * i, "open socket connection")
            line(6 + 100 * i, "failure: socket file missing")
        line(1400, "broadcast finished")
        return
    line(5, "Open socket connection")
    line(7, "client stream open completed")
    line(8, "server stream open completed", proc="HostApp", p=900 + k)
    for i in range(8):
        line(100 + 100 * i, "video sample processed successfully")
    if k % 7 == 5:
        line(950, "client stream error occured: Error Domain=`NSPOSIXErrorDomain` Code=32 **Broken pipe** a|b")
        line(951, "client connection did close <private>")
        return
    line(1000, "server stream end encountered", proc="HostApp", p=900 + k)
    line(1001, "broadcast finished")


def main():
    n = int(sys.argv[1])
    out = []
    for k in range(n):
        session(k, out)
    out.sort(key=lambda r: r[0])
    with open(sys.argv[2], "w") as f:
        f.write("Timestamp                       (process)[PID]\n")
        f.write("\n".join(text for _, text in out) + "\n")


if __name__ == "__main__":
    main()
