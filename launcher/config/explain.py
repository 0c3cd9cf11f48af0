"""Where a job's values come from (issue 39, ``hpc-hadoop config``): the layers in order with their files (and
whether each is there), and for every value, a leaf of the job-file tree by its dotted key (a list is one leaf), the
layer and the file that gave it. The layers and their merge are :func:`launcher.config.load.job_layers`'s, so what is
shown is what ``submit`` would use.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launcher.config.load import Layer, job_layers, user_config_path, user_config_warning, validate_layers
from launcher.config.site import site_config_path
from launcher.util.errors import UserError
from launcher.util.userdirs import site_dir

#: The lowest layer: the model's own defaults (``hpc-hadoop reference``).
BUILT_IN = "built-in default"


@dataclass(frozen=True)
class LayerInfo:
    """One layer of the listing, lowest first.

    Attributes:
        kind: ``built-in default``, or a :data:`launcher.config.load.LAYER_KINDS` entry.
        file: its file (``None`` for the built-in defaults, the command line and ``-D``; a preset not chosen).
        state: ``read`` (it gave values), ``missing`` (no such file), ``empty`` or ``not chosen`` (no ``site:``).
        note: what else a user needs to know about it (``$HPC_HADOOP_CONFIG`` hiding the user's own file), or ``""``.
    """

    kind: str
    file: str | None
    state: str
    note: str = ""


@dataclass(frozen=True)
class Origin:
    """Where one value comes from.

    Attributes:
        key: its dotted key (``hadoop.map_memory``; a part with a dot quoted: ``hadoop.properties.yarn-site."a.b"``).
        value: as the layer wrote it (the model's default for a built-in one), JSON-typed.
        effective: as the job will use it (the validated model, ``model_dump(mode="json")``: sizes in MiB).
        layer: the layer's kind (:class:`LayerInfo`'s).
        file: the layer's file (or ``command line``, ``-D``); ``None`` for a built-in default.
    """

    key: str
    value: Any
    effective: Any
    layer: str
    file: str | None


def dotted(parts: Sequence[str]) -> str:
    """The dotted key of ``parts``, a part with a dot in it quoted (as ``--set`` reads it back)."""
    return ".".join(f'"{part}"' if "." in part else part for part in parts)


def leaves(tree: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every leaf of ``tree`` by its path: a non-empty mapping is gone into, anything else (a list, an empty mapping, a
    scalar, ``None``) is a leaf."""
    found: dict[tuple[str, ...], Any] = {}
    for key, value in tree.items():
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and value:
            found.update(leaves(value, path))
        else:
            found[path] = value
    return found


def _origin(path: tuple[str, ...],
            layers: Sequence[tuple[Layer, dict[tuple[str, ...], Any]]]) -> tuple[Layer, Any] | None:
    """The highest layer that sets ``path`` (itself or a part above it as a leaf) and the value it wrote there."""
    for layer, found in reversed(layers):
        for cut in range(len(path), 0, -1):
            if path[:cut] in found:
                value = found[path[:cut]]
                return layer, value if cut == len(path) else _below(value, path[cut:])
    return None


def _below(value: Any, rest: tuple[str, ...]) -> Any:
    """What is at ``rest`` inside ``value`` (``None`` when nothing is: the leaf above replaced it)."""
    for part in rest:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def provenance(layers: Sequence[Layer], effective: Mapping[str, Any]) -> dict[str, Origin]:
    """Every leaf of ``effective`` (the validated job, as :meth:`JobSpec.model_dump` gives it) by dotted key (sorted),
    with the highest layer that set it, else :data:`BUILT_IN`."""
    indexed = [(layer, leaves(layer.data)) for layer in layers]
    result: dict[str, Origin] = {}
    for path in sorted(leaves(effective)):
        value_now = _below(effective, path)
        origin = _origin(path, indexed)
        if origin is None:
            result[dotted(path)] = Origin(dotted(path), value_now, value_now, BUILT_IN, None)
        else:
            layer, given = origin
            result[dotted(path)] = Origin(dotted(path), given, value_now, layer.kind, layer.name)
    return result


def _layer_list(layers: Sequence[Layer], job_file: Path | None) -> list[LayerInfo]:
    """Every layer, used or not, lowest first, with its file and state."""
    by_kind = {layer.kind: layer for layer in layers}
    listing = [LayerInfo(BUILT_IN, None, "read", "the model's defaults: `hpc-hadoop reference`")]
    preset = by_kind.get("site preset")
    listing.append(LayerInfo("site preset", preset.name if preset else None, "read" if preset else "not chosen",
                             "" if preset else "no `site:` in any layer; `hpc-hadoop sites` lists them"))
    named = "named by $HPC_HADOOP_SITE_DIR" if os.environ.get("HPC_HADOOP_SITE_DIR") else \
        "the default; a site's module sets $HPC_HADOOP_SITE_DIR"
    listing.append(_file_layer("site config", site_config_path(), by_kind, f"site directory {site_dir()}: {named}"))
    listing.append(_file_layer("user config", user_config_path(), by_kind, user_config_warning() or ""))
    if job_file is not None:
        listing.append(_file_layer("job file", job_file, by_kind, ""))
    for kind in ("command line", "-D"):
        listing.append(LayerInfo(kind, None, "read" if kind in by_kind else "empty"))
    return listing


def _file_layer(kind: str, path: Path, by_kind: Mapping[str, Layer], note: str) -> LayerInfo:
    """A layer that is a file: ``read`` when it gave a layer, ``empty`` when it is there without fields, ``missing``."""
    state = "read" if kind in by_kind else "empty" if os.path.lexists(path) else "missing"
    return LayerInfo(kind, str(path), state, note)


def explain(job_file: Path | None, *, sets: Sequence[str] = (), defines: Sequence[str] = (),
            overrides: Mapping[str, Any] | None = None) -> tuple[list[LayerInfo], dict[str, Origin]]:
    """The layers of ``job_file`` (or of no job file: the layers below it) and where each of its values comes from.

    Args:
        job_file: the job file, or ``None``.
        sets, defines, overrides: as :func:`launcher.config.load.load_spec` takes them (``--set``, ``-D``, ``--site``).

    Returns:
        ``(layers, values)``: :class:`LayerInfo` lowest first; :class:`Origin` by dotted key, sorted. Without a job
        file, ``name`` and ``steps`` are left out unless a layer sets them.

    Raises:
        UserError: as :func:`launcher.config.load.load_spec` (a bad value names its layer and field; steps are not
            required); a refused site layer.
    """
    data: dict[str, Any] | None = None if job_file is not None else {}
    layers, merged = job_layers(job_file, sets=sets, overrides=overrides, data=data, defines=defines)
    if job_file is None:
        layers = [layer for layer in layers if layer.kind != "job file"]
        merged.setdefault("name", "no-job-file")
    spec = validate_layers(layers, merged, str(job_file or "command line"), require_steps=False)
    values = provenance(layers, spec.model_dump(mode="json", by_alias=True))
    if job_file is None:
        values = {key: origin for key, origin in values.items()
                  if key not in ("name", "steps") or origin.layer != BUILT_IN}
    return _layer_list(layers, job_file), values


def select(values: Mapping[str, Origin], fields: Sequence[str]) -> dict[str, Origin]:
    """The values of ``fields``: each a dotted key, or a part above keys (``hadoop`` for every ``hadoop.*``).

    Raises:
        UserError: a field that names no value (with the nearest key).
    """
    if not fields:
        return dict(values)
    chosen: dict[str, Origin] = {}
    for field in fields:
        field = field.strip()
        found = {key: origin for key, origin in values.items() if key == field or key.startswith(f"{field}.")}
        if not found:
            close = difflib.get_close_matches(field, list(values), n=1)
            raise UserError(f"{field!r} is no field of the job", file="--explain",
                            fix=(f"did you mean {close[0]!r}? " if close else "")
                            + "run `hpc-hadoop config` for every field")
        chosen.update(found)
    return chosen


__all__ = ["BUILT_IN", "LayerInfo", "Origin", "dotted", "explain", "leaves", "provenance", "select"]
