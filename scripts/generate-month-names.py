#!/usr/bin/env python3
"""Writes parsers/tables/month-names.json: the month abbreviations (`%b`) journalctl -o short
prints under a non-English LC_TIME, read from glibc's locale sources (Debian's `locales`
package, /usr/share/i18n/locales). Run by hand when the list of locales changes; the table is
committed (CI does not need the locale sources).

Usage: scripts/generate-month-names.py [LOCALES_DIR]
"""
import json, pathlib, re, sys

LOCALES = ["de_DE", "de_AT", "fr_FR", "es_ES", "es_MX", "it_IT", "pt_BR", "pt_PT", "nl_NL", "sv_SE",
           "da_DK", "nb_NO", "fi_FI", "pl_PL", "cs_CZ", "sk_SK", "hu_HU", "ro_RO", "tr_TR", "ru_RU",
           "uk_UA", "el_GR", "ja_JP", "ko_KR", "zh_CN", "zh_TW", "id_ID", "vi_VN", "ca_ES",
           "sl_SI", "et_EE", "lv_LV", "lt_LT", "bg_BG", "he_IL", "en_DK", "en_IE"]

root = pathlib.Path(__file__).resolve().parent.parent
src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/i18n/locales")


def decode(s):
    return re.sub(r"<U([0-9A-Fa-f]{4,6})>", lambda m: chr(int(m.group(1), 16)), s)


def abmon(name, depth=0):
    text = (src / name).read_text(encoding="utf-8", errors="replace")
    section = re.search(r"^LC_TIME\s*$(.*?)^END LC_TIME", text, re.S | re.M)
    if not section:
        return None
    body = section.group(1)
    m = re.search(r"^abmon\s+(.*?)(?=^\w)", body, re.S | re.M)
    if m:
        values = re.findall(r'"([^"]*)"', m.group(1))
        return [decode(v) for v in values][:12]
    c = re.search(r'^copy\s+"([^"]+)"', body, re.M)
    if c and depth < 5:
        return abmon(c.group(1), depth + 1)
    return None


months = [[] for _ in range(12)]
english = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
used = []
for loc in LOCALES:
    names = abmon(loc)
    if not names or len(names) != 12:
        print(f"{loc}: no abmon", file=sys.stderr)
        continue
    used.append(loc)
    for k, n in enumerate(names):
        n = n.strip()
        if n and n != english[k] and n not in months[k]:
            months[k].append(n)
# An abbreviation two locales give to different months names no month: it is left out of both
# (Croatian, not in the list for that reason, would take Polish "lip" and "lis" so).
where = {}
for k, names in enumerate(months):
    for n in names:
        where.setdefault(n.lower(), set()).add(k)
ambiguous = sorted(n for n, ks in where.items() if len(ks) > 1)
for k in range(12):
    months[k] = [n for n in months[k] if n.lower() not in ambiguous]
table = {
    "table": "month-names",
    "title": "Month abbreviations (%b) journalctl -o short prints under a non-English LC_TIME; English ones are read by every format, in any letter case here",
    "source": "glibc locale sources (Debian's locales package): " + " ".join(used) + "; written by scripts/generate-month-names.py",
    "months": [{"month": k + 1, "names": names} for k, names in enumerate(months)],
    "ambiguous": ambiguous,
}
out = root / "parsers/tables/month-names.json"
out.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
print(f"wrote {out.relative_to(root)} ({sum(len(m) for m in months)} names from {len(used)} locales)")
