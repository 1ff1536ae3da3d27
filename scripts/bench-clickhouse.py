#!/usr/bin/env python3
"""`make bench`, ClickHouse section: a real clickhouse-server on 127.0.0.1 (private config and
data directory, free ports), the castscope tables created, then `castscope analyze` of the bench
input with and without `--clickhouse`, alternately, RUNS times (tables truncated before each
run). Prints the rows written, rows per second of the export (rows / extra wall time), and the
ratio of the two analyze times (is ClickHouse the bottleneck?).

usage: bench-clickhouse.py BIN INPUT [RUNS]
"""
import os, shutil, socket, statistics, subprocess, sys, tempfile, time, urllib.request

SERVER = shutil.which("clickhouse-server") or "/usr/sbin/clickhouse-server"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    binary, log = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    if not os.path.exists(SERVER):
        print("  clickhouse-server not installed: skipped")
        return
    work = tempfile.mkdtemp(prefix="castscope-bench-ch-")
    http, tcp = free_port(), free_port()
    for d in ("data", "tmp", "log"):
        os.makedirs(os.path.join(work, d))
    shutil.copy("/etc/clickhouse-server/users.xml", work)
    with open(os.path.join(work, "config.xml"), "w") as f:
        f.write(f"""<?xml version="1.0"?><yandex>
  <logger><level>warning</level><log>{work}/log/s.log</log><errorlog>{work}/log/e.log</errorlog></logger>
  <http_port>{http}</http_port><tcp_port>{tcp}</tcp_port><listen_host>127.0.0.1</listen_host>
  <path>{work}/data/</path><tmp_path>{work}/tmp/</tmp_path><users_config>{work}/users.xml</users_config>
  <default_profile>default</default_profile><default_database>default</default_database>
  <mark_cache_size>536870912</mark_cache_size></yandex>""")
    url = f"http://127.0.0.1:{http}/"
    server = subprocess.Popen([SERVER, f"--config-file={work}/config.xml"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def q(sql):
        with urllib.request.urlopen(url, data=sql.encode(), timeout=60) as r:
            return r.read().decode()

    try:
        for _ in range(300):
            try:
                if q("SELECT 1").strip() == "1":
                    break
            except OSError:
                time.sleep(0.1)
        subprocess.run([binary, "clickhouse", "schema", "--apply", url], check=True)
        tables = ["castscope_sessions", "castscope_events", "castscope_findings", "castscope_inputs"]
        plain, export, files, server_cpu = [], [], [], []
        rows = 0
        rows_dir = os.path.join(work, "rows")
        tick = os.sysconf("SC_CLK_TCK")

        def cpu_of(pid):
            # utime + stime of the server, in seconds.
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick

        for _ in range(runs):
            for t in tables:
                q(f"TRUNCATE TABLE {t}")
            for name, extra, into in (("plain", [], plain), ("export", ["--clickhouse", url], export),
                                      ("file", ["--clickhouse", "file://" + rows_dir], files)):
                before = cpu_of(server.pid)
                start = time.perf_counter()
                r = subprocess.run([binary, "analyze", "--no-color", *extra, log], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                into.append(time.perf_counter() - start)
                if name == "export":
                    server_cpu.append(cpu_of(server.pid) - before)
                if r.returncode != 0:
                    print(f"  analyze {name} exited {r.returncode}: {r.stderr.strip()[:300]}")
            rows = sum(int(q(f"SELECT count() FROM {t}").strip()) for t in tables)
        p, e, fl = statistics.median(plain), statistics.median(export), statistics.median(files)
        extra = max(e - p, 1e-6)
        print(f"  rows written per analysis: {rows} (events {q('SELECT count() FROM castscope_events').strip()})")
        print(f"  analyze without --clickhouse: {p:.3f} s; with: {e:.3f} s ({e / p:.2f}x)")
        print(f"  castscope's own share, rows to file:// instead: {fl:.3f} s ({fl / p:.2f}x); "
              f"the server's CPU per analysis: {statistics.median(server_cpu):.2f} s (same {os.cpu_count()} cores)")
        print(f"  export: {rows / extra:,.0f} rows/s into the local server (rows / extra wall time; {q('SELECT version()').strip()})")
        verdict = "PASS" if e <= 1.5 * p else "MISS"
        print(f"  target: analyze with --clickhouse within 1.5x of analyze alone (ClickHouse not the bottleneck): {verdict}")
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
