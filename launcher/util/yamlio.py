"""YAML as people type it: read with the YAML 1.2 core schema, not PyYAML's YAML 1.1 default.

YAML 1.1 (PyYAML's ``safe_load``) reads ``walltime: 1:30:00`` as the base-60 integer 5400, ``yes``/``no``/
``on``/``off`` as booleans and ``0777`` as octal; YAML 1.2 (2009) dropped all three. Every file the tool
reads that a person writes (job files, site presets, the user config, bench files, ``--set`` values) goes
through :func:`load_yaml`, whose resolvers are exactly the YAML 1.2 core schema's (spec 1.2.2 §10.3.2):
``null``/``Null``/``NULL``/``~``/empty, ``true``/``false`` (three casings), decimal, ``0o`` octal and
``0x`` hex integers, floats with ``.inf``/``.nan``; everything else is a string.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["Yaml12Dumper", "Yaml12Loader", "YAMLError", "dump_yaml", "load_yaml"]

YAMLError = yaml.YAMLError


class Yaml12Loader(yaml.SafeLoader):
    """A PyYAML safe loader that resolves plain scalars by the YAML 1.2 core schema (no base-60, no yes/no)."""

    yaml_implicit_resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {}

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """A 1.2 core int: decimal (``-12``), ``0o17`` (octal), ``0x1F`` (hex); no ``_`` and no base 60."""
        text = str(self.construct_scalar(node))
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text, 10)


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", Yaml12Loader.construct_yaml_int)

_RESOLVERS: list[tuple[str, str, str]] = [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("tag:yaml.org,2002:float",
     r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
     "-+0123456789."),
]
for _tag, _pattern, _first in _RESOLVERS:
    Yaml12Loader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))
# PyYAML resolves an empty plain scalar through the ``None`` key.
Yaml12Loader.yaml_implicit_resolvers.setdefault("", []).append(
    ("tag:yaml.org,2002:null", re.compile(r"^$")))


class Yaml12Dumper(yaml.SafeDumper):
    """A safe dumper that quotes every string a YAML 1.1 *or* 1.2 reader would take for another type
    (``"1:30:00"``, ``"yes"``, ``"0o17"``), so that what it writes reads back the same with either."""


for _tag, _pattern, _first in _RESOLVERS:
    Yaml12Dumper.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def dump_yaml(data: Any) -> str:
    """``data`` as block-style YAML in its own key order (:class:`Yaml12Dumper`)."""
    return yaml.dump(data, Dumper=Yaml12Dumper, sort_keys=False)


def load_yaml(text: str) -> Any:
    """Parse one YAML document with the YAML 1.2 core schema (:class:`Yaml12Loader`).

    Raises:
        yaml.YAMLError: the text is not valid YAML (``problem_mark`` gives the line).
    """
    return yaml.load(text, Loader=Yaml12Loader)  # noqa: S506 - a SafeLoader subclass
