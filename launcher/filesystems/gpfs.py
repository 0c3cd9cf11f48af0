"""IBM Spectrum Scale (GPFS): every file is striped over all disks of its storage pool, in blocks of the
size chosen when the filesystem was made (``mmcrfs -B``); there is no per-directory stripe setting."""

from __future__ import annotations

from launcher.filesystems.base import Filesystem


class GpfsFilesystem(Filesystem):
    """GPFS: detection and reporting only."""

    name = "gpfs"
    striping = False
    why_not = "GPFS stripes every file over all disks of its storage pool; the block size is fixed by mmcrfs"
