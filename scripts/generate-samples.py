#!/usr/bin/env python3
"""Writes the sample bundles in samples/ (run from anywhere; `make samples`) (deterministic: fixed seeds, fixed archive metadata).

Every scenario is a folder; what each shows is in samples/README.md. The logs are written
for this project in the exact layouts of ../shared/reference/log-formats.md, with the SDK
messages of log-vocabulary.md. Run `make samples` after changing this file, then
`make expected` to refresh the expected reports (and review the diff).
"""
import datetime as dt
import gzip
import io
import json
import pathlib
import random
import tarfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent / "samples"
TZ = dt.timezone(dt.timedelta(hours=1))
# The relay server's clock runs this far ahead of the phone's (what castscope must estimate).
RELAY_AHEAD = dt.timedelta(milliseconds=2350)


def t(h, m, s, us=0, day=12):
    return dt.datetime(2026, 3, day, h, m, s, us, tzinfo=TZ)


def apple_ts(d):  # 2026-03-12 10:15:02.104211+0100
    return d.strftime("%Y-%m-%d %H:%M:%S.%f%z")


def ms(d, n):
    return d + dt.timedelta(milliseconds=n)


class Log:
    def __init__(self):
        self.rows = []  # (time, text-producing callable)

    def add(self, when, **kw):
        self.rows.append((when, kw))

    def sorted(self):
        return sorted(self.rows, key=lambda r: r[0])


def apple_default(rows):
    out = ['Filtering the log data using "process IN {\'BroadcastExtension\', \'JitsiDemo\', \'kernel\'}"',
           "Timestamp                       Thread     Type        Activity             PID    TTL  "]
    counts = {"Default": 0, "Info": 0, "Error": 0}
    for when, r in rows:
        typ = r.get("type", "Default")
        counts[typ] = counts.get(typ, 0) + 1
        sub = f"[{r['subsystem']}:{r['category']}] " if r.get("subsystem") else ""
        lib = f"({r['library']}) " if r.get("library") else ""
        out.append(f"{apple_ts(when)} {r['tid']:<10} {typ:<11} {'0x0':<20} {r['pid']:<6} {0:<4} {r['proc']}: {lib}{sub}{r['msg']}")
    out.append("-" * 116)
    out.append(f"Log      - Default: {counts['Default']:>10}, Info: {counts['Info']:>16}, Debug: {0:>13}, Error: {counts['Error']:>10}, Fault: {0:>10}")
    out.append(f"Activity - Create: {0:>11}, Transition: {0:>10}, Actions: {0:>11}")
    return "\n".join(out) + "\n"


def healthy_jitsi():
    """ObjC Jitsi extension (NSLog) + host app, from `log show` default style: connects on the
    3rd attempt, 30 frames, the user stops the broadcast, the host app sees the stream end."""
    rnd = random.Random(1)
    L = Log()
    ext = dict(proc="BroadcastExtension", pid=812, tid="0x2f1c4")
    app = dict(proc="JitsiDemo", pid=640, tid="0x2e0a1")
    t0 = t(10, 15, 2, 104211)
    L.add(ms(t0, -900), proc="JitsiDemo", pid=640, tid="0x2e0a1", msg="[AudioMode] Selected device: Speaker", subsystem="org.jitsi.demo", category="JitsiMeetSDK", type="Info")
    L.add(ms(t0, -400), proc="kernel", pid=0, tid="0x1a2", msg="memorystatus: set assertion priority(3) target BroadcastExtension:812")
    L.add(t0, msg="broadcast started", **ext)
    at = t0
    for i in range(3):
        at = ms(at, 5 if i == 0 else 98 + rnd.randint(0, 12))
        L.add(at, msg="Open socket connection", **ext)
        if i < 2:
            L.add(ms(at, 1), msg="failure: socket file missing", **ext)
    L.add(ms(at, 2), msg="server stream open completed", **app)
    L.add(ms(at, 3), msg="client stream open completed", **ext)
    L.add(ms(at, 3) + dt.timedelta(microseconds=40), msg="client stream open completed", **ext)
    L.add(ms(at, 4), msg="Broadcast started", **app)
    L.add(ms(at, 6), msg="Post PowerLog {\n\"VDCAssistant_Device_GUID\" = \"00000000-1432-0000-1234-000022470000\";\n}", proc="BroadcastExtension", pid=812, tid="0x2f1c4", library="CoreMedia")
    f = ms(at, 40)
    for i in range(30):
        f = ms(f, 100 + rnd.randint(-3, 3))
        L.add(f, msg="video sample processed successfully", **ext)
    L.add(ms(f, 450), msg="server stream end encountered", **app)
    L.add(ms(f, 452), msg="Broadcast stopped", **app)
    L.add(ms(f, 453), msg="[TrackCapturerEventsEmitter] ended event for track 7A1C5F0B", subsystem="com.facebook.react.log", category="native", type="Info", **app)
    return {"healthy-jitsi/sysdiagnose-log-show.txt": apple_default(L.sorted())}


