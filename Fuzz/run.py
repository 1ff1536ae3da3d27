#!/usr/bin/env python3
"""`make fuzz`: builds the libFuzzer binaries (the library's sources and Fuzz/Target.swift in one
module, `swiftc -sanitize=fuzzer` and `-sanitize=fuzzer,address`) and runs every target for
FUZZ_SECONDS each at `nice -n 19`, seeded from samples/ and ../shared/reference/. Prints each
target's executions and exec/s, appends them to .build/fuzz/log.txt, keeps corpora in
.build/fuzz/corpus/, and exits 1 on a crash (the input is in .build/fuzz/crashes/).

env: FUZZ_SECONDS (per target, default 60), FUZZ_TARGETS (comma list), FUZZ_SANITIZERS
(default "fuzzer,fuzzer+address"), FUZZ_REUSE=1 (run the binaries already built even when a
source is newer)."""
import glob
import os, re, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, ".build", "fuzz")
TARGETS = {  # target: max input length
    "pipeline": 2048, "export": 2048, "ndjson": 2048, "journal-json": 2048, "xcode": 2048,
    "gzip": 4096, "archive": 4096, "sanitize": 1024, "tracev3": 65536, "ulstrings": 16384,
}


def sources():
    return sorted(glob.glob(os.path.join(ROOT, "Sources/CastscopeKit/**/*.swift"), recursive=True)) + [
        os.path.join(ROOT, "Fuzz/Target.swift")]


def build(sanitizer):
    binary = os.path.join(OUT, "castscope-fuzz-" + sanitizer.replace(",", "-"))
    srcs = sources()
    if os.path.exists(binary) and (os.environ.get("FUZZ_REUSE") == "1"
                                   or os.path.getmtime(binary) > max(os.path.getmtime(s) for s in srcs)):
        return binary
    print(f"fuzz: building {os.path.basename(binary)} (-sanitize={sanitizer})", flush=True)
    cmd = ["nice", "-n", "10", "swiftc", "-sanitize=" + sanitizer, "-parse-as-library", "-O", "-swift-version", "6",
           "-enforce-exclusivity=unchecked", "-module-name", "CastscopeKit",
           # every system-library module of Sources/ (CCastscope*), so a new one is not missed
           *[a for d in sorted(glob.glob(os.path.join(ROOT, "Sources/CCastscope*"))) for a in ("-I", d)],
           *srcs, "-lsystemd", "-lz", "-llz4", "-o", binary]
    # Built from the sources as they were when the build started: one saved meanwhile is newer
    # than that, so the next run builds again (swiftc may leave a binary although it failed,
    # when a source changed under it, and its time alone would pass for up to date).
    started = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        if os.path.exists(binary):
            os.remove(binary)
        sys.exit(p.stderr[-8000:] + "\nfuzz: build failed")
    os.utime(binary, (started, started))
    return binary


def main():
    seconds = int(os.environ.get("FUZZ_SECONDS", "60"))
    targets = [t for t in os.environ.get("FUZZ_TARGETS", ",".join(TARGETS)).split(",") if t]
    sanitizers = os.environ.get("FUZZ_SANITIZERS", "fuzzer,fuzzer+address").split(",")
    os.makedirs(OUT, exist_ok=True)
    seeds = os.path.join(OUT, "seeds")
    subprocess.run([sys.executable, os.path.join(ROOT, "Fuzz/seeds.py"), seeds], check=True, stdout=subprocess.DEVNULL)
    crashes = os.path.join(OUT, "crashes")
    os.makedirs(crashes, exist_ok=True)
    total, failed = {}, []
    for san in sanitizers:
        san = san.replace("+", ",")
        binary = build(san)
        for t in targets:
            corpus = os.path.join(OUT, "corpus", t)
            os.makedirs(corpus, exist_ok=True)
            cmd = ["nice", "-n", "19", binary, f"-max_total_time={seconds}", f"-max_len={TARGETS[t]}",
                   "-print_final_stats=1", "-timeout=10", "-rss_limit_mb=2048",
                   f"-artifact_prefix={crashes}/{t}-{san.replace(',', '-')}-", corpus, os.path.join(seeds, t)]
            started = time.time()
            # The Swift runtime's backtracer would take the crash before libFuzzer saves the input.
            p = subprocess.run(cmd, env=dict(os.environ, CASTSCOPE_FUZZ_TARGET=t, SWIFT_BACKTRACE="enable=no"),
                               capture_output=True, text=True)
            m = re.search(r"stat::number_of_executed_units:\s*(\d+)", p.stderr)
            runs = int(m.group(1)) if m else 0
            wall = time.time() - started
            crashed = p.returncode != 0
            line = (f"fuzz: {t:<13} {san:<15} {runs:>10} executions in {wall:5.0f} s = {runs / max(wall, 1):8.0f}/s"
                    f"  {'CRASH (see ' + crashes + ')' if crashed else 'ok'}")
            print(line, flush=True)
            with open(os.path.join(OUT, "log.txt"), "a") as f:
                f.write(time.strftime("%Y-%m-%dT%H:%M:%S ") + line + "\n")
            if crashed:
                failed.append(t)
                sys.stderr.write(p.stderr[-4000:])
            total[san] = total.get(san, 0) + runs
    for san, n in total.items():
        print(f"fuzz: {san}: {n} executions in all")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
