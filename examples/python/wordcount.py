"""Word count with PySpark, tokenised as Hadoop's WordCount does (java.util.StringTokenizer on " \\t\\n\\r\\f").

Usage (a pyspark: step of examples/spark.yaml): wordcount.py INPUT OUTPUT
Writes ``word<TAB>count`` lines into OUTPUT/part-*, as Hadoop's WordCount does.
"""

from __future__ import annotations

import re
import sys

from pyspark import SparkContext

#: StringTokenizer's default delimiters.
TOKENS = re.compile(r"[ \t\n\r\f]+")


def words(line: bytes) -> list[str]:
    """The tokens of one line (bytes decoded as UTF-8, bad bytes replaced, as Hadoop's Text.toString does)."""
    return [token for token in TOKENS.split(line.decode("utf-8", errors="replace")) if token]


def main(argv: list[str]) -> int:
    """Count the words of ``argv[1]`` into ``argv[2]``; returns the exit code."""
    if len(argv) != 3:
        print(f"usage: {argv[0]} INPUT OUTPUT", file=sys.stderr)
        return 2
    sc = SparkContext(appName="wordcount")
    try:
        counts = (sc.textFile(argv[1], use_unicode=False)
                  .flatMap(words)
                  .map(lambda word: (word, 1))
                  .reduceByKey(lambda a, b: a + b))
        counts.map(lambda pair: f"{pair[0]}\t{pair[1]}").saveAsTextFile(argv[2])
    finally:
        sc.stop()
    # What the script prints reaches the terminal (`wordcount> ...`); Spark's own log lines stay in the step log.
    print(f"counted the words of {argv[1]} into {argv[2]}/part-*")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