def retry_storm():
    """LiveKit-Flutter copy of the Jitsi extension, `log stream --level debug --style syslog`:
    the host app never opened the socket; 37 attempts every ~100 ms (timer leeway), then the
    log ends (the user gave up)."""
    rnd = random.Random(2)
    lines = ["Timestamp                       (process)[PID]"]
    t0 = t(10, 20, 0, 512204)
    pre = "BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast]"
    lines.append(f"{apple_ts(ms(t0, -20))}  localhost BroadcastExtension[1204]: (ReplayKit) [com.apple.ReplayKit:RPBroadcastExtension] extension started")
    lines.append(f"{apple_ts(t0)}  localhost {pre} /private/var/mobile/Containers/Shared/AppGroup/6B1E0F1A/rtc_SSFD")
    at = t0
    for i in range(37):
        at = ms(at, 2 if i == 0 else 100 + rnd.choice([0, 1, 2, 3, 4, 5, 8, 12]))
        lines.append(f"{apple_ts(at)}  localhost {pre} open socket connection")
        lines.append(f"{apple_ts(ms(at, 0) + dt.timedelta(microseconds=310))}  localhost {pre} failure: socket file missing")
    lines.append(f"{apple_ts(ms(at, 2400))}  localhost SpringBoard[58]: [com.apple.SpringBoard:Common] Dismissing banner for notification")
    return {"retry-storm/log-stream-debug.txt": "\n".join(lines) + "\n"}


def idevice_ts(d):  # "Mar 12 11:02:07" (day padded with a space)
    return d.strftime("%b ") + f"{d.day:>2}" + d.strftime(" %H:%M:%S")


def stopped_10001():
    """ObjC Jitsi extension over idevicesyslog (no year, seconds only) and the host app's Xcode
    console: streaming until the host app is suspended by runningboardd; the server end closes,
    and the extension stops with 10001."""
    rnd = random.Random(3)
    t0 = t(11, 2, 7, 0)
    sys_lines, xc = ["[connected:00008110-001A2C3E0E88801E]"], []
    def sl(d, proc, pid, msg, level="Notice"):
        sys_lines.append(f"{idevice_ts(d)} {proc}[{pid}] <{level}>: {msg}")
    def xl(d, msg, tid=1168260):
        xc.append(f"{apple_ts(d)} JitsiDemo[701:{tid}] {msg}")
    xl(ms(t0, -3000), "[JitsiMeetSDK] [modules/RTC/ScreenObtainer] Using getDisplayMedia for screen sharing")
    sl(t0, "BroadcastExtension", 915, "broadcast started")
    sl(t0, "BroadcastExtension", 915, "Open socket connection")
    sl(t0, "BroadcastExtension", 915, "client stream open completed")
    sl(t0, "BroadcastExtension", 915, "client stream open completed")
    xl(ms(t0, 180), "server stream open completed")
    xl(ms(t0, 182), "Broadcast started")
    d = t0
    for i in range(20):
        d = d + dt.timedelta(seconds=1)
        for k in range(10):  # ten frames a second; the syslog relay prints whole seconds
            sl(d, "BroadcastExtension", 915, "video sample processed successfully")
    susp = d + dt.timedelta(seconds=1)
    sl(susp, "runningboardd", 33, "Calculated state for app<org.jitsi.demo(4B1F0D8E-7C51-4B8A-9F0E-2C7D1A6B3E95)>: running-suspended (role: None) (endowments: (null))")
    sl(susp, "runningboardd", 33, "[app<org.jitsi.demo(4B1F0D8E-7C51-4B8A-9F0E-2C7D1A6B3E95)>:701] Set jetsam priority to 30 [0] flag[1]")
    sl(susp, "BroadcastExtension", 915, "server socket closed")
    sl(susp, "BroadcastExtension", 915, "client connection did close: (null)")
    sl(susp + dt.timedelta(seconds=1), "SpringBoard", 58, "Broadcast picker dismissed", "Notice")
    sys_lines.append("[disconnected]")
    return {"stopped-10001/device-syslog.txt": "\n".join(sys_lines) + "\n",
            "stopped-10001/host-app-xcode.txt": "\n".join(xc) + "\n"}


