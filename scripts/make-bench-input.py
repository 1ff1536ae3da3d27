#!/usr/bin/env python3
"""Writes a noisy `log show` (default style) export of SIZE bytes for `make bench`: lines from
unrelated daemons (the shape of a sysdiagnose export) with broadcast sessions among them.

Densities (the bench must not be gamed by how many sessions an input has):
- sparse (the default, the bench's historical input): ~3 % of lines are one Jitsi-style
  session after another (started, a few attempts with the socket file missing, connected, then
  minutes of frame lines): a few hundred sessions in 256 MB.
- dense: 0.4 % of records start a session burst (Jitsi and Sendbird alternately, each a new
  extension process): started, attempts, connected, a few seconds of frames, and an end (10001,
  a call that ended, an error, or the log simply moving on); ~15 sessions per MB.

Usage: make-bench-input.py OUT SIZE_MB [sparse|dense]"""
import random, sys

out, size = sys.argv[1], int(sys.argv[2]) * 1024 * 1024
density = sys.argv[3] if len(sys.argv) > 3 else "sparse"
rnd = random.Random(42)
noise = [
    ("runningboardd", 33, "(RunningBoard) [com.apple.runningboard:process] [app<com.apple.mobilesafari>:512] Set jetsam priority to 100 [0] flag[1]"),
    ("mDNSResponder", 198, "[com.apple.mDNSResponder:Default] [R26089->Q10431] getaddrinfo start -- flags: 0xC000D000, ifindex: 0, protocols: 0"),
    ("locationd", 87, "[com.apple.locationd.Core:Client] os_transaction releasing: (0x16c179c20) GetIdentifyingInformation"),
    ("SpringBoard", 58, "(FrontBoard) [com.apple.FrontBoard:Process] [FBSceneManager] Scene lifecycle state did change: Foreground"),
    ("kernel", 0, "(AppleBCMWLANCore) wl0: Roamed or switched channel, reason #4, bssid 00:11:22:33:44:55, last RSSI -61"),
    ("cloudd", 631, "(CFNetwork) [com.apple.CFNetwork:ATS] Task <DB0FD7AC-C006-431E-9118-20771B476850>.<27> {strength 0, tls 4, sub 0}"),
    ("WirelessRadioManagerd", 120, "Received state update for 7642 (app<io.app.demo(7E2299AE)>, running-active-NotVisible"),
    ("assertiond", 64, "[com.apple.assertiond:assertion] Attempting to acquire assertion for com.apple.mobilemail: <BKProcessAssertion: 0x1030>"),
]


def sparse_sessions():
    """One broadcast session's extension lines, forever (a new session after each ends)."""
    pid = 812
    while True:
        yield pid, "broadcast started"
        for _ in range(rnd.randint(1, 3)):
            yield pid, "Open socket connection"
            yield pid, "failure: socket file missing"
        yield pid, "Open socket connection"
        yield pid, "client stream open completed"
        yield pid, "client stream open completed"
        for _ in range(rnd.randint(600, 6000)):
            yield pid, "video sample processed successfully"
        pid += 7


SOCK = "/private/var/mobile/Containers/Shared/AppGroup/0C7E1B2A-44F1-4C57-9A7E-8D3B5E1F9A20/sb_ss.sock"


def burst(k, pid):
    """The extension lines of one short session (a list of (step µs, message))."""
    lines = []
    if k % 2 == 0:  # Jitsi design: 100 ms timer, frames every ~100 ms
        lines.append((0, "broadcast started"))
        for _ in range(rnd.randint(0, 3)):
            lines += [(100_000, "Open socket connection"), (200, "failure: socket file missing")]
        lines += [(100_000, "Open socket connection"), (300, "client stream open completed"),
                  (50, "client stream open completed")]
        lines += [(rnd.randint(90_000, 110_000), "video sample processed successfully") for _ in range(rnd.randint(10, 30))]
        end = rnd.random()
        if end < 0.4:
            lines += [(1000, "server socket closed"), (50, "client connection did close: (null)")]
        elif end < 0.6:
            lines += [(1000, "client stream error occurred: Error Domain=NSPOSIXErrorDomain Code=32 \"Broken pipe\""),
                      (50, "client connection did close: Error Domain=NSPOSIXErrorDomain Code=32 \"Broken pipe\"")]
    else:  # Sendbird: 5 × 0.3 s retries
        lines += [(0, "[SBCBroadcast] broadcastStarted - appGroup=group.com.example.calls"),
                  (1000, "[SBCBroadcast] Attempting socket connection (max retries: 5)"),
                  (1000, f"[SBCBroadcast] SocketClient init: socketPath={SOCK}")]
        for left in range(4, 4 - rnd.randint(0, 2), -1):
            lines += [(1000, f"[SBCBroadcast] SocketClient.connect: socketPath={SOCK}, exists=0"),
                      (200, "[SBCBroadcast] SocketClient.connect: connect() failed, errno=2 (No such file or directory)"),
                      (200, f"[SBCBroadcast] Socket connect failed, retrying in 0.3s (retries left: {left})")]
        lines += [(300_000, f"[SBCBroadcast] SocketClient.connect: socketPath={SOCK}, exists=1"),
                  (300, "[SBCBroadcast] SocketClient.connect: connected successfully"),
                  (100, "[SBCBroadcast] Socket connected successfully")]
        lines += [(rnd.randint(1_000_000, 4_000_000), "[SBCBroadcast] broadcastPaused"),
                  (rnd.randint(100_000, 900_000), "[SBCBroadcast] broadcastResumed")] * rnd.randint(0, 2)
        if rnd.random() < 0.7:
            lines += [(rnd.randint(2_000_000, 9_000_000), "[SBCBroadcast] Send failed (reason=The call has ended), finishing broadcast"),
                      (2000, "[SBCBroadcast] broadcastFinished")]
    return [(step, pid, msg) for step, msg in lines]


sparse_ext = sparse_sessions()
day = "2026-03-12"
us = 0
pending = []  # lines of bursts under way: (due µs, pid, message)
bursts = 0
pid = 2100
with open(out, "w") as f:
    written = 0
    while written < size:
        lines = []
        for _ in range(1000):
            us += rnd.randint(50, 3000)
            s, u = divmod(us, 1_000_000)
            ts = f"{day} {10 + s // 3600 % 12:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{u:06d}+0100"
            proc = "BroadcastExtension"
            if density == "sparse" and rnd.random() < 0.03:
                p, msg = next(sparse_ext)
            elif density == "dense" and pending and pending[0][0] <= us:
                _, p, msg = pending.pop(0)
            elif density == "dense" and rnd.random() < 0.004:
                # A new session burst: its lines come due over the next seconds, among the noise.
                pid += 7
                t = us
                for step, bp, m in burst(bursts, pid):
                    t += step
                    pending.append((t, bp, m))
                pending.sort()
                bursts += 1
                _, p, msg = pending.pop(0)
            else:
                proc, p, msg = rnd.choice(noise)
            lines.append(f"{ts} 0x{rnd.randint(0x1000, 0xfffff):<8x} {'Default':<11} 0x0{' ' * 18}{p:<6} 0    {proc}: {msg}\n")
        chunk = "".join(lines)
        f.write(chunk)
        written += len(chunk)
print(out, written, bursts)
