"""What the integration tests write and wait for, once (issue 38 item 4: it was written again in seven modules).

* :data:`SMALL`: the heaps and containers of a test cluster on the 2-core CI machine;
* :func:`write_job`: a job file as a person would leave it, ``<directory>/<name>.yaml``, with a module's defaults
  under the test's fields, owned by the user who runs it when that is not root;
* :func:`wait_until`: poll a condition, failing with what was awaited.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from tests.users import TestUser

#: 512 MiB for each daemon's heap and each container (map, reduce, ApplicationMaster): small enough for a few
#: containers on the CI machine's 2 cores, large enough for Hadoop's own examples.
SMALL: dict[str, str] = {"daemon_heap": "512m", "map_memory": "512m", "reduce_memory": "512m", "am_memory": "512m"}


def write_job(directory: Path, job: Mapping[str, Any], defaults: Mapping[str, Any] | None = None, *,
              owner: TestUser | None = None) -> Path:
    """Write ``job`` over ``defaults`` (top-level fields: a test's own ``hadoop`` replaces the default one whole) as
    ``directory/<job name>.yaml``; with ``owner``, the file is theirs, mode 0600.

    Returns:
        The job file's path.
    """
    data = {**(defaults or {}), **job}
    path = directory / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return owner.own(path, 0o600) if owner is not None else path


def wait_until(predicate: Callable[[], object], timeout: float, what: str, *, interval: float = 0.2) -> None:
    """Call ``predicate`` every ``interval`` seconds until it returns something true.

    Raises:
        AssertionError: ``timeout`` seconds went by first (``timed out waiting for <what>``).
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(interval)
