#!/usr/bin/env python3
"""Checks castscope's ClickHouse DDL, rows and fleet queries on the samples.

Computes what each query of `castscope clickhouse queries` must return from the JSON report
(and, for the funnel, from the rows castscope writes), then runs the same DDL, loads the same
JSONEachRow rows and runs the same queries:
  - in chdb (current ClickHouse embedded in Python), unless --no-chdb;
  - on a running server (--server URL), whose tables a caller already filled with
    `castscope analyze samples/ --clickhouse URL` (the Swift tests do, on 18.16).
Every loaded table must hold exactly one logical row per session/event/finding/input (rows are
loaded twice: FINAL must still count each once). Exit 0 when everything matches.
"""
import argparse, collections, datetime, json, os, subprocess, sys, tempfile, urllib.request, urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLES = ["castscope_sessions", "castscope_events", "castscope_findings", "castscope_inputs"]
SEVERITY = {"info": "INFO", "warning": "WARN", "error": "ERROR"}


def run(binary, *args):
    r = subprocess.run([binary, *args], cwd=ROOT, capture_output=True, text=True)
    if r.returncode not in (0, 3):
        sys.exit(f"clickhouse-check: {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r.stdout


def statements(text):
    return [s.strip() for s in text.split("\n;\n") if s.strip() and not s.strip().startswith(";")]


def queries(binary):
    out = {}
    for st in statements(run(binary, "clickhouse", "queries")):
        name = st.split("\n", 1)[0].removeprefix("-- name: ").strip()
        out[name] = st
    return out


def quantile_exact(values, level):
    v = sorted(values)
    return v[min(len(v) - 1, int(level * len(v)))]


def expected(report, rows_dir):
    """What each query must return, as lists of rows (strings and numbers)."""
    device = report["sessions"]
    exp = {}
    groups = collections.OrderedDict()
    for s in device:
        day = datetime.datetime.fromisoformat(s["start"]).astimezone(datetime.timezone.utc).date().isoformat()
        groups.setdefault((day, s["sdk"]), []).append(s)
    exp["failure-rate-by-sdk-day"] = [
        [day, sdk, len(ss), sum(s["outcome"] == "failed-to-connect" for s in ss), sum(s["outcome"] != "completed" for s in ss),
         round(sum(s["outcome"] == "failed-to-connect" for s in ss) / len(ss), 4)]
        for (day, sdk), ss in sorted(groups.items())]
    connect = collections.defaultdict(list)
    for s in device:
        if s["connect"]["secondsToConnect"] is not None:
            connect[s["sdk"]].append(s["connect"]["secondsToConnect"])
    exp["time-to-connect"] = [[sdk, len(v), round(quantile_exact(v, 0.5) * 1000, 1), round(quantile_exact(v, 0.95) * 1000, 1)]
                              for sdk, v in sorted(connect.items())]
    kinds = collections.Counter((f["kind"], SEVERITY[f["severity"]]) for f in report["findings"])
    exp["top-findings"] = [[k, sev, n, 1] for (k, sev), n in sorted(kinds.items(), key=lambda x: (-x[1], x[0][0], x[0][1]))][:20]
    # The funnel, from the event rows castscope writes: each session's lines in SessionSeq order.
    steps = [{"broadcast.started"}, {"socket.connected", "server.client_connected"}, {"frame.sent", "relay.stats"},
             {"broadcast.finished", "broadcast.stopped_by_app", "socket.closed", "socket.closed_by_peer", "socket.error",
              "extension.killed_memory", "process.exited", "relay.closed"}]
    per_session = collections.defaultdict(list)
    with open(os.path.join(rows_dir, "castscope_events.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r["SessionId"] and r["Side"] != "relay":
                per_session[r["SessionId"]].append((r["SessionSeq"], r["EventName"]))
    levels = collections.Counter()
    for sid, evs in per_session.items():
        reached = 0
        for _, name in sorted(evs):
            if name in steps[0]:
                reached = max(reached, 1)
            for i in range(1, 4):
                if name in steps[i] and reached >= i:
                    reached = max(reached, i + 1)
        levels[reached] += 1
    exp["session-funnel"] = [[lvl, n] for lvl, n in sorted(levels.items())]
    hosts = collections.defaultdict(lambda: [0, 0, 0, 0])
    for r in report["relaySessions"]:
        if not r.get("host"):
            continue
        h = hosts[r["host"]]
        h[0] += 1
        h[1] += r.get("reason") not in ("peer-eof", "shutdown")
        h[2] += r.get("deviceSession") is None
        h[3] += r.get("stalls", 0)
    exp["relay-hosts"] = [[host, *v] for host, v in sorted(hosts.items())]
    counts = {
        "castscope_sessions": len(device) + sum(1 for r in report["relaySessions"] if r.get("deviceSession") is None),
        "castscope_events": report["summary"]["events"],
        "castscope_findings": len(report["findings"]),
        "castscope_inputs": len(report["inputs"]),
    }
    return exp, counts


def same(got, want):
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if len(g) != len(w):
            return False
        for a, b in zip(g, w):
            if isinstance(b, (int, float)):
                try:
                    if abs(float(a) - float(b)) > 1e-9:
                        return False
                except ValueError:
                    return False
            elif str(a) != str(b):
                return False
    return True


def parse_tsv(text):
    lines = [l for l in text.split("\n") if l]
    return [l.split("\t") for l in lines[1:]]  # without the names row


def check(engine, query_fn, qs, exp, counts):
    failures = 0
    for t, n in counts.items():
        got = parse_tsv(query_fn(f"SELECT count() AS n FROM {t} FINAL"))
        ok = got and int(got[0][0]) == n
        print(f"  {engine}: {t}: {got[0][0] if got else '?'} logical rows (report: {n})  {'ok' if ok else 'MISMATCH'}")
        failures += not ok
    for name, sql in qs.items():
        got = parse_tsv(query_fn(sql))
        ok = same(got, exp[name])
        print(f"  {engine}: {name}: {len(got)} rows  {'ok' if ok else 'MISMATCH'}")
        if not ok:
            print(f"    got:      {got}\n    expected: {exp[name]}")
        failures += not ok
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--castscope", default=os.path.join(ROOT, ".build/debug/castscope"))
    ap.add_argument("--server", help="a ClickHouse HTTP URL whose tables hold `analyze samples/ --clickhouse` rows")
    ap.add_argument("--no-chdb", action="store_true")
    args = ap.parse_args()
    report = json.loads(run(args.castscope, "analyze", "--json", "samples/"))
    qs = queries(args.castscope)
    failures = 0
    with tempfile.TemporaryDirectory() as rows:
        run(args.castscope, "analyze", "samples/", "--clickhouse", "file://" + rows)
        exp, counts = expected(report, rows)
        if not args.no_chdb:
            import chdb
            from chdb import session
            s = session.Session()
            try:
                # Current ClickHouse takes the TTL as well.
                for st in statements(run(args.castscope, "clickhouse", "schema", "--ttl-days", "3650")):
                    s.query(st)
                for _ in range(2):  # loaded twice: still one logical row each
                    for t in TABLES:
                        s.query(f"INSERT INTO {t} SELECT * FROM file('{rows}/{t}.jsonl', 'JSONEachRow')")
                print(f"chdb {chdb.__version__} (ClickHouse {getattr(chdb, 'engine_version', '?')}):")
                failures += check("chdb", lambda q: str(s.query(q, "TSVWithNames")), qs, exp, counts)
            finally:
                s.close()
        if args.server:
            def http(q):
                with urllib.request.urlopen(args.server, data=(q + "\nFORMAT TabSeparatedWithNames").encode()) as r:
                    return r.read().decode()
            print(f"server {http('SELECT version()').splitlines()[-1]}:")
            failures += check("server", http, qs, exp, counts)
    if failures:
        sys.exit(f"clickhouse-check: {failures} mismatches")
    print("clickhouse-check: every count and query as expected")


if __name__ == "__main__":
    main()
