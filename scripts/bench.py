#!/usr/bin/env python3
"""`make bench`: castscope against the tools a user would otherwise run, measured in the same
run on this machine, alternately, several times; prints medians, ratios and peak RSS.

BENCH_SECTION=densities runs only the session-density table (issue 15), which ends with one
session that retries for BENCH_STORM_HOURS hours (default 10: every line recognized, all open),
then for as long as BENCH_SIZE MB takes (27 h at 256), and one session that streams frames
through BENCH_SIZE MB.
BENCH_SECTION=shapes runs only the peak RSS of session shapes (`make-shape-input.py`).
BENCH_SECTION=unified-logging runs only the Apple Unified Logging rows (BENCH_UL_COPIES copies
of the reference tracev3, default 300). Inputs are generated (BENCH_SIZE MB of noisy `log show`, default 256; its gzip; a relay
journal of BENCH_ENTRIES entries built with systemd-journal-remote, default 1,000,000).
No assertion fails a build: the targets are printed with PASS/MISS next to the measurements.
"""
import glob, os, shutil, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, ".build/release/castscope")
SIZE = int(os.environ.get("BENCH_SIZE", "256"))
ENTRIES = int(os.environ.get("BENCH_ENTRIES", "1000000"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
RELAY_SESSIONS = int(os.environ.get("BENCH_RELAY_SESSIONS", "50000"))
STORM_HOURS = int(os.environ.get("BENCH_STORM_HOURS", "10"))
WORK = os.environ.get("BENCH_DIR", os.path.join(tempfile.gettempdir(), "castscope-bench"))
JR = "/lib/systemd/systemd-journal-remote"


def run(cmd, stdin=None):
    """Wall seconds and peak RSS (KB) of one run, output discarded."""
    t = tempfile.NamedTemporaryFile(delete=False)
    t.close()
    full = ["/usr/bin/time", "-f", "%M", "-o", t.name] + cmd
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        subprocess.run(full, stdout=null, stderr=null, stdin=stdin, check=False)
    wall = time.perf_counter() - start
    rss = int(open(t.name).read().strip().splitlines()[-1])
    os.unlink(t.name)
    return wall, rss


def shell(cmd):
    return ["sh", "-c", cmd]


def bench(pairs):
    """Runs each (name, cmd) alternately RUNS times; returns name -> (median s, max RSS KB)."""
    times = {n: [] for n, _ in pairs}
    rss = {n: 0 for n, _ in pairs}
    for _ in range(RUNS):
        for name, cmd in pairs:
            w, r = run(cmd)
            times[name].append(w)
            rss[name] = max(rss[name], r)
    return {n: (statistics.median(times[n]), rss[n]) for n in times}


def gen_text(density):
    """The noisy `log show` export at one session density (scripts/make-bench-input.py)."""
    os.makedirs(WORK, exist_ok=True)
    log = os.path.join(WORK, f"noisy-{SIZE}.log" if density == "sparse" else f"noisy-{density}-{SIZE}.log")
    if not os.path.exists(log):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/make-bench-input.py"), log, str(SIZE), density],
                       check=True, stdout=subprocess.DEVNULL)
    return log


def gen_relay_sessions(sessions=RELAY_SESSIONS):
    """A relay journal with SESSIONS sessions (accepted, stats about once a second, closed), about
    twenty at a time, among worker heartbeats; written by systemd-journal-remote."""
    os.makedirs(WORK, exist_ok=True)
    base = os.path.join(WORK, f"relay-sessions-{sessions}")
    files = sorted(glob.glob(base + "*.journal"))
    if files or not os.path.exists(JR):
        return files
    p = subprocess.Popen([JR, "--output=" + base + ".journal", "-"], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, SYSTEMD_JOURNAL_COMPACT="0"))
    t0 = 1773306904000000
    buf = []
    def put(us, msg, pid=811):
        buf.append(f"__REALTIME_TIMESTAMP={us}\n_PID={pid}\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\n"
                   f"_SYSTEMD_UNIT=broadcast-relay.service\nPRIORITY=6\nMESSAGE={msg}\n\n")
        if len(buf) >= 10000:
            p.stdin.write("".join(buf).encode())
            buf.clear()
    # Session k starts at k * 0.5 s and lasts ~10 s: about twenty open at once.
    events = []
    for k in range(sessions):
        sid = f"{k:08x}-1b7e-4f0e-9a51-2f1d3c4b5a69"
        start = t0 + k * 500_000
        events.append((start, f"session {sid} accepted peer=iPhone14,2 room=r{k % 50}"))
        n = 8 + k % 5
        for i in range(1, n + 1):
            events.append((start + i * 1_000_000 + 37, f"session {sid} stats frames=10 bytes=281133 fps=10.0 dropped=0"))
        events.append((start + (n + 1) * 1_000_000 + 91, f"session {sid} closed reason=peer-eof frames={n * 10} duration={n + 1}.0s"))
    events.sort()
    for i, (us, msg) in enumerate(events):
        put(us, msg)
        if i % 4 == 0:
            put(us + 11, f"worker {i % 7} heartbeat ok queue=0 latency_ms={i % 13}", pid=812)
    p.stdin.write("".join(buf).encode())
    p.stdin.close()
    p.wait()
    return sorted(glob.glob(base + "*.journal"))


