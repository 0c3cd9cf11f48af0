"""Parallel filesystems: detection, striping, reporting (Lustre, OrangeFS, GPFS, generic)."""
