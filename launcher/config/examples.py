"""What hpc-hadoop knows of Hadoop's command lines: where the built-in examples (``hadoop-mapreduce-examples``)
take their input and output directories, and which of Hadoop's generic options take a value.

Used to check a step's inputs and outputs before anything starts (:mod:`launcher.steps.commands`) and to make a job
file's relative paths absolute (:mod:`launcher.config.spec`); pure data and functions.
"""

from __future__ import annotations

#: Where a built-in example takes its output directory from: index into its arguments.
EXAMPLE_OUTPUT_ARG = {"wordcount": -1, "terasort": -1, "teragen": -1, "teravalidate": 1, "grep": 1,
                      "randomwriter": -1, "sort": -1}
#: Examples whose arguments name input paths: indexes.
EXAMPLE_INPUT_ARGS = {"wordcount": slice(0, -1), "terasort": slice(0, 1), "teravalidate": slice(0, 1),
                      "grep": slice(0, 1), "sort": slice(0, 1)}

#: Hadoop's GenericOptionsParser options that take a value (``-D k=v`` or ``-Dk=v``, ``-files a,b``...).
_GENERIC_WITH_VALUE = {"-D", "-conf", "-fs", "-jt", "-files", "-libjars", "-archives", "-tokenCacheFile"}


def positional_indexes(args: list[str]) -> list[int]:
    """Indexes in ``args`` of the arguments that are not Hadoop generic options (``-Dk=v``, ``-D k=v``,
    ``-files x``, ...)."""
    out: list[int] = []
    skip = False
    for index, arg in enumerate(args):
        if skip:
            skip = False
        elif arg in _GENERIC_WITH_VALUE:
            skip = True
        elif not arg.startswith("-D"):
            out.append(index)
    return out


def positional(args: list[str]) -> list[str]:
    """``args`` without Hadoop's generic options (``-Dk=v``, ``-D k=v``, ``-files x``, ...)."""
    return [args[i] for i in positional_indexes(args)]
