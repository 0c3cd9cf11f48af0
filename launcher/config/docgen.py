"""The job-file reference, generated from the schema (:class:`launcher.config.spec.JobSpec`) so it cannot drift.

``hpc-hadoop reference > docs/job-file-reference.md`` regenerates it; a test compares the two.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from launcher.config.spec import (
    ContainerMemory,
    DaemonHeap,
    ExampleStep,
    JarStep,
    JobSpec,
    NodeMemory,
    PySparkSpec,
    PySparkStep,
    SparkJarSpec,
    SparkStep,
    StreamingSpec,
    StreamingStep,
)

#: The memory types of the job file's model: a field of one of them is a memory (``2g``; bare number = MiB).
_MEMORY_TYPES = (ContainerMemory, DaemonHeap, NodeMemory)
_MEMORY_FIELDS = {"daemon_heap", "map_memory", "reduce_memory", "am_memory", "nodemanager_memory",
                  "memory_per_node"}
_SIZE_FIELDS = _MEMORY_FIELDS | {"split_size", "size"}
_TIME_FIELDS = {"walltime"}


#: Fields whose type reads better as what people type than as the model's type.
_NAMED_TYPES = {
    "steps": "list of steps (`example:`, `jar:`, `streaming:`, `spark:` or `pyspark:`; below)",
    "signal_lead": "seconds",
    **{name: "memory (`512m`, `2g`; bare number = MiB)" for name in _MEMORY_FIELDS},
    **{name: "size (`512m`, `2g`; bare number = bytes)" for name in _SIZE_FIELDS - _MEMORY_FIELDS},
    **{name: "walltime (`HH:MM:SS`, `D-HH:MM`, `90m`; bare number = minutes)" for name in _TIME_FIELDS},
}


def _type_name(annotation: Any, name: str) -> str:
    if name in _NAMED_TYPES:
        return _NAMED_TYPES[name]
    if any(annotation == memory for memory in _MEMORY_TYPES):  # any memory field, by its type (executor_memory)
        return _NAMED_TYPES["map_memory"]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        names = [_type_name(a, "") for a in args if a is not type(None)]
        return " or ".join(names) + (" or null" if type(None) in args else "")
    if origin is typing.Annotated:
        return _type_name(args[0], name)
    return _plain_type_name(annotation, origin, args)


def _plain_type_name(annotation: Any, origin: Any, args: tuple[Any, ...]) -> str:
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type_name(args[0], '')}" if args else "list"
    if origin is dict:
        return "mapping"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping (below)"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(annotation, str(annotation))


def _default(field: Any, name: str) -> str:
    if field.default is PydanticUndefined and field.default_factory is None:
        return "required"
    value = field.default_factory() if field.default_factory is not None else field.default
    if isinstance(value, BaseModel):
        return ""
    if value is None:
        return "—"
    if name in _SIZE_FIELDS and isinstance(value, int):
        from launcher.util.units import format_size

        return f"`{format_size(value)}`"
    if name in _TIME_FIELDS and isinstance(value, int):
        from launcher.util.units import format_walltime

        return f"`{format_walltime(value)}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`" if value not in ([], {}) else "empty"


def _table(model: type[BaseModel], prefix: str) -> list[str]:
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        key = field.alias or name
        annotation = field.annotation
        own = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
        description = (field.description or (own.__doc__ if own else "") or "").strip().split("\n\n")[0]
        description = " ".join(description.split()).replace("|", "\\|")
        rows.append(f"| `{prefix}{key}` | {_type_name(field.annotation, name)} | {_default(field, name)} | "
                    f"{description} |")
    return rows


def _sections(model: type[BaseModel], prefix: str) -> list[tuple[str, type[BaseModel], str]]:
    """The sections of ``model``'s fields that are mappings, depth first: ``(title, model, prefix)``; fields of
    one model (``filesystem.striping.input``, ``output``...) share one section, ``filesystem.striping.<role>``
    (its title lists them)."""
    groups: dict[type[BaseModel], list[str]] = {}
    for name, field in model.model_fields.items():
        annotation = field.annotation
        optional = [a for a in typing.get_args(annotation) if a is not type(None)]
        if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(optional) == 1:
            annotation = optional[0]  # ``spark: SparkSpec | None``: a section all the same
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            groups.setdefault(annotation, []).append(field.alias or name)
    found: list[tuple[str, type[BaseModel], str]] = []
    for sub, names in groups.items():
        key = names[0] if len(names) == 1 else "<role>"
        listed = "" if len(names) == 1 else f" (`<role>`: {', '.join(f'`{n}`' for n in names)})"
        found.append((f"`{prefix}{key}:`{listed}", sub, f"{prefix}{key}."))
        found += _sections(sub, f"{prefix}{key}.")
    return found


def reference() -> str:
    """The Markdown job-file reference."""
    lines = ["# Job-file reference", "",
             "Generated from the schema by `hpc-hadoop reference`; do not edit by hand.", "",
             "- Files are read as YAML 1.2 (core schema): `walltime: 1:30:00` is the string `1:30:00` (not the",
             "  YAML 1.1 base-60 number 5400), and `yes`/`no`/`on`/`off` are strings to YAML; a boolean field",
             "  takes them, as `true`/`false`, for true and false, and a string field keeps them as written.",
             "- Sizes use Hadoop's binary units (`1m` = 1 MiB, `2g` = `2G` = `2GB` = `2 GiB`). A bare number is",
             "  **MiB** for a memory field (`map_memory: 2048` = 2 GiB, as Hadoop's `*.memory.mb` and Slurm's",
             "  `--mem`) and bytes for the other sizes (stripe and split sizes). Containers need at least 128 MiB,",
             "  daemon heaps 256 MiB, `batch.memory_per_node` 1 GiB.",
             "- Walltimes use Slurm's `--time` formats (`MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`,",
             "  `D-HH:MM:SS`) or a number with a unit (`30s`, `90m`, `2h`, `1d`); a bare number is **minutes**,",
             "  as in Slurm.",
             "- Batch names (`batch.partition`, `account`, `qos`, `sge.pe`) are one line of letters, digits and",
             "  `_ . , + @ : / = -`; `batch.extra_directives` items are one line each.",
             "- A Hadoop property is set from the command line with `-D key=value` (into the `*-site.xml` whose",
             "  `*-default.xml` knows the key); an unknown property name gets a warning with the nearest known",
             "  one. Task, node and shuffle timeouts are clamped to half the walltime (docs/user-guide.md).", ""]
    sections: list[tuple[str, type[BaseModel], str]] = [("Top level", JobSpec, ""), *_sections(JobSpec, "")]
    sections += [("Steps: `example:`", ExampleStep, "steps[]."), ("Steps: `jar:`", JarStep, "steps[]."),
                 ("Steps: `streaming:`", StreamingStep, "steps[]."),
                 ("`streaming:` of a step", StreamingSpec, "steps[].streaming."),
                 ("Steps: `spark:`", SparkStep, "steps[]."), ("`spark:` of a step", SparkJarSpec, "steps[].spark."),
                 ("Steps: `pyspark:`", PySparkStep, "steps[]."),
                 ("`pyspark:` of a step", PySparkSpec, "steps[].pyspark.")]
    for title, model, prefix in sections:
        lines += [f"## {title}", "", " ".join((model.__doc__ or "").strip().split("\n\n")[0].split()), ""]
        lines += _table(model, prefix) + [""]
    return "\n".join(lines)