def jetsam_kill():
    """Console.app copy (no date) of the extension and the kernel: streaming at full size until
    the kernel kills the extension at the 50 MB limit; the host app's `log show` (with dates)
    sees the stream end."""
    rnd = random.Random(4)
    t0 = t(23, 59, 50, 118204)  # crosses midnight: Console.app copy has no date
    rows = []
    def cl(d, proc, msg, typ="default"):
        rows.append(f"{typ}\t{d.strftime('%H:%M:%S.%f%z')}\t{proc}\t{msg}")
    cl(t0, "BroadcastExtension", "broadcast started")
    cl(ms(t0, 3), "BroadcastExtension", "Open socket connection")
    cl(ms(t0, 5), "BroadcastExtension", "client stream open completed")
    cl(ms(t0, 5), "BroadcastExtension", "client stream open completed")
    d = ms(t0, 40)
    for i in range(120):
        d = ms(d, 100 + rnd.randint(-4, 4))
        cl(d, "BroadcastExtension", "video sample processed successfully")
        if i % 40 == 39:
            cl(ms(d, 1), "BroadcastExtension", "client stream has space available")
    cl(ms(d, 60), "kernel", "EXC_RESOURCE -> BroadcastExtension[2210] exceeded mem limit: ActiveHard 50 MB (fatal)", "error")
    cl(ms(d, 61), "kernel", "memorystatus: killing_specific_process pid 2210 [BroadcastExtension] (per-process-limit 10) 51200KB - memorystatus_available_pages: 41522")
    host = Log()
    app = dict(proc="JitsiDemo", pid=640, tid="0x3a0c1")
    host.add(ms(t0, 4), msg="server stream open completed", **app)
    host.add(ms(d, 75), msg="server stream end encountered", **app)
    return {"jetsam-kill/console-copy.txt": "\n".join(rows) + "\n",
            "jetsam-kill/host-app-log-show.txt": apple_default(host.sorted())}


def ndjson_row(d, proc, pid, msg, subsystem="", category="", typ="Default", tid=None):
    path = {"BroadcastExt": "/private/var/containers/Bundle/Application/9E2C/CallsDemo.app/PlugIns/BroadcastExt.appex/BroadcastExt",
            "CallsDemo": "/private/var/containers/Bundle/Application/9E2C/CallsDemo.app/CallsDemo"}.get(proc, "/usr/libexec/" + proc)
    rec = {"timezoneName": "", "messageType": typ, "eventType": "logEvent", "source": None,
           "formatString": "%@", "userID": 501, "activityIdentifier": 0, "subsystem": subsystem, "category": category,
           "threadID": tid or (pid * 37 % 100000 + 600000), "senderImageUUID": "BB6669E7-A1B7-3807-AF97-FBF5D0D0B4D5",
           "backtrace": {"frames": [{"imageOffset": 279748, "imageUUID": "BB6669E7-A1B7-3807-AF97-FBF5D0D0B4D5"}]},
           "bootUUID": "E312ED28-914E-4C3C-9B9E-4926AFCCD890", "processImagePath": path, "senderImagePath": path,
           "timestamp": apple_ts(d), "machTimestamp": 2030766390595, "eventMessage": msg,
           "processImageUUID": "4044151C-2EEE-3A42-9F88-BDEE75975064", "traceID": 2175280710025220,
           "processID": pid, "senderProgramCounter": 279748, "parentActivityIdentifier": 0}
    return json.dumps(rec, separators=(",", ":")).replace("/", "\\/")


