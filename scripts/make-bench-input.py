#!/usr/bin/env python3
"""Writes a noisy `log show` (default style) export of SIZE bytes for `make bench`: ~97 % lines
from unrelated daemons (the shape of a sysdiagnose export), the rest Jitsi-style broadcast
sessions one after another (ObjC extension, NSLog): started, a few attempts with the socket
file missing, connected, then minutes of frame lines. Usage: make-bench-input.py OUT SIZE_MB"""
import random, sys

out, size = sys.argv[1], int(sys.argv[2]) * 1024 * 1024
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
def session_lines():
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


ext = session_lines()
day = "2026-03-12"
us = 0
with open(out, "w") as f:
    written = 0
    while written < size:
        lines = []
        for _ in range(1000):
            us += rnd.randint(50, 3000)
            s, u = divmod(us, 1_000_000)
            ts = f"{day} {10 + s // 3600 % 12:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{u:06d}+0100"
            if rnd.random() < 0.03:
                pid, msg = next(ext)
                proc = "BroadcastExtension"
            else:
                proc, pid, msg = rnd.choice(noise)
            lines.append(f"{ts} 0x{rnd.randint(0x1000, 0xfffff):<8x} {'Default':<11} 0x0{' ' * 18}{pid:<6} 0    {proc}: {msg}\n")
        chunk = "".join(lines)
        f.write(chunk)
        written += len(chunk)
print(out, written)
