#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, from samples/ and ../shared/reference/ (each seed cut to
MAX bytes): text logs for the pipeline and format targets, their gzip for gzip, tar/tar.gz/zip
of a few of them for archive, and everything for sanitize. Usage: seeds.py OUTDIR"""
import gzip, io, os, sys, tarfile, zipfile

MAX = 4096
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = sys.argv[1]
texts = []
for base in [os.path.join(root, "samples"), os.path.join(root, "..", "shared", "reference", "real-logs")]:
    for dirpath, _, files in os.walk(base):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            if os.path.getsize(path) == 0:
                continue
            with open(path, "rb") as f:
                data = f.read(MAX)
            texts.append((name, data))


def put(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name.replace("/", "_")), "wb") as f:
        f.write(data[:MAX])


for i, (name, data) in enumerate(texts):
    for target in ["pipeline", "export", "ndjson", "journal-json", "xcode", "sanitize"]:
        put(target, f"{i}-{name}", data)
    put("gzip", f"{i}-{name}.gz", gzip.compress(data[:4096]))
    put("pipeline", f"{i}-{name}.gz", gzip.compress(data[:4096]))
small = [t for t in texts if len(t[1]) < 4096][:4] or texts[:2]
for fmt, mode in [("tar", "w"), ("tgz", "w:gz")]:
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode=mode) as t:
        for name, data in small:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    put("archive", "seed." + fmt, b.getvalue())
    put("pipeline", "seed." + fmt, b.getvalue())
b = io.BytesIO()
with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
    for name, data in small:
        z.writestr(name, data)
put("archive", "seed.zip", b.getvalue())
put("pipeline", "seed.zip", b.getvalue())
# Apple's Unified Logging files (../shared/reference/unified-logging): the small macOS tracev3
# whole, the iOS one's first 64 KB (header, catalog, first chunksets), and the string files.
ul = os.path.join(root, "..", "shared", "reference", "unified-logging")
for name, target, limit in [("0000000000000030.tracev3", "tracev3", 65536), ("0000000000000f85.tracev3", "tracev3", 65536),
                            ("uuidtext/00/7EF56328D53A78B59CCCE3E3189F57", "ulstrings", 16384),
                            ("uuidtext/22/0D3C2953A33917B333DD8366AC25F2", "ulstrings", 16384),
                            ("uuidtext/dsc/dsc-version1", "ulstrings", 16384), ("uuidtext/dsc/dsc-version2", "ulstrings", 16384),
                            ("uuidtext/dsc/8E21CAB1DCF936B49F85CF860E6F34EC", "ulstrings", 16384)]:
    path = os.path.join(ul, name)
    if os.path.exists(path):
        with open(path, "rb") as f:
            data = f.read(limit)
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name.replace("/", "_")), "wb") as f:
            f.write(data)
        if target == "tracev3":
            put("pipeline", name, data)
print(f"seeds: {len(texts)} files in {out}")