def gen_storm(hours=STORM_HOURS):
    """One session that never connects: a Jitsi-design extension retrying every 100 ms for HOURS
    hours (an attempt and its failure per try) in a device syslog (`log stream --style syslog`).
    Every line is recognized and all of them belong to one open session."""
    os.makedirs(WORK, exist_ok=True)
    log = os.path.join(WORK, f"storm-{hours}h.log")
    if os.path.exists(log):
        return log
    t0 = 1773307200492204  # 2026-03-12 09:20:00.492204 UTC
    def ts(us):
        s, u = divmod(us + 3600 * 1_000_000, 1_000_000)  # shown at +0100
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s)) + f".{u:06d}+0100"
    pre = "  localhost BroadcastExtension[1204]: [io.livekit.example.flutter:Broadcast] "
    with open(log + ".part", "w") as out:
        out.write("Timestamp                       (process)[PID]\n")
        out.write(ts(t0) + "  localhost BroadcastExtension[1204]: (ReplayKit) [com.apple.ReplayKit:RPBroadcastExtension] extension started\n")
        buf = []
        for i in range(1, hours * 36000 + 1):
            us = t0 + i * 100_000
            buf.append(ts(us) + pre + "open socket connection\n")
            buf.append(ts(us + 310) + pre + "failure: socket file missing\n")
            if len(buf) >= 20000:
                out.write("".join(buf))
                buf.clear()
        out.write("".join(buf))
    os.rename(log + ".part", log)
    return log