def sendbird_call_ended():
    """Sendbird Calls extension and app, `log show --style ndjson --predicate 'eventMessage
    CONTAINS "SBCBroadcast"'`: first attempt finds no socket (errno 2), the retry 0.3 s later
    connects, and 41 s later the call ends and the app signals a graceful shutdown."""
    t0 = t(14, 30, 11, 250117)
    sock = "/private/var/mobile/Containers/Shared/AppGroup/0C7E1B2A-44F1-4C57-9A7E-8D3B5E1F9A20/sb_ss.sock"
    rows = []
    E = ("BroadcastExt", 1533)
    A = ("CallsDemo", 1490)
    def r(d, who, msg):
        rows.append((d, ndjson_row(d, who[0], who[1], msg)))
    r(ms(t0, -2200), A, f"[SBCBroadcast] SocketServer init: socketPath={sock}")
    r(ms(t0, -2198), A, "[SBCBroadcast] Server started, awaiting extension connection")
    r(ms(t0, -2190), A, "[SBCBroadcast] Showing broadcast picker (extensionBundleId: com.example.calls.BroadcastExt)")
    r(t0, E, "[SBCBroadcast] broadcastStarted - appGroup=group.com.example.calls")
    r(ms(t0, 1), E, "[SBCBroadcast] Attempting socket connection (max retries: 5)")
    r(ms(t0, 2), E, f"[SBCBroadcast] SocketClient init: socketPath={sock}")
    r(ms(t0, 3), E, f"[SBCBroadcast] SocketClient.connect: socketPath={sock}, exists=0")
    r(ms(t0, 3), E, "[SBCBroadcast] SocketClient.connect: connect() failed, errno=2 (No such file or directory)")
    r(ms(t0, 4), E, "[SBCBroadcast] Socket connect failed, retrying in 0.3s (retries left: 4)")
    r(ms(t0, 120), A, f"[SBCBroadcast] SocketServer.start: preparing at path={sock}")
    r(ms(t0, 121), A, f"[SBCBroadcast] SocketServer.start: listening on path={sock}")
    r(ms(t0, 306), E, f"[SBCBroadcast] SocketClient.connect: socketPath={sock}, exists=1")
    r(ms(t0, 307), E, "[SBCBroadcast] SocketClient.connect: connected successfully")
    r(ms(t0, 307), E, "[SBCBroadcast] Socket connected successfully")
    r(ms(t0, 309), A, "[SBCBroadcast] SocketServer: client connected")
    r(ms(t0, 310), A, "[SBCBroadcast] Extension connected to server")
    end = ms(t0, 41_870)
    r(end, A, "[SBCBroadcast] SocketServer: signaling graceful shutdown (reason: The call has ended)")
    r(ms(end, 35), E, "[SBCBroadcast] SocketClient: send failed, closing connection")
    r(ms(end, 36), E, "[SBCBroadcast] Send failed (reason=The call has ended), finishing broadcast")
    r(ms(end, 52), E, "[SBCBroadcast] broadcastFinished")
    r(ms(end, 60), A, "[SBCBroadcast] Extension disconnected")
    rows.sort(key=lambda x: x[0])
    text = "\n".join(x[1] for x in rows) + "\n" + '{"count":%d,"finished":1}\n' % len(rows)
    return {"sendbird-call-ended/log-show.ndjson": text}


# ---- the mixed bundle: every format in one tar.gz, with a zip inside ------------------------

