#!/usr/bin/env python3
"""Renders Markdown (stdin) to HTML (stdout) with cmark-gfm, the parser github.com uses
(PyPI `cmarkgfm`, installed by `make deps`): GFM tables, autolinks, strikethrough and the tag
filter, raw HTML handled as GitHub does. Used by the Markdown report tests."""
import sys

import cmarkgfm
from cmarkgfm.cmark import Options

sys.stdout.write(cmarkgfm.github_flavored_markdown_to_html(sys.stdin.read(), options=Options.CMARK_OPT_UNSAFE))