def gen_frames():
    """One session that streams for as long as BENCH_SIZE MB takes (`log show` default style):
    a Jitsi-design extension logs a frame line every 10 ms among other processes' lines (one
    in ten, not recognized). The file's big parallel ranges each fold their own frame run."""
    os.makedirs(WORK, exist_ok=True)
    log = os.path.join(WORK, f"frames-{SIZE}.log")
    if os.path.exists(log):
        return log
    t0 = 1773307200492204 + 3600 * 1_000_000  # 2026-03-12 10:20:00.492204, shown at +0100
    day = time.strftime("%Y-%m-%d", time.gmtime(t0 // 1_000_000))
    def ts(us):
        s, u = divmod(us, 1_000_000)
        return f"{day} {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{u:06d}+0100"
    head = "Timestamp                       Thread     Type        Activity             PID    TTL  \n"
    ext = " 0x2f1c4    Default     0x0                  812    0    BroadcastExtension: "
    other = " 0x1a2      Default     0x0                  33     0    runningboardd: (RunningBoard) [com.apple.runningboard:process] Set jetsam priority to 100 [0] flag[1]\n"
    size, written, us = SIZE << 20, 0, t0 % 86_400_000_000
    with open(log + ".part", "w") as out:
        buf = [head] + [ts(us + k * 1000) + ext + m + "\n" for k, m in
                        enumerate(["broadcast started", "Open socket connection", "client stream open completed"])]
        us += 10_000
        while written < size:
            for k in range(20000):
                us += 10_000
                buf.append(ts(us) + (other if k % 10 == 9 else ext + "video sample processed successfully\n"))
            chunk = "".join(buf)
            out.write(chunk)
            written += len(chunk)
            buf = []
    os.rename(log + ".part", log)
    return log


def gen_inputs():
    log = gen_text("sparse")
    gz = log + ".gz"
    if not os.path.exists(gz):
        subprocess.run(shell(f"gzip -c {log} > {gz}"), check=True)
    journal = os.path.join(WORK, f"relay-{ENTRIES}.journal")
    if not os.path.exists(journal) and os.path.exists(JR):
        sid = "7c1e0d52-1b7e-4f0e-9a51-2f1d3c4b5a69"
        p = subprocess.Popen([JR, "--output=" + journal, "-"], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=dict(os.environ, SYSTEMD_JOURNAL_COMPACT="0"))
        t0 = 1773306904000000
        buf = []
        for i in range(ENTRIES):
            if i % 20 == 0:
                msg = f"MESSAGE=session {sid} stats frames=10 bytes=281133 fps=10.0 dropped=0"
            else:
                msg = f"MESSAGE=worker {i % 7} heartbeat ok queue=0 latency_ms={i % 13}"
            buf.append(f"__REALTIME_TIMESTAMP={t0 + i * 1000}\n_PID=811\n_HOSTNAME=relay1\nSYSLOG_IDENTIFIER=broadcast-relay\n"
                       f"_SYSTEMD_UNIT=broadcast-relay.service\nPRIORITY=6\n{msg}\n\n")
            if len(buf) == 10000:
                p.stdin.write("".join(buf).encode())
                buf = []
        p.stdin.write("".join(buf).encode())
        p.stdin.close()
        p.wait()
    # systemd-journal-remote rotates at its size limit: the entries are in all these files.
    journals = sorted(glob.glob(os.path.join(WORK, f"relay-{ENTRIES}*.journal")))
    return log, gz, journals


RSS_LIMIT_MB = 64


def rss_line(label, kb):
    mb = kb / 1024
    return f"  peak RSS {label}: {mb:.0f} MB (target <= {RSS_LIMIT_MB} MB)  {'PASS' if mb <= RSS_LIMIT_MB else 'MISS'}"


def line(label, ours, theirs, target, better_is_lower=True):
    ratio = theirs / ours if ours > 0 else float("inf")
    ok = ratio >= target
    return f"  {label:<58} {ours:7.3f} s vs {theirs:7.3f} s  ratio {ratio:5.2f} (target >= {target:g})  {'PASS' if ok else 'MISS'}"


def main():
    if not os.path.exists(BIN):
        sys.exit("build first: make release")
    if os.environ.get("BENCH_SECTION") == "unified-logging":  # only this section
        unified_logging()
        return
    if os.environ.get("BENCH_SECTION") == "densities":  # only the session-density table
        densities(lnav_ok=bool(shutil.which("lnav")))
        return
    if os.environ.get("BENCH_SECTION") == "formats":  # only the report formats
        formats()
        return
    if os.environ.get("BENCH_SECTION") == "tail":  # only tail's volume rows
        tail_volume()
        return
    if os.environ.get("BENCH_SECTION") == "shapes":  # only the memory of session shapes
        shapes()
        return
    log, gz, journals = gen_inputs()
    size_mb = os.path.getsize(log) / 1e6
    journal_mb = sum(os.path.getsize(j) for j in journals) / 1e6
    print(f"machine: {os.cpu_count()} cores; {open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()}")
    print(f"inputs: {log} ({size_mb:.0f} MB), its gzip ({os.path.getsize(gz) / 1e6:.0f} MB), "
          f"{len(journals)} relay journal files ({journal_mb:.0f} MB, {ENTRIES} entries); {RUNS} runs each, medians\n")
    # Warm the page cache.
    for f in (log, gz):
        subprocess.run(["cat", f], stdout=subprocess.DEVNULL)

    r = bench([("castscope", [BIN, "analyze", "--no-color", log]),
               ("grep", shell(f"grep -F -e JitsiMeetSDK -e '[SBCBroadcast]' {log} > /dev/null"))]
              + ([("lnav", ["lnav", "-n", "-c", ";SELECT count(*) FROM all_logs", log])] if shutil.which("lnav") else []))
    c, g = r["castscope"][0], r["grep"][0]
    print("noisy text")
    print(f"  castscope analyze: {c:.3f} s = {size_mb / c:.0f} MB/s")
    print(f"  grep -F:           {g:.3f} s = {size_mb / g:.0f} MB/s")
    print(line("castscope within 1.5x of grep -F (grep/castscope >= 0.667)", c, g, 1 / 1.5))
    print(f"  castscope >= 1.0 GB/s: {size_mb / c / 1000:.2f} GB/s  {'PASS' if size_mb / c >= 1000 else 'MISS'}")
    if "lnav" in r:
        print(line("castscope >= 10x faster than lnav 0.11 indexing", c, r["lnav"][0], 10))
    print(rss_line(f"on {size_mb:.0f} MB of text", r["castscope"][1]))
    print()

    r = bench([("castscope", [BIN, "analyze", "--no-color", gz]), ("zcat", shell(f"zcat {gz} > /dev/null"))])
    print("gzip input")
    print(line("castscope on .gz within 1.2x of zcat (zcat/castscope >= 0.833)", r["castscope"][0], r["zcat"][0], 1 / 1.2))
    print(rss_line("on its gzip", r["castscope"][1]) + "\n")

    if journals:
        files = " ".join(f"--file {j}" for j in journals)
        r = bench([("castscope", [BIN, "analyze", "--no-color"] + journals),
                   ("journalctl", shell(f"journalctl {files} -o export > /dev/null"))])
        print("journal files")
        print(line("castscope >= 1.5x faster than journalctl -o export", r["castscope"][0], r["journalctl"][0], 1.5))
        print(rss_line(f"on {journal_mb:.0f} MB of journal", r["castscope"][1]) + "\n")

    densities(lnav_ok=bool(shutil.which("lnav")))

    formats()

    unified_logging()

    lat = subprocess.run([sys.executable, os.path.join(ROOT, "scripts/bench-tail.py"), BIN], capture_output=True, text=True)
    print("tail")
    print("  " + (lat.stdout.strip() or lat.stderr.strip()))
    tail_volume()

    # ClickHouse export (issue 17): only when clickhouse-server is installed.
    if shutil.which("clickhouse-server") or os.path.exists("/usr/sbin/clickhouse-server"):
        print("\nclickhouse")
        sys.stdout.flush()
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/bench-clickhouse.py"), BIN, log, str(RUNS)])


def tail_volume():
    """`castscope tail` on a lot at once: a phone's log piped in (the dense log; the retry storm,
    one session of every line) against `analyze` of the same file, and the relay's journal of
    50,000 sessions followed from its start (anonymous memory once it has caught up: the
    journal's mapped pages are the file's, not castscope's)."""
    dense, storm = gen_text("dense"), gen_storm()
    rows = []
    for label, log in (("dense log", dense), ("retry storm", storm)):
        with open(log, "rb") as f:
            t, rss = run([BIN, "tail", "--no-journal", "-"], stdin=f)
        a, _ = run([BIN, "analyze", "--no-color", log])
        rows.append(f"  tail of the {label} from standard input ({os.path.getsize(log) / 1e6:.0f} MB): {t:.3f} s, "
                    f"{t / a:.1f}x analyze ({a:.3f} s); peak RSS {rss / 1024:.0f} MB")
    journals = gen_relay_sessions()
    if journals:
        p = subprocess.Popen([BIN, "tail", "--from-start"] + [a for j in journals for a in ("--file", j)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        lines = 0
        def count():
            nonlocal lines
            for _ in p.stdout:
                lines += 1
        threading.Thread(target=count, daemon=True).start()
        # Caught up once no line came for two seconds.
        last, quiet = -1, 0
        while quiet < 4:
            time.sleep(0.5)
            quiet = quiet + 1 if lines == last else 0
            last = lines
        anon = int([l for l in open(f"/proc/{p.pid}/status") if l.startswith("RssAnon")][0].split()[1])
        p.kill()
        p.wait()
        rows.append(f"  tail of the relay journal ({RELAY_SESSIONS} sessions) from its start: {lines} lines; "
                    + rss_line("(anonymous) once caught up", anon).strip())
    for r in rows:
        print(r)


def formats():
    """Issue 15: every report format is written as bytes as sessions end. The dense log in each
    format against the text report (the page and the trace go to a file, and the text report,
    printed beside them, to /dev/null as every run's output)."""
    log = gen_text("dense")
    mb = os.path.getsize(log) / 1e6
    subprocess.run(["cat", log], stdout=subprocess.DEVNULL)
    out = tempfile.mkdtemp(prefix="castscope-bench-formats-")
    pairs = [("text", [BIN, "analyze", "--no-color", log])]
    for name, args in (("markdown", ["--markdown"]), ("markdown-full", ["--markdown-full"]),
                       ("html", ["--html", os.path.join(out, "r.html")]),
                       ("perfetto", ["--perfetto", os.path.join(out, "t.json")])):
        pairs.append((name, [BIN, "analyze"] + args + [log]))
    r = bench(pairs)
    sizes = {n: os.path.getsize(os.path.join(out, f)) / 1e6 for n, f in (("html", "r.html"), ("perfetto", "t.json"))}
    shutil.rmtree(out, ignore_errors=True)
    print(f"report formats on the dense log ({mb:.0f} MB; every session in each, but --markdown's 65,536 characters)")
    t = r["text"][0]
    for name in ("markdown", "markdown-full", "html", "perfetto"):
        extra = f", {sizes[name]:.0f} MB written" if name in sizes else ""
        print(f"  --{name:<14} {r[name][0]:7.3f} s = {r[name][0] / t:4.2f}x the text report{extra}")
        print("  " + rss_line(f"--{name}", r[name][1]))
    print()


def densities(lnav_ok):
    """Issue 15: every ratio at several session densities, for the text report and --json."""
    print("session densities (text report and --json; grep -F and lnav on the same file)")
    rows = []
    for density in ("sparse", "dense"):
        log = gen_text(density)
        mb = os.path.getsize(log) / 1e6
        subprocess.run(["cat", log], stdout=subprocess.DEVNULL)
        sessions = count_sessions(log)
        pairs = [("text", [BIN, "analyze", "--no-color", log]), ("json", [BIN, "analyze", "--json", log]),
                 # Into a pipe: GNU grep writing to /dev/null stops at its first match (as -q).
                 ("grep", shell(f"grep -F -e JitsiMeetSDK -e '[SBCBroadcast]' {log} | cat > /dev/null"))]
        if lnav_ok:
            pairs.append(("lnav", ["lnav", "-n", "-c", ";SELECT count(*) FROM all_logs", log]))
        r = bench(pairs)
        rows.append((f"{density} text, {mb:.0f} MB, {sessions} sessions", r, "grep"))
    # A shape, not a density: the dense log in a ticket's folder beside a small host-app log
    # whose times overlap it. A folder of several files is read whole before its sessions are
    # built (held on disk past 131,072 lines: BENCH_SIZE=2048 measures that), not streamed.
    dense = gen_text("dense")
    folder = os.path.join(WORK, f"folder-dense-{SIZE}")
    if not os.path.isdir(folder):
        os.makedirs(folder)
        os.symlink(dense, os.path.join(folder, "device.log"))
        shutil.copyfile(os.path.join(ROOT, "samples", "healthy-jitsi", "sysdiagnose-log-show.txt"),
                        os.path.join(folder, "host-app.txt"))
    mb = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)) / 1e6
    r = bench([("text", [BIN, "analyze", "--no-color", folder]), ("json", [BIN, "analyze", "--json", folder]),
               ("grep", shell(f"grep -R -F -e JitsiMeetSDK -e '[SBCBroadcast]' {folder} | cat > /dev/null"))])
    rows.append((f"dense log + a sample in a folder, {mb:.0f} MB", r, "grep"))
    journals = gen_relay_sessions()
    if journals:
        mb = sum(os.path.getsize(j) for j in journals) / 1e6
        files = " ".join(f"--file {j}" for j in journals)
        r = bench([("text", [BIN, "analyze", "--no-color"] + journals), ("json", [BIN, "analyze", "--json"] + journals),
                   ("grep", shell("grep -F -a ' accepted ' " + " ".join(journals) + " | cat > /dev/null")),
                   ("journalctl", shell(f"journalctl {files} -o export > /dev/null"))])
        rows.append((f"relay journal, {mb:.0f} MB, {RELAY_SESSIONS} sessions", r, "grep"))
    # A shape, not a density: one session with every line of the file, an extension that
    # never reached the host app and retried every 100 ms for hours.
    storm = gen_storm()
    subprocess.run(["cat", storm], stdout=subprocess.DEVNULL)
    mb = os.path.getsize(storm) / 1e6
    r = bench([("text", [BIN, "analyze", "--no-color", storm]), ("json", [BIN, "analyze", "--json", storm]),
               ("grep", shell(f"grep -F -e 'open socket connection' -e 'socket file missing' {storm} | cat > /dev/null"))])
    rows.append((f"one session retrying for {STORM_HOURS} h (every line recognized), {mb:.0f} MB", r, "grep"))
    # The same storm as long as the density inputs (BENCH_SIZE MB: 27 h at 256, 212 h at 2048):
    # the memory target holds at that size too, however long the one open session is.
    long_hours = max(STORM_HOURS + 1, round(SIZE * 1024 * 1024 / 1e6 / 9.65))
    storm = gen_storm(long_hours)
    subprocess.run(["cat", storm], stdout=subprocess.DEVNULL)
    mb = os.path.getsize(storm) / 1e6
    # (Past 4,000,000 recognized lines, 55 h, the per-file budget would stop the read: raised.)
    budget = ["--max-events", str(long_hours * 72000 + 10)] if long_hours * 72000 > 4_000_000 else []
    r = bench([("text", [BIN, "analyze", "--no-color"] + budget + [storm]), ("json", [BIN, "analyze", "--json"] + budget + [storm]),
               ("grep", shell(f"grep -F -e 'open socket connection' -e 'socket file missing' {storm} | cat > /dev/null"))])
    rows.append((f"one session retrying for {long_hours} h, {mb:.0f} MB{' (' + ' '.join(budget) + ')' if budget else ''}", r, "grep"))
    # A shape: one session streaming frames through the whole file (its frame run is cut by
    # the parallel ranges; memory must not grow with the run: 279 MB at 2 GB before session 48).
    frames = gen_frames()
    subprocess.run(["cat", frames], stdout=subprocess.DEVNULL)
    mb = os.path.getsize(frames) / 1e6
    lines = int(os.path.getsize(frames) / 131) + 10
    budget = ["--max-events", str(lines)] if lines > 4_000_000 else []
    r = bench([("text", [BIN, "analyze", "--no-color"] + budget + [frames]), ("json", [BIN, "analyze", "--json"] + budget + [frames]),
               ("grep", shell(f"grep -F -e 'video sample processed' {frames} | cat > /dev/null"))])
    rows.append((f"one session streaming frames, {mb:.0f} MB{' (' + ' '.join(budget) + ')' if budget else ''}", r, "grep"))
    for label, r, base in rows:
        print(f"  {label}")
        for out in ("text", "json"):
            t, rss = r[out]
            print("  " + line(f"{out}: within 1.5x of grep -F (grep/castscope >= 0.667)", t, r[base][0], 1 / 1.5))
            if "lnav" in r:
                print("  " + line(f"{out}: >= 10x faster than lnav 0.11 indexing", t, r["lnav"][0], 10))
            if "journalctl" in r:
                print("  " + line(f"{out}: >= 1.5x faster than journalctl -o export", t, r["journalctl"][0], 1.5))
            print("  " + rss_line(f"{out}", rss))
    print()


def shapes():
    """Issue 15: peak RSS at BENCH_SIZE MB for session shapes the densities do not cover
    (`scripts/make-shape-input.py`): extensions that come and go, 50 and 5,000 open at once
    (each ended one waits 30 s of log time for late lines); a relay's text with 5,000 sessions
    open, with and without a year; one session whose frame runs are cut by host-app lines."""
    gen = os.path.join(ROOT, "scripts/make-shape-input.py")
    rows = [("churn", "extension sessions coming and going, 50 open", ["churn", "50"]),
            ("churn", "extension sessions coming and going, 5,000 open", ["churn", "5000"]),
            ("relay", "relay text, 5,000 sessions open", ["relay", "5000"]),
            ("relay-yearless", "relay text without a year, 5,000 sessions open", ["relay-yearless", "5000"]),
            ("mix", "one session, frame runs cut by host-app lines", ["mix"])]
    print(f"session shapes, {SIZE} MB each (peak RSS of analyze -q and --json)")
    for _, label, args in rows:
        os.makedirs(WORK, exist_ok=True)
        log = os.path.join(WORK, f"shape-{'-'.join(args)}-{SIZE}.log")
        if not os.path.exists(log):
            subprocess.run([sys.executable, gen, args[0], log + ".part", str(SIZE)] + args[1:], check=True,
                           stderr=subprocess.DEVNULL)
            os.rename(log + ".part", log)
        subprocess.run(["cat", log], stdout=subprocess.DEVNULL)
        r = bench([("text", [BIN, "analyze", "-q", log]), ("json", [BIN, "analyze", "--json", log])])
        print(f"  {label}: text {r['text'][0]:.2f} s, --json {r['json'][0]:.2f} s")
        print("  " + rss_line("text", r["text"][1]))
        print("  " + rss_line("--json", r["json"][1]))
    print()


def count_sessions(log):
    """Sessions castscope finds in the file (one extra run, not timed)."""
    out = subprocess.run([BIN, "analyze", "--json", log], capture_output=True, text=True).stdout
    try:
        import json
        return json.loads(out)["summary"]["sessions"]
    except Exception:
        return "?"


UL_REAL = os.path.join(ROOT, "..", "shared", "reference", "unified-logging", "0000000000000f85.tracev3")
UL_COPIES = int(os.environ.get("BENCH_UL_COPIES", "300"))


def ul_inputs():
    """A log archive of UL_COPIES copies of the real 717 KB iOS tracev3; one big tracev3 made of
    its chunks (the header once, the catalog and chunksets repeated); a sysdiagnose-shaped
    tar.gz holding the archive and a text log."""
    d = os.path.join(WORK, f"ul-{UL_COPIES}")
    arch = os.path.join(d, "sysdiagnose_bench", "system_logs.logarchive")
    persist = os.path.join(arch, "Persist")
    if not os.path.isdir(persist):
        os.makedirs(persist)
        for i in range(UL_COPIES):
            shutil.copyfile(UL_REAL, os.path.join(persist, f"{i:016x}.tracev3"))
        with open(os.path.join(d, "sysdiagnose_bench", "host-app.log"), "w") as f:
            f.write("2026-03-12 23:59:50.122204+0100 0x3a0c1    Default     0x0                  640    0    JitsiDemo: server stream open completed\n")
    big = os.path.join(d, "big.tracev3")
    if not os.path.exists(big):
        data = open(UL_REAL, "rb").read()
        header = 16 + int.from_bytes(data[8:16], "little")
        header = (header + 7) & ~7
        with open(big, "wb") as f:
            f.write(data[:header])
            for _ in range(UL_COPIES):
                f.write(data[header:])
    tgz = os.path.join(d, "sysdiagnose_bench.tar.gz")
    if not os.path.exists(tgz):
        subprocess.run(["tar", "czf", tgz, "-C", d, "sysdiagnose_bench"], check=True)
    return arch, big, tgz


def unified_logging():
    """Apple Unified Logging: tracev3 throughput and memory, and a sysdiagnose against tar xzf."""
    if not os.path.exists(UL_REAL):
        print("unified logging: the reference tracev3 is missing, skipped\n")
        return
    arch, big, tgz = ul_inputs()
    arch_mb = sum(os.path.getsize(os.path.join(arch, "Persist", f)) for f in os.listdir(os.path.join(arch, "Persist"))) / 1e6
    big_mb = os.path.getsize(big) / 1e6
    subprocess.run(shell(f"cat {arch}/Persist/* {big} {tgz} > /dev/null"))
    out = tempfile.mkdtemp(prefix="castscope-bench-untar-")
    r = bench([("folder", [BIN, "analyze", "--no-color", arch]),
               ("big", [BIN, "analyze", "--no-color", big]),
               ("show", [BIN, "show", big]),
               ("sysdiagnose", [BIN, "analyze", "--no-color", tgz]),
               ("tar", shell(f"rm -rf {out}/* && tar xzf {tgz} -C {out}"))])
    shutil.rmtree(out, ignore_errors=True)
    # CPU seconds too: on a machine shared with other work the wall time says little.
    cpu = {}
    for name, path in (("folder", arch), ("big", big)):
        t = tempfile.NamedTemporaryFile(delete=False)
        t.close()
        subprocess.run(["/usr/bin/time", "-f", "%U %S", "-o", t.name, BIN, "analyze", "--no-color", path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        u, sy = open(t.name).read().split()[-2:]
        os.unlink(t.name)
        cpu[name] = float(u) + float(sy)
    print(f"unified logging ({UL_COPIES} copies of the real iOS 15 tracev3: {arch_mb:.0f} MB; one {big_mb:.0f} MB file of its chunks)")
    for name, label, mb in (("folder", "logarchive folder", arch_mb), ("big", "one big tracev3", big_mb)):
        t = r[name][0]
        speed = mb / t
        print(f"  castscope {label:<18} {t:7.3f} s = {speed:5.0f} MB/s (target >= 300 MB/s)  {'PASS' if speed >= 300 else 'MISS'}"
              f"  [{cpu[name]:.2f} CPU s = {mb / cpu[name]:.0f} MB per CPU second; load {os.getloadavg()[0]:.1f}]")
        print(rss_line(f"on the {label}", r[name][1]))
    # `castscope show`: every record of the big tracev3, time-merged, as `log show` prints it
    # (no `log show` on Linux to compare with); its memory must not follow the records.
    print(f"  castscope show, one big tracev3: {r['show'][0]:.3f} s = {big_mb / r['show'][0]:.0f} MB of tracev3 per second")
    print(rss_line("of castscope show on the big tracev3", r["show"][1]))
    print(line("sysdiagnose tar.gz within 1.3x of tar xzf (tar/castscope >= 0.769)", r["sysdiagnose"][0], r["tar"][0], 1 / 1.3))
    print(rss_line("on the sysdiagnose tar.gz", r["sysdiagnose"][1]) + "\n")


if __name__ == "__main__":
    main()