def mixed_members():
    """A LiveKit session (ndjson, apple json, compact, log stream syslog style) and a Jitsi
    Swift-sample session in Xcode (print lines), plus relay journald exports in every
    journalctl format, idevicesyslog and a Console.app copy, as a support bundle."""
    rnd = random.Random(6)
    t0 = t(16, 5, 30, 402117)
    m = {}
    # LiveKit extension (os_log, category LKSampleHandler) in ndjson.
    def lk(d, msg, cat="LKSampleHandler", proc="BroadcastExt", pid=2044):
        return ndjson_row(d, proc, pid, msg, subsystem="io.livekit.sdk", category=cat, typ="Info")
    nd = [lk(ms(t0, -50), "LKSampleHandler created"), lk(t0, "Broadcast started"),
          lk(ms(t0, 40), "Uploader connected"),
          ndjson_row(ms(t0, 41), "CallsDemo", 2001, "Broadcast receiver connected", "io.livekit.sdk", "BroadcastScreenCapturer", "Debug"),
          lk(ms(t0, 95_000), "Broadcast finished"),
          ndjson_row(ms(t0, 95_010), "CallsDemo", 2001, "Broadcast receiver closed", "io.livekit.sdk", "BroadcastScreenCapturer", "Debug")]
    m["device/livekit-log-show.ndjson"] = "\n".join(nd) + '\n{"count":6,"finished":1}\n'
    # The same day in Apple's pretty JSON: unrelated noise plus one system line.
    recs = []
    for k, (d, proc, pid, msg) in enumerate([(ms(t0, -5000), "runningboardd", 33, "Acquiring assertion targeting app<io.livekit.demo>"),
                                             (ms(t0, 20), "replayd", 120, "startBroadcastWithHandler"),
                                             (ms(t0, 95_100), "runningboardd", 33, "Invalidating assertion for BroadcastExt")]):
        recs.append(json.dumps({"traceID": 78134079258628 + k, "messageType": "Default", "eventType": "logEvent",
                                "processImagePath": "/usr/libexec/" + proc, "timestamp": apple_ts(d), "eventMessage": msg,
                                "processID": pid, "subsystem": "com.apple." + proc, "category": "general"}, indent=2,
                               separators=(",", " : ")).replace("/", "\\/"))
    m["device/system-log-show.json"] = ("Skipping info and debug messages, pass --info and/or --debug to include.\n[" +
                                        "\n,".join(recs).replace("\n,{", ",{") + "]\n").replace("}\n,{", "},{")
    # compact style: the host app's view.
    comp = ["Timestamp               Ty Process[PID:TID]"]
    for d, msg in [(ms(t0, -300), "Starting broadcast picker"), (ms(t0, 41), "(LiveKit) [io.livekit.sdk:BroadcastScreenCapturer] Broadcast receiver connected")]:
        comp.append(d.strftime("%Y-%m-%d %H:%M:%S.") + f"{d.microsecond // 1000:03d} Df CallsDemo[2001:7c1a2] {msg}")
    m["device/host-compact.txt"] = "\n".join(comp) + "\n"
    # Xcode console of a Jitsi Swift-sample extension run later: print() lines between NSLog lines.
    t1 = t(16, 9, 2, 5006)
    xc = [f"{apple_ts(t1)} Broadcast Extension[2101:88211] [ReplayKit] broadcast extension process launched",
          "broadcast started", "open socket connection", "client stream open completed", "client stream open completed",
          f"{apple_ts(ms(t1, 12_500))} Broadcast Extension[2101:88230] [connection] nw_endpoint_handler_cancel [C1 unix] cancelled",
          "server socket closed", "client connection did close nil", "Program ended with exit code: 0"]
    m["device/xcode-extension-console.txt"] = "\n".join(xc) + "\n"
    # log stream syslog style of the same Jitsi run (os_log copy with category)
    m["device/log-stream-syslog.txt"] = ("Timestamp                       (process)[PID]\n" +
        f"{apple_ts(ms(t1, 12_499))}  localhost runningboardd[33]: [com.apple.runningboard:process] [app<org.jitsi.demo(4B1F)>:2099] Calculated state for app<org.jitsi.demo(4B1F0D8E)>: running-suspended (role: None)\n")
    # idevicesyslog and Console.app copy (no year / no date: taken from the bundle).
    m["device/idevicesyslog.txt"] = f"{idevice_ts(ms(t1, 13_000))} iPhone SpringBoard[58] <Notice>: Broadcast picker dismissed\n"
    m["device/console-copy.txt"] = f"default\t{ms(t1, 13_100).strftime('%H:%M:%S.%f%z')}\treplayd\tstopBroadcastWithHandler\n"
    m["device/log-show-default.txt"] = apple_default([(ms(t0, 60_000), dict(proc="CallsDemo", pid=2001, tid="0x7c1a2", msg="Call quality: good", subsystem="com.example.calls", category="call"))])
    # Relay journald in every journalctl text and JSON form.
    sid = "7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69"
    relay_t = (ms(t0, 40) + RELAY_AHEAD + dt.timedelta(milliseconds=3)).astimezone(dt.timezone.utc)
    msgs = [(0, f"session {sid} accepted peer=iPhone14,2 room=standup")] + \
           [(1000 * k, f"session {sid} stats frames=10 bytes={281133 + k * 17} fps=10.0 dropped=0") for k in range(1, 4)] + \
           [(94_968, f"session {sid} closed reason=peer-eof frames=948 duration=95.0s")]
    exp, js, iso, prec = [], [], [], []
    for k, (off, msg) in enumerate(msgs):
        d = ms(relay_t, off)
        us = int(d.timestamp() * 1_000_000)
        cur = f"s=1217d74fc175495da76fee5142ae8429;i={0x104f65 + k:x};b=4e5d5f0d77af4a4f880acfd583f0151f;m={0xddc6dbff75 + k:x};t={us:x};x=c7d0a909c5666cc"
        exp.append(f"__CURSOR={cur}\n__REALTIME_TIMESTAMP={us}\n__MONOTONIC_TIMESTAMP={952524078965 + off * 1000}\n_BOOT_ID=4e5d5f0d77af4a4f880acfd583f0151f\n_PID=811\n_HOSTNAME=relay1\n_SYSTEMD_UNIT=broadcast-relay.service\nSYSLOG_IDENTIFIER=broadcast-relay\nPRIORITY=6\nRELAY_SESSION={sid}\nMESSAGE={msg}\n")
        js.append(json.dumps({"__CURSOR": cur, "__REALTIME_TIMESTAMP": str(us), "_PID": "811", "_HOSTNAME": "relay1",
                              "_SYSTEMD_UNIT": "broadcast-relay.service", "SYSLOG_IDENTIFIER": "broadcast-relay",
                              "PRIORITY": "6", "RELAY_SESSION": sid, "MESSAGE": msg}, separators=(",", ":")))
        iso.append(d.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00") + f" relay1 broadcast-relay[811]: {msg}")
        prec.append(d.strftime("%b %d %H:%M:%S.%f") + f" relay1 broadcast-relay[811]: {msg}")
    # a binary-safe field (MESSAGE with an embedded newline) in the export
    bin_msg = f"session {sid} error: read: Connection reset by peer\ncontext: fd 17".encode()
    exp.append(f"__REALTIME_TIMESTAMP={int(ms(relay_t, 96_000).timestamp() * 1_000_000)}\n_PID=811\nSYSLOG_IDENTIFIER=broadcast-relay\n".encode().decode())
    export_bytes = "\n".join(exp).encode()
    export_bytes = export_bytes + b"MESSAGE\n" + len(bin_msg).to_bytes(8, "little") + bin_msg + b"\n\n"
    m["relay/relay.export"] = export_bytes
    m["relay/relay.json"] = "\n".join(js) + "\n"
    m["relay/relay-short-iso.txt"] = "-- Journal begins at Thu 2026-03-12 00:00:01 UTC, ends at Thu 2026-03-12 16:10:00 UTC. --\n" + "\n".join(iso) + "\n"
    m["relay/relay-short-precise.txt"] = "\n".join(prec) + "\n"
    return m


def export_entry(d, msg, sid, event, extra, seq):
    us = int(d.timestamp() * 1_000_000)
    prio = {"stalled": 4, "error": 3}.get(event, 6)
    fields = [f"__CURSOR=s=4f1d0c6e2b8a4e55a0c3d9b7e1f2a3b4;i={0x2a000 + seq:x};b=9b2e6c1d4f3a4b5c8d7e6f5a4b3c2d1e;m={0x3b9aca00 + seq:x};t={us:x};x={seq * 7919:x}",
              f"__REALTIME_TIMESTAMP={us}", f"__MONOTONIC_TIMESTAMP={1_000_000_000 + seq * 1000}",
              "_BOOT_ID=9b2e6c1d4f3a4b5c8d7e6f5a4b3c2d1e", "_PID=811", "_HOSTNAME=relay1", "_TRANSPORT=journal",
              "_SYSTEMD_UNIT=broadcast-relay.service", "SYSLOG_IDENTIFIER=broadcast-relay", f"PRIORITY={prio}",
              f"RELAY_SESSION={sid}", f"RELAY_EVENT={event}"] + [f"{k}={v}" for k, v in extra] + [f"MESSAGE={msg}"]
    return "\n".join(fields) + "\n"


def relay_journal():
    """The relay daemon's journal (export format) for the device sessions of the samples,
    with the server clock 2.350 s ahead of the phone, plus one broadcast from a phone that is
    not in the bundle. `make` turns it into samples/relay/relay.journal."""
    rnd = random.Random(7)
    out = []
    seq = [0]
    def e(d, msg, sid, event, extra=()):
        seq[0] += 1
        out.append((d, export_entry(d.astimezone(dt.timezone.utc), msg, sid, event, list(extra), seq[0])))
    def session(sid, peer, room, connected, ended, fps, reason, lat_ms=4, stall_at=None):
        a = connected + RELAY_AHEAD + dt.timedelta(milliseconds=lat_ms)
        e(a, f"session {sid} accepted peer={peer} room={room}", sid, "accepted", [("RELAY_PEER", peer), ("RELAY_ROOM", room)])
        total = 0
        k = 1
        last_frame = (stall_at or ended) + RELAY_AHEAD
        while a + dt.timedelta(seconds=k) <= last_frame:
            frames = int(fps)
            total += frames
            e(a + dt.timedelta(seconds=k), f"session {sid} stats frames={frames} bytes={frames * 28113 + rnd.randint(0, 999)} fps={fps:.1f} dropped=0",
              sid, "stats", [("RELAY_FRAMES", frames), ("RELAY_FPS", f"{fps:.1f}"), ("RELAY_DROPPED", 0)])
            k += 1
        if stall_at:
            st = stall_at + RELAY_AHEAD + dt.timedelta(seconds=2)
            e(st, f"session {sid} no frames for 2.0 s", sid, "stalled")
            end = st + dt.timedelta(seconds=3)
        else:
            end = ended + RELAY_AHEAD + dt.timedelta(milliseconds=lat_ms + 6)
        dur = (end - a).total_seconds()
        e(end, f"session {sid} closed reason={reason} frames={total} duration={dur:.1f}s", sid, "closed",
          [("RELAY_FRAMES", total), ("RELAY_REASON", reason)])
    session("0b7f3c1e-5d2a-4e8b-9c61-7a2e4f9d1b03", "iPhone14,2", "standup", t(10, 15, 2, 319211), t(10, 15, 5, 819211), 10, "peer-eof")
    session("6a1d9e27-3c4b-4f58-8e02-b5d7c9a1e364", "iPhone14,2", "support", t(11, 2, 7, 180000), t(11, 2, 28, 400000), 10, "peer-eof", lat_ms=2)
    session("e93b0a4f-72c1-4d6e-a8f5-1c2b3d4e5f60", "iPad13,4", "retro", t(12, 40, 0, 0), t(12, 40, 30, 0), 15, "peer-eof")
    session("5c8e2d71-9a0b-4c3d-b6e4-f7a8b9c0d1e2", "iPhone14,2", "calls", t(14, 30, 11, 557117), t(14, 30, 53, 156117), 15, "peer-eof", lat_ms=3)
    session("c4f6a8b0-1d2e-4f3a-9b5c-6d7e8f9a0b1c", "iPhone14,2", "late-night", t(23, 59, 50, 123204), None, 10, "timeout", stall_at=t(0, 0, 2, 190000, day=13))
    out.sort(key=lambda x: x[0])
    return {"relay/relay.export": "\n".join(x[1] for x in out) + "\n"}


def deterministic_zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2026, 3, 12, 17, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data if isinstance(data, bytes) else data.encode())
    return buf.getvalue()


