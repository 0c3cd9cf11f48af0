"""Where the presets, templates and built runtime live: the repository (or installed share) directory.

It sits in :mod:`launcher.util` because both the job file's model (:mod:`launcher.config.spec`, for the site
presets) and the Hadoop runtime (:mod:`launcher.runtime.hadoop`, for the built runtime) need it, and the runtime
may not import the configuration (that was the import cycle ``spec -> properties -> runtime -> spec``, issue 26).
"""

from __future__ import annotations

import os
from pathlib import Path

#: Where the presets and templates live (the repository / installed share directory): ``$HPC_HADOOP_SHARE``,
#: else the checkout this package is in (``launcher/util/share.py`` -> three levels up).
SHARE_DIR = Path(os.environ.get("HPC_HADOOP_SHARE", Path(__file__).resolve().parents[2]))
