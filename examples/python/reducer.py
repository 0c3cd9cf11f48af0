"""Hadoop streaming reducer: sums the counts of each word; streaming hands it the map output sorted by key, so the
lines of one word are consecutive."""

import sys

current, total = None, 0
for line in sys.stdin:
    word, _, count = line.rstrip("\n").rpartition("\t")
    if word != current:
        if current is not None:
            sys.stdout.write(f"{current}\t{total}\n")
        current, total = word, 0
    total += int(count)
if current is not None:
    sys.stdout.write(f"{current}\t{total}\n")