def deterministic_targz(members):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            data = data if isinstance(data, bytes) else data.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode, info.uid, info.gid = len(data), 1773331200, 0o644, 0, 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def mixed_bundle():
    m = mixed_members()
    zipped = [(k.split("/", 1)[1], v) for k, v in m.items() if k.startswith("device/") and k.split("/")[1] in
              ("idevicesyslog.txt", "console-copy.txt", "log-stream-syslog.txt", "log-show-default.txt")]
    rest = [(k, v) for k, v in m.items() if not (k.startswith("device/") and k.split("/")[1] in dict(zipped))]
    members = []
    for k, v in rest:
        if k == "device/system-log-show.json":
            members.append((k + ".gz", gzip.compress(v.encode(), mtime=0)))  # a .gz inside the tar
        else:
            members.append((k, v))
    members.append(("device/more-logs.zip", deterministic_zip(zipped)))
    members.sort()
    return {"mixed-bundle/support-bundle.tar.gz": deterministic_targz([("support-bundle/" + k, v) for k, v in members])}


def main():
    files = {}
    for gen in (healthy_jitsi, retry_storm, stopped_10001, jetsam_kill, sendbird_call_ended, mixed_bundle, relay_journal):
        files.update(gen())
    for rel, data in files.items():
        p = ROOT / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        print("wrote samples/" + rel)


if __name__ == "__main__":
    main()
