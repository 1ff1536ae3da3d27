#!/usr/bin/env python3
"""Validates castscope's JSON output against the schema files in schema/ (used by the tests).

    validate-json.py report FILE...       each FILE is one `analyze --json` document
    validate-json.py tail FILE...         each FILE holds `tail --json` lines; each line is
                                          checked against schema/castscope.tail.<type>.schema.json

Prints one line per problem (file, line or path, message) and exits 1 when there is any;
prints the number of objects checked per schema otherwise.
"""
import collections
import json
import pathlib
import sys

import jsonschema

SCHEMA = pathlib.Path(__file__).resolve().parent.parent / "schema"


def validator(name):
    doc = json.loads((SCHEMA / name).read_text())
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc)


def main():
    mode, files = sys.argv[1], sys.argv[2:]
    problems, checked = [], collections.Counter()
    if mode == "report":
        v = validator("castscope.report.schema.json")
        for f in files:
            for e in v.iter_errors(json.loads(pathlib.Path(f).read_text())):
                problems.append(f"{f}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
            checked["report"] += 1
    else:
        vs = {}
        for f in files:
            for n, line in enumerate(pathlib.Path(f).read_text().splitlines(), 1):
                if not line.strip():
                    continue
                obj = json.loads(line)
                t = obj.get("type")
                if t not in vs:
                    path = SCHEMA / f"castscope.tail.{t}.schema.json"
                    if not path.exists():
                        problems.append(f"{f}:{n}: no schema for type {t!r}")
                        continue
                    vs[t] = validator(path.name)
                for e in vs[t].iter_errors(obj):
                    problems.append(f"{f}:{n}: {t}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
                checked[t] += 1
    for p in problems:
        print(p)
    print(" ".join(f"{k}={v}" for k, v in sorted(checked.items())))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
