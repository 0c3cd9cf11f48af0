"""Loading a job file: its layers (built-in defaults, site preset, the site's defaults, user defaults, the job file,
``--set`` and ``-D``) merged, paths made absolute against the job file's directory, validated into a
:class:`launcher.config.spec.JobSpec`, and a validation error turned into one line naming the layer, the field and the
fix (issue 38: the loader apart from the model; the layers are described in :mod:`launcher.config.spec`; the site's
layer in :mod:`launcher.config.site`).
"""

from __future__ import annotations

import copy
import difflib
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from launcher.config.site import site_config_file, site_layer_presets
from launcher.config.spec import _STEP_MODELS, CONFIG_FILES, SITE_DIR, JobSpec, _step_kind
from launcher.util.errors import UserError
from launcher.util.userdirs import config_file, default_config_file
from launcher.util.yamlio import YAMLError, load_yaml


def deep_merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``base`` updated by ``top``: mappings merge recursively, everything else is replaced."""
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _read_yaml(path: Path, what: str) -> dict[str, Any]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UserError(f"{what} not found", file=str(path), fix="check the path") from None
    except OSError as exc:
        raise UserError(f"cannot read {what}: {exc.strerror}", file=str(path)) from None
    try:
        data = load_yaml(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        fix = "indent with spaces: YAML forbids tabs" if "'\\t'" in problem else "check indentation and quoting"
        raise UserError(f"not valid YAML: {problem}", file=str(path), field=where, fix=fix) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError("must be a mapping of fields (name:, steps:, ...)", file=str(path))
    return data


def parse_set(assignment: str) -> dict[str, Any]:
    """Turn ``--set hadoop.map_memory=2g`` into ``{"hadoop": {"map_memory": "2g"}}``.

    Property names with dots are reached with a quoted last part:
    ``--set 'hadoop.properties.yarn-site."yarn.nm.x"=5'``.

    Raises:
        UserError: no ``=`` or an empty key.
    """
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise UserError(f"{assignment!r} is not key=value", file="--set",
                        fix="write e.g. --set hadoop.map_memory=2g")
    parts: list[str] = []
    for match in re.finditer(r'"([^"]+)"|([^.]+)', key.strip()):
        parts.append(match.group(1) or match.group(2))
    parts = _property_parts(parts, assignment)
    try:
        value = load_yaml(raw) if raw != "" else ""
    except YAMLError:
        value = raw
    tree: dict[str, Any] = {}
    node = tree
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return tree


def _property_parts(parts: list[str], assignment: str) -> list[str]:
    """``hadoop.properties.FILE.a.b.c`` → ``[hadoop, properties, FILE, "a.b.c"]`` (a property name keeps its dots).

    Raises:
        UserError: ``hadoop.properties.KEY`` without a file (names the ``-D`` spelling that picks it).
    """
    if parts[:2] != ["hadoop", "properties"] or len(parts) < 4:
        if parts[:2] == ["hadoop", "properties"] and len(parts) == 3 and parts[2] not in CONFIG_FILES:
            raise UserError(f"{assignment!r} names no configuration file", file="--set",
                            fix=f"write -D {parts[2]}={assignment.partition('=')[2]}")
        return parts
    if parts[2] not in CONFIG_FILES:
        name = ".".join(parts[2:])
        raise UserError(f"{assignment!r}: {parts[2]!r} is not a configuration file", file="--set",
                        fix=f"write -D {name}={assignment.partition('=')[2]} (or --set "
                            f"hadoop.properties.<{'|'.join(CONFIG_FILES)}>.{name}=...)")
    return [*parts[:3], ".".join(parts[3:])]


def parse_define(define: str, home: str | None) -> dict[str, Any]:
    """Turn ``-D mapreduce.job.reduces=8`` into ``{"hadoop": {"properties": {"mapred-site": {key: "8"}}}}``.

    The file is the one whose ``*-default.xml`` in the Hadoop install at ``home`` lists the key, else chosen by
    the key's prefix (:func:`launcher.config.properties.config_file_for`). The value stays a string, as Hadoop's own
    ``-D`` reads it.

    Raises:
        UserError: no ``=`` or an empty key.
    """
    from launcher.config.properties import config_file_for, known_properties

    key, sep, value = define.partition("=")
    key = key.strip()
    if not sep or not key or any(c.isspace() for c in key):
        raise UserError(f"{define!r} is not key=value", file="-D", fix="write e.g. -D mapreduce.job.reduces=8")
    file = config_file_for(key, known_properties(home) if home else {})
    return {"hadoop": {"properties": {file: {key: value}}}}


def user_config_path() -> Path:
    """``$HPC_HADOOP_CONFIG``, else ``$XDG_CONFIG_HOME/hpc-hadoop/config.yaml`` (default
    ``~/.config/hpc-hadoop/config.yaml``: :func:`launcher.util.userdirs.config_file`)."""
    return config_file()


def user_config_warning() -> str | None:
    """The line saying that ``$HPC_HADOOP_CONFIG`` hides the user's own defaults: when it names a file other than
    ``~/.config/hpc-hadoop/config.yaml`` (:func:`launcher.util.userdirs.default_config_file`) and that file exists,
    only the one ``$HPC_HADOOP_CONFIG`` names is read (issue 39: a user's ``map_memory: 768m`` became 1024 without a
    word). ``None`` when nothing is hidden."""
    env = os.environ.get("HPC_HADOOP_CONFIG")
    own = default_config_file()
    if not env or not own.is_file() or os.path.abspath(env) == os.path.abspath(own):
        return None
    return (f"$HPC_HADOOP_CONFIG={env} is read as your config instead of {own}, which is not read (fix: unset "
            f"HPC_HADOOP_CONFIG, or move what you need into {env}; a site's defaults go in $HPC_HADOOP_SITE_DIR)")


#: The warnings already printed by this process (:func:`_warn_once`).
_WARNED: set[str] = set()


def _warn_once(line: str) -> None:
    """``warning: <line>`` on standard error, once a process (a command loads its job file more than once)."""
    if line not in _WARNED:
        _WARNED.add(line)
        print(f"warning: {line}", file=sys.stderr, flush=True)


class Preset(NamedTuple):
    """A site preset of :func:`preset_listing`.

    Attributes:
        name: what ``site:`` names.
        path: its file.
        origin: ``"site"`` (the site layer's ``site-configs/``) or ``"shipped"`` (the package's).
        shadows: the shipped preset of the same name it replaces, or ``None``.
    """

    name: str
    path: Path
    origin: str
    shadows: Path | None


def preset_listing() -> list[Preset]:
    """Every site preset, by name: the shipped ones (``site-configs/`` of the package) and the site layer's
    (:func:`launcher.config.site.site_layer_presets`), a site's preset replacing a shipped one of its name.

    Raises:
        UserError: the site layer is refused (:func:`launcher.config.site.site_layer_dir`).
    """
    shipped = {p.stem: p for p in sorted(SITE_DIR.glob("*.yaml"))}
    site = site_layer_presets()
    listed = [Preset(name, path, "site", shipped.get(name)) for name, path in site.items()]
    listed += [Preset(name, path, "shipped", None) for name, path in shipped.items() if name not in site]
    return sorted(listed)


def site_presets() -> dict[str, Path]:
    """The site presets: name → file (:func:`preset_listing`: the site layer's win over the shipped ones).

    Raises:
        UserError: the site layer is refused.
    """
    return {preset.name: preset.path for preset in preset_listing()}


def _lookup(tree: Mapping[str, Any], loc: tuple[Any, ...]) -> bool:
    node: Any = tree
    for part in loc:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return False
    return True


_FIXES = {
    "missing": "add it",
    "extra_forbidden": None,
    "int_parsing": "use a whole number",
    "int_type": "use a whole number",
    "bool_parsing": "use true or false",
    "bool_type": "use true or false",
    "literal_error": None,
    "string_type": "use a string (quote it)",
    "list_type": "use a YAML list ([a, b] or one '- item' per line)",
    "dict_type": "use a mapping (key: value lines)",
    "too_short": "give at least one",
    "greater_than_equal": None,
}


def _describe(error: Mapping[str, Any], model: type[BaseModel], data: Mapping[str, Any]) -> tuple[str, str | None]:
    kind = error["type"]
    loc = [p for p in error["loc"] if p not in _STEP_MODELS]
    message = error["msg"].removeprefix("Value error, ")
    fix = _FIXES.get(kind)
    if kind == "extra_forbidden":
        parent = _model_at(model, loc[:-1], data)
        names = sorted(f.alias or n for n, f in parent.model_fields.items()) if parent else []
        message = f"unknown field {loc[-1]!r}"
        fix = f"{_did_you_mean(str(loc[-1]), names)}valid fields here: {', '.join(names)}" if names else "remove it"
    elif kind == "missing":
        message = "required field is missing"
    elif kind == "literal_error":
        fix = message.replace("Input should be", "use")
        message = f"{error.get('input')!r} is not allowed"
        close = difflib.get_close_matches(str(error.get("input")), re.findall(r"'([^']*)'", fix), n=1)
        if close:
            fix = f"did you mean {close[0]!r}? ({fix})"
    elif kind == "model_type":  # a section (filesystem:, hadoop:, a step's body...) given as a list or a scalar
        message = f"{error.get('input')!r}: this is a section, a mapping of its own fields"
        parent = _model_at(model, loc, data)
        names = sorted(f.alias or n for n, f in parent.model_fields.items()) if parent else []
        fix = "use key: value lines" + (f" of its fields: {', '.join(names)}" if names else "")
    elif kind in ("int_parsing", "int_type", "bool_parsing", "string_type", "list_type", "dict_type"):
        message = f"{error.get('input')!r}: {message.lower()}"
    elif kind in _BOUNDS and fix is None:
        message = f"{error.get('input')!r}: {message[0].lower()}{message[1:]}"
        fix = f"give a number {_BOUNDS[kind]} {next(iter((error.get('ctx') or {}).values()), '')}".rstrip()
    return message, fix


#: pydantic's bound errors and the comparison a fix states (``nodes: 0`` -> "give a number >= 1").
_BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}


def _model_at(model: type[BaseModel], loc: list[Any], data: Mapping[str, Any]) -> type[BaseModel] | None:
    current: Any = model
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        steps = data.get("steps") or []
        kind = _step_kind(steps[loc[1]]) if loc[1] < len(steps) else None
        if kind is None:
            return None
        current, loc = _STEP_MODELS[kind], loc[2:]
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = current.model_fields.get(part)
        if field is None:
            return None
        annotation = field.annotation
        args = getattr(annotation, "__args__", ())
        candidates = [a for a in (annotation, *args) if isinstance(a, type) and issubclass(a, BaseModel)]
        current = candidates[0] if candidates else None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _validation_error(exc: ValidationError, layers: list[Layer], job_name: str,
                      merged: Mapping[str, Any]) -> UserError:
    """The first validation error as one :class:`UserError`, naming the highest layer that set the field."""
    error = exc.errors()[0]
    loc = tuple(p for p in error["loc"] if p not in _STEP_MODELS)
    origin = job_name
    for layer in reversed(layers):
        if _lookup(layer.data, loc):
            origin = layer.name
            break
    message, fix = _describe(error, JobSpec, merged)
    field = ".".join(str(p + 1) if isinstance(p, int) else (str(p) or "''") for p in loc) or None
    more = len(exc.errors()) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return UserError(message, file=origin, field=field, fix=fix)


def _apply_defines(merged: dict[str, Any], defines: Sequence[str], layers: list[Layer]) -> dict[str, Any]:
    """``merged`` with the ``-D`` properties on top; the layer ``-D`` is added to ``layers`` (for error origins)."""
    from launcher.config.properties import runtime_home

    hadoop = merged.get("hadoop")
    home = runtime_home(hadoop.get("home") if isinstance(hadoop, Mapping) else None)
    tree: dict[str, Any] = {}
    for define in defines:
        tree = deep_merge(tree, parse_define(define, home))
    layers.append(Layer("-D", tree, "-D"))
    return deep_merge(merged, tree)


def _absolute(value: object, base: Path, *, home: bool = True) -> object:
    """``value`` against ``base`` when it is a relative path; ``~`` and ``~user`` expanded to the home directory
    when ``home`` (the steps run as the user who loads the job file, so it is the same home; issue 40: ``input:
    [~/data/x]`` was "does not exist"); anything else as it is (absolute paths, ``$VAR``, ``${run_dir}``, URLs such
    as ``file:///x``, non-strings). ``filesystem`` paths pass ``home=False``:
    :func:`launcher.plan.cluster_plan.expand_root` expands them, ``$VAR`` too, where they are used."""
    if not isinstance(value, str) or not value or "://" in value:
        return value
    if value.startswith("~"):
        return os.path.expanduser(value) if home else value
    if value.startswith(("/", "$")):
        return value
    return os.path.normpath(base / value)


def _absolute_example_args(step: dict[str, Any], base: Path) -> None:
    """The input and output arguments of a built-in example (by position, as :mod:`launcher.steps.commands` finds
    them)."""
    from launcher.config.examples import EXAMPLE_INPUT_ARGS, EXAMPLE_OUTPUT_ARG, positional_indexes

    args, example = step.get("args"), step.get("example")
    if not isinstance(args, list) or not isinstance(example, str):
        return
    at = positional_indexes([str(a) for a in args])
    chosen: list[int] = []
    if example in EXAMPLE_INPUT_ARGS:
        chosen += at[EXAMPLE_INPUT_ARGS[example]]
    position = EXAMPLE_OUTPUT_ARG.get(example)
    if position is not None and -len(at) <= position < len(at):
        chosen.append(at[position])
    step["args"] = [_absolute(a, base) if i in chosen else a for i, a in enumerate(args)]


#: Step kinds whose ``args`` are the program's own, passed as they are (a built-in example's paths are made absolute).
_OWN_ARGS = ("jar", "spark", "pyspark")


def relative_arg_warnings(job: Mapping[str, Any], base: Path, file: str) -> list[str]:
    """One warning line for each relative argument of a ``jar``, ``spark`` or ``pyspark`` step that names a file or
    directory relative to ``base`` (the job file's directory): the program gets it as written and runs in its
    cluster directory (``<root>/<user>/hpc-hadoop/<cluster id>``), where it names something else (issue 40: Spark's
    ``Path does not exist: file:/…/hpc-hadoop/data/licenses.txt`` after a 165 s run). Options (``-x``), absolute
    paths, ``$VAR``/``${...}``, ``~`` and URLs are left alone."""
    lines = []
    steps = job.get("steps")
    for number, step in enumerate(steps if isinstance(steps, list) else [], start=1):
        if not isinstance(step, dict):
            continue
        inner = next((step[k] for k in ("spark", "pyspark") if isinstance(step.get(k), dict)), step)
        if not any(k in step for k in _OWN_ARGS) or not isinstance(inner.get("args"), list):
            continue
        where = "args" if inner is step else f"{next(k for k in ('spark', 'pyspark') if k in step)}.args"
        for arg in inner["args"]:
            if (not isinstance(arg, str) or not arg or arg.startswith(("-", "/", "$", "~")) or "://" in arg
                    or not (base / arg).exists()):
                continue
            lines.append(f"{file}: steps.{number}.{where}: {arg!r} is passed as written and the step runs in its "
                         f"cluster directory, where it is not {os.path.normpath(base / arg)} (fix: write "
                         f"{os.path.normpath(base / arg)})")
    return lines


def absolute_paths(job: dict[str, Any], base: Path) -> dict[str, Any]:
    """A job file's relative paths made absolute against ``base`` (the job file's directory), so that they mean
    the same in the cluster directory, where the run happens, as next to the job file: ``filesystem.root``,
    ``input_dir``, ``output_dir``, ``local_dirs``; ``kerberos.keytab`` and ``kerberos.krb5_conf``; each step's
    ``jar`` and ``output``; a streaming step's ``input``, ``output`` and ``files``; a built-in example's input and
    output arguments; ``notebook.dir``, the job file's directory when not given (``notebook: true``). A jar step's
    ``args`` and the mapper/reducer commands are passed as they are.
    """
    job = copy.deepcopy(job)
    kerberos = job.get("kerberos")
    if isinstance(kerberos, dict):
        _absolute_keys(kerberos, ("keytab", "krb5_conf"), base)
    fs = job.get("filesystem")
    if isinstance(fs, dict):
        for key in ("root", "input_dir", "output_dir", "local_dirs"):
            if key in fs and not (key == "local_dirs" and fs[key] == "shared"):  # a keyword, not a path
                fs[key] = _absolute(fs[key], base, home=False)
    steps = job.get("steps")
    for step in steps if isinstance(steps, list) else []:  # anything else is refused by the model, by name
        if isinstance(step, dict):
            _absolute_step_paths(step, base)
    notebook = job.get("notebook")
    if notebook is True or (isinstance(notebook, dict) and notebook.get("dir") is None):
        job["notebook"] = {**(notebook if isinstance(notebook, dict) else {}), "dir": str(base)}
    elif isinstance(notebook, dict):
        _absolute_keys(notebook, ("dir",), base)
    return job


def _absolute_step_paths(step: dict[str, Any], base: Path) -> None:
    """One step of :func:`absolute_paths`, in place."""
    _absolute_keys(step, ("jar", "output"), base)
    for kind, keys in (("spark", ("jar", "output")), ("pyspark", ("script", "output")),
                       ("streaming", ("input", "files", "output"))):
        inner = step.get(kind)
        if isinstance(inner, dict):
            _absolute_keys(inner, keys, base)
    if not isinstance(step.get("streaming"), dict) and "example" in step:
        _absolute_example_args(step, base)


def _absolute_keys(section: dict[str, Any], keys: tuple[str, ...], base: Path) -> None:
    """:func:`_absolute` of each of ``keys`` present in ``section`` (of each item, for a list), in place."""
    for key in keys:
        if key in section:
            section[key] = _absolute_each(section[key], base)


def _absolute_each(value: Any, base: Path) -> Any:
    """:func:`_absolute` of a value or of each item of a list."""
    return [_absolute(v, base) for v in value] if isinstance(value, list) else _absolute(value, base)


def _did_you_mean(given: str, valid: list[str]) -> str:
    """``"did you mean 'x'? "`` for the closest of ``valid`` (difflib), else ``""``."""
    close = difflib.get_close_matches(given, valid, n=1)
    return f"did you mean {close[0]!r}? " if close else ""


class Layer(NamedTuple):
    """One layer of a job (:func:`job_layers`).

    Attributes:
        name: what an error names as its file: the file's path, ``command line`` or ``-D``.
        data: its fields, as read (a nested mapping).
        kind: which layer it is: one of :data:`LAYER_KINDS`.
    """

    name: str
    data: dict[str, Any]
    kind: str


#: The layers, lowest first, by kind (the model's defaults are below them all: ``built-in default``).
LAYER_KINDS = ("site preset", "site config", "user config", "job file", "command line", "-D")


def _layers(job_name: str, job: dict[str, Any], cli: dict[str, Any], site_flag: str = "--set") -> list[Layer]:
    """The layers of a job, lowest first: the site preset (``site:`` of the command line, the job file, the user
    config or the site config), the site config (:func:`launcher.config.site.site_config_file`), the user config
    (:func:`user_config_path`), the job file, the command line. A user config that ``$HPC_HADOOP_CONFIG`` hides is
    said in a warning (:func:`user_config_warning`).

    Raises:
        UserError: an unknown site preset (names the layer that asked for it); a refused site layer.
    """
    layers: list[Layer] = []
    site_path = site_config_file()
    site_config = _read_yaml(site_path, "site config") if site_path is not None else {}
    user_path = user_config_path()
    user = _read_yaml(user_path, "user config") if user_path.is_file() else {}
    hidden = user_config_warning()
    if hidden:
        _warn_once(hidden)
    site = cli.get("site") or job.get("site") or user.get("site") or site_config.get("site")
    if site:
        presets = site_presets()
        if site not in presets:
            origin = (site_flag if cli.get("site") else job_name if job.get("site")
                      else str(user_path) if user.get("site") else str(site_path))
            raise UserError(f"unknown site preset {site!r}", file=origin, field="site",
                            fix=_did_you_mean(site, list(presets))
                            + f"use one of: {', '.join(presets) or '(none installed)'}")
        layers.append(Layer(str(presets[site]), _read_yaml(presets[site], "site preset"), "site preset"))
    if site_config:
        layers.append(Layer(str(site_path), site_config, "site config"))
    if user:
        layers.append(Layer(str(user_path), user, "user config"))
    layers.append(Layer(job_name, job, "job file"))
    if cli:
        layers.append(Layer("command line", cli, "command line"))
    return layers


def job_layers(job_file: str | Path | None, *, sets: Sequence[str] = (), overrides: Mapping[str, Any] | None = None,
               data: Mapping[str, Any] | None = None,
               defines: Sequence[str] = ()) -> tuple[list[Layer], dict[str, Any]]:
    """The layers of a job file, lowest first (:func:`_layers`, then ``-D``'s), and their merge, not validated
    (arguments as :func:`load_spec`'s).

    Raises:
        UserError: unreadable YAML, an unknown preset, a refused site layer, a bad ``--set`` or ``-D``.
    """
    job_name = str(job_file) if job_file is not None else "<job>"
    job = dict(data) if data is not None else _read_yaml(Path(str(job_file)), "job file")
    if data is None:
        base = Path(str(job_file)).absolute().parent
        for line in relative_arg_warnings(job, base, job_name):
            _warn_once(line)
        job = absolute_paths(job, base)
    cli: dict[str, Any] = {}
    if overrides:
        cli = deep_merge(cli, {k: v for k, v in overrides.items() if v is not None})
    for assignment in sets:
        cli = deep_merge(cli, parse_set(assignment))
    # --site, unless a later --set site=... replaced it: the flag a bad preset name is blamed on
    set_site = any(assignment.partition("=")[0].strip() == "site" for assignment in sets)
    site_flag = "--site" if overrides and overrides.get("site") is not None and not set_site else "--set"
    layers = _layers(job_name, job, cli, site_flag)
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = deep_merge(merged, layer.data)
    if defines:
        merged = _apply_defines(merged, defines, layers)
    return layers, merged


def load_spec(job_file: str | Path | None, *, sets: Sequence[str] = (), overrides: Mapping[str, Any] | None = None,
              data: Mapping[str, Any] | None = None, require_steps: bool = True,
              defines: Sequence[str] = ()) -> tuple[JobSpec, list[str]]:
    """Resolve a job file with all its layers into a :class:`JobSpec`.

    Args:
        job_file: path of the YAML job file (``None`` with ``data`` for tests and the API).
        sets: ``--set key=value`` strings, highest priority.
        defines: ``-D key=value`` Hadoop properties (:func:`parse_define`), as high as ``sets``.
        overrides: CLI options already turned into a mapping (``--nodes``, ``--scheduler``...),
            just below ``sets``.
        data: the job file's content, when it does not come from a file.
        require_steps: at least one step is required (``submit``, ``run``); ``start`` needs none.

    Relative paths in the job file are made absolute against its directory (:func:`absolute_paths`).

    Returns:
        ``(spec, sources)``: the frozen model and the layers used, lowest first.

    Raises:
        UserError: unreadable YAML, unknown preset, or a field that fails validation; the message
            names the layer that gave the bad value, the field and a fix.
    """
    job_name = str(job_file) if job_file is not None else "<job>"
    layers, merged = job_layers(job_file, sets=sets, overrides=overrides, data=data, defines=defines)
    return validate_layers(layers, merged, job_name, require_steps=require_steps), [layer.name for layer in layers]


def validate_layers(layers: list[Layer], merged: dict[str, Any], job_name: str, *, require_steps: bool = True
                    ) -> JobSpec:
    """``merged`` (the merge of ``layers``: :func:`job_layers`) validated into a :class:`JobSpec`.

    Raises:
        UserError: a field fails validation (names the highest layer that set it, the field and a fix); no steps
            with ``require_steps``.
    """
    try:
        spec = JobSpec.model_validate(merged)
    except ValidationError as exc:
        raise _validation_error(exc, layers, job_name, merged) from None
    if require_steps and not spec.steps:
        missing = "steps" not in merged or merged["steps"] is None
        raise UserError("required field is missing" if missing else "no steps to run", file=job_name, field="steps",
                        fix="add it" if missing else "give at least one (or keep a cluster up with `hpc-hadoop start`)")
    return spec
