"""KMeans: Mahout's MapReduce driver and Spark MLlib's, on the same Gaussian points.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

from benchmarks.seqfile import write_vectors
from benchmarks.workloads.base import (
    Context,
    Workload,
)
from launcher.util.errors import UserError
from launcher.util.userdirs import cache_dir

MAHOUT_POM = Path(__file__).resolve().parents[1] / "mahout" / "pom.xml"
KMEANS_DRIVER = "org.apache.mahout.clustering.kmeans.KMeansDriver"


def mahout_jars(cache: Path | None = None) -> list[Path]:
    """Mahout 0.13.0's MapReduce jars (``mahout-mr`` and what Hadoop 3 lacks), fetched once from Maven Central
    with ``benchmarks/mahout/pom.xml`` into ``cache`` (default ``$XDG_CACHE_HOME/hpc-hadoop/mahout-0.13.0``,
    ``~/.cache/hpc-hadoop/mahout-0.13.0`` when it is unset: :func:`launcher.util.userdirs.cache_dir`).

    Raises:
        UserError: Maven is missing or the download failed (names the command).
    """
    cache = cache or cache_dir() / "mahout-0.13.0"
    jars = sorted(cache.glob("*.jar"))
    if any(j.name.startswith("mahout-mr-") for j in jars):
        return jars
    mvn = shutil.which("mvn")
    if mvn is None:
        raise UserError("Maven (mvn) is needed to fetch Mahout 0.13.0 for the kmeans workload",
                        fix="apt-get install maven, or put the jars in " + str(cache))
    tmp = cache.with_name(cache.name + f".tmp{os.getpid()}")
    argv = [mvn, "-B", "-q", "-f", str(MAHOUT_POM), "dependency:copy-dependencies", f"-DoutputDirectory={tmp}",
            "-DincludeScope=runtime"]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise UserError(f"fetching Mahout failed ({' '.join(argv)}): {(proc.stdout + proc.stderr)[-300:]}",
                        fix="check access to Maven Central")
    cache.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(tmp, cache)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return sorted(cache.glob("*.jar"))


def mahout_job_jar(jars: list[Path]) -> Path:
    """One job jar: ``mahout-mr``'s classes plus every other Mahout jar under ``lib/`` (made once, next to them).

    Hadoop puts a job jar's ``lib/*.jar`` on the task classpath in every mode; ``-libjars`` does not reach
    uberized tasks here (``WritableName can't load class: org.apache.mahout.math.VectorWritable``).
    """
    mr = next(j for j in jars if j.name.startswith("mahout-mr-"))
    target = mr.with_name("mahout-mr-job.jar")
    if target.is_file():
        return target
    tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    with zipfile.ZipFile(mr) as source, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            out.writestr(item, source.read(item.filename))
        for jar in jars:
            if jar not in (mr, target):
                out.write(jar, f"lib/{jar.name}", compress_type=zipfile.ZIP_STORED)
    os.replace(tmp, target)
    return target


def gaussian_points(samples: int, dimensions: int, k: int, std: float, seed: int = 0) -> list[list[float]]:
    """HiBench's KMeans input: ``k`` centres uniform in [-100, 100)^dimensions, ``samples`` points drawn from
    normal distributions (σ = ``std``) around them in turn."""
    rng = random.Random(seed)
    centres = [[rng.uniform(-100.0, 100.0) for _ in range(dimensions)] for _ in range(k)]
    return [[rng.gauss(c, std) for c in centres[i % k]] for i in range(samples)]


#: Writes one input file of the KMeans workloads: ``(index, point)`` pairs (the point's index in
#: :func:`gaussian_points`' list, its coordinates) to a file opened for binary writing.
PointWriter = Callable[[BinaryIO, Iterable[tuple[int, list[float]]]], object]


def vector_file(out: BinaryIO, points: Iterable[tuple[int, list[float]]]) -> None:
    """Mahout's input: a SequenceFile of ``Text`` keys ``p<index>`` and ``VectorWritable`` values
    (:func:`benchmarks.seqfile.write_vectors`)."""
    write_vectors(out, ((f"p{i}", point) for i, point in points))


def text_file(out: BinaryIO, points: Iterable[tuple[int, list[float]]]) -> None:
    """MLlib's input: one point a line, its coordinates as Python's ``repr`` of each float (they read back
    exactly), separated by single spaces; ASCII."""
    out.writelines((" ".join(repr(x) for x in point) + "\n").encode("ascii") for _, point in points)


def write_points(ctx: Context, directory: Path, writer: PointWriter) -> dict[str, Any]:
    """The KMeans workloads' input: ``samples`` points of :func:`gaussian_points` (``dimensions``, ``k``, ``std`` of
    ``ctx.params``; seed 0, so both workloads get the same points) dealt round-robin over ``files`` files
    ``part-00000``... in ``directory`` (made if missing), each written by ``writer``.

    Returns:
        ``generate_s`` (seconds to generate and write) and ``input_bytes`` (bytes of the files).

    Raises:
        OSError: the directory or a file could not be written.
    """
    began = time.monotonic()
    directory.mkdir(parents=True, exist_ok=True)
    p = ctx.params
    points = gaussian_points(int(p["samples"]), int(p["dimensions"]), int(p["k"]), float(p["std"]))
    files = max(1, int(p.get("files", 1)))
    for f in range(files):
        with open(directory / f"part-{f:05d}", "wb") as out:
            writer(out, ((i, points[i]) for i in range(f, len(points), files)))
    return {"generate_s": time.monotonic() - began,
            "input_bytes": sum(x.stat().st_size for x in directory.iterdir())}


class KMeans(Workload):
    """Mahout's KMeans MapReduce driver over generated Gaussian clusters (``iterations`` rounds, 5 in the paper)."""

    name = "kmeans"

    def prepare(self, ctx: Context) -> dict[str, Any]:
        """Write ``samples`` points as ``files`` SequenceFiles of ``VectorWritable`` in ``work_dir/samples``."""
        return write_points(ctx, ctx.work_dir / "samples", vector_file)

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``wall_s`` of the whole driver (all iterations and the clustering pass), ``iterations``
        done, ``latency_s`` of its last MapReduce job (the job id the client printed last)."""
        assert ctx.session is not None
        jars = [j for j in mahout_jars() if j.name != "mahout-mr-job.jar"]
        job_jar = mahout_job_jar(jars)
        p = ctx.params
        out, seeds = ctx.work_dir / "output", ctx.work_dir / "seeds"
        job = self.hadoop(ctx, "kmeans", [
            str(job_jar), KMEANS_DRIVER,
            "-i", str(ctx.work_dir / "samples"), "-c", str(seeds), "-o", str(out), "-k", str(p["k"]),
            "-x", str(p["iterations"]), "-cd", "0.0", "-ow", "-cl",
            "-dm", "org.apache.mahout.common.distance.EuclideanDistanceMeasure"],
            outputs=(out, seeds))
        done = sorted(out.glob("clusters-*"))
        figures = {"wall_s": job["wall_s"], "latency_s": job["latency_s"], "job_id": job["job_id"],
                   "iterations": max((int(d.name.split("-")[1]) for d in done), default=0),
                   "clustered": (out / "clusteredPoints").is_dir()}
        ctx.discard(ctx.work_dir)
        return figures


#: The class of the MLlib KMeans program in our Spark examples jar (``spark-examples/``, built by ``install.sh``).
SPARK_KMEANS = "org.hpchadoop.spark.examples.KMeans"


class SparkKMeans(Workload):
    """MLlib's KMeans (Spark on the same YARN) over the points the ``kmeans`` workload gives Mahout: the same
    :func:`gaussian_points` (same parameters, same seed), as text, ``files`` files; k random points as initial centres
    and exactly ``iterations`` rounds, as Mahout's driver there."""

    name = "spark-kmeans"

    def prepare(self, ctx: Context) -> dict[str, Any]:
        """Write ``samples`` points, one a line (coordinates separated by spaces), as ``files`` files in
        ``work_dir/points``."""
        return write_points(ctx, ctx.work_dir / "points", text_file)

    def run(self, ctx: Context) -> dict[str, Any]:
        """Figures: ``wall_s`` of ``spark-submit`` (driver start to end, as the Mahout driver's), ``iterations`` done,
        ``cost`` (sum of squared distances to the nearest centre), ``application_id``.

        Raises:
            ClusterError: the application failed (names its log).
            UserError: no Spark examples jar (run ``./install.sh``).
        """
        p = ctx.params
        app = self.spark(ctx, "spark-kmeans", SPARK_KMEANS, [str(ctx.work_dir / "points"), str(p["k"]),
                                                            str(p["iterations"])])
        figures: dict[str, Any] = {"wall_s": app["wall_s"], "application_id": app["application_id"]}
        for key, kind in (("iterations", int), ("cost", float)):
            found = [line.split()[1] for line in app["log"].splitlines() if line.startswith(f"{key} ")]
            figures[key] = kind(found[-1]) if found else None
        ctx.discard(ctx.work_dir)
        return figures


