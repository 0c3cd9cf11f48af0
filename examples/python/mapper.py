"""Hadoop streaming mapper: one ``word<TAB>1`` line per token of stdin (tokens as Hadoop's WordCount: split on
" \\t\\n\\r\\f"; bytes decoded as UTF-8, bad bytes replaced)."""

import re
import sys

TOKENS = re.compile(r"[ \t\n\r\f]+")

for raw in sys.stdin.buffer:
    for word in TOKENS.split(raw.decode("utf-8", errors="replace")):
        if word:
            sys.stdout.write(f"{word}\t1\n")
