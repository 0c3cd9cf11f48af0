"""``hpc-hadoop config``: the layers a job's values come from, in order with their files, and where each value came
from (issue 39; :mod:`launcher.config.explain`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from launcher.cli.common import define_option, reports_errors


def _shown(value: Any) -> str:
    """A value as one line: a string as it is, anything else as JSON (``null``, ``[...]``, ``true``)."""
    return value if isinstance(value, str) else json.dumps(value)


@click.command("config")
@click.argument("job_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--site", help="Site preset, as `submit --site` takes it.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a job-file field, as `submit` does.")
@define_option
@click.option("--explain", "fields", multiple=True, metavar="FIELD",
              help="Show only this field (a dotted key, or a part above keys: hadoop); repeatable.")
@click.option("--json", "as_json", is_flag=True, help="JSON instead of text.")
@reports_errors
def config_command(job_file: Path | None, site: str | None, sets: tuple[str, ...], defines: tuple[str, ...],
                   fields: tuple[str, ...], as_json: bool) -> None:
    """Show the layers of JOB_FILE's values (or, without one, the layers below a job file), lowest first: built-in
    defaults < site preset (site:) < site config < user config < job file < command line (--set, -D); then each value
    (or only those --explain names) with the layer and the file it came from."""
    from launcher.config.explain import explain, select

    layers, values = explain(job_file, sets=sets, defines=defines, overrides={"site": site})
    chosen = select(values, fields)
    if as_json:
        click.echo(json.dumps({"layers": [vars(layer) for layer in layers],
                               "values": {key: {"value": o.value, "effective": o.effective, "layer": o.layer,
                                                "file": o.file} for key, o in chosen.items()}}, indent=2))
        return
    click.echo("layers, lowest first:")
    for number, layer in enumerate(layers, 1):
        line = f"  {number}. {layer.kind:<16}  {layer.state:<10}  {layer.file or '-'}"
        click.echo(line + (f"  ({layer.note})" if layer.note else ""))
    click.echo("values:")
    width = max((len(key) for key in chosen), default=0)
    shown = {key: _shown(origin.value) for key, origin in chosen.items()}
    value_width = min(max((len(text) for text in shown.values()), default=0), 40)
    for key, origin in chosen.items():
        where = origin.layer if origin.file in (None, origin.layer) else f"{origin.layer}: {origin.file}"
        click.echo(f"  {key:<{width}}  {shown[key]:<{value_width}}  {where}")
