"""Packaging of hpc-hadoop (console script ``hpc-hadoop``).

The templates, the site presets, the examples, the shim (its pom, sources and built jar) and the Spark examples'
sources keep their places in the checkout (``templates/``, ``site-configs/``, ``examples/``, ``hadoop-fs-shim/``,
``spark-examples/``) and are mapped into the package at
build time as subpackages of ``launcher._data`` (:mod:`launcher.util.resources` reads them with
``importlib.resources``), so a wheel carries them and an editable install (``pip install -e .``) reads them in place.
"""

from setuptools import find_packages, setup

#: Package data: subpackage of ``launcher._data`` -> (directory in the checkout, globs inside it).
DATA = {
    "launcher._data.templates": ("templates", ["**/*.j2"]),
    "launcher._data.site_configs": ("site-configs", ["*.yaml"]),
    # The examples (`hpc-hadoop examples [copy DIR]`): job files, the Python files their steps name, batch scripts
    # (launcher.util.resources.EXAMPLE_GLOBS).
    "launcher._data.examples": ("examples", ["*.yaml", "python/*.py", "batch/*"]),
    # The shim: its jar (built by `mvn package`, for a site's Hadoop install) and what `hpc-hadoop runtime install`
    # builds the runtime from (launcher/runtime/install.py): the pom and the main sources.
    "launcher._data.shim": ("hadoop-fs-shim", ["pom.xml", "target/hpc-hadoop-fs-shim-*.jar",
                                               "src/main/**/*"]),
    # The sources of our Spark examples jar, which `hpc-hadoop runtime install` compiles against the Spark it installs
    # (launcher/runtime/spark_install.py; Maven Central has no spark-examples jar for Spark 4).
    "launcher._data.spark_examples": ("spark-examples", ["src/**/*.java"]),
}

setup(
    name="hpc-hadoop",
    version="0.1.0",
    description="On-demand Apache Hadoop (YARN + MapReduce) inside HPC batch allocations, on the parallel filesystem",
    long_description=open("README.md").read() if __import__("os").path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=[*find_packages(include=["launcher", "launcher.*", "benchmarks", "benchmarks.*"]), *DATA],
    package_dir={name: directory for name, (directory, _) in DATA.items()},
    package_data={name: globs for name, (_, globs) in DATA.items()},
    include_package_data=False,
    install_requires=[
        "click>=8.1",
        "Jinja2>=3.1",
        "PyYAML>=6.0",
        "pydantic>=2.5",
        "httpx>=0.25",
        "psutil>=5.9",
        "cryptography>=41",  # AES-GCM sealed files: the realm's keys to the other nodes (launcher/util/sealed.py)
        "platformdirs>=3.0",
        "rich>=13.0",
    ],
    # mfusepy: the FUSE file system standing in for OrangeFS in the tests (tests/standins/orangefs_fuse.py);
    # selenium: drives the headless Chromium of the `hpc-hadoop ui` browser test (tests/integration/test_interactive.py)
    # pytest-xdist: the unit tier on a second worker while the `hadoop` tests run on the first (pyproject.toml);
    # pytest below 9: xdist 3.8's `--dist loadgroup` names a group in `item._nodeid`, which pytest 9's nodes no longer
    # read (their id is `_id`), so every group was split over both workers (two clusters at once, CI of 06:33)
    extras_require={"test": ["pytest>=8.4,<9", "pytest-xdist>=3.5", "ruff>=0.4", "mypy>=1.10", "import-linter>=2.1",
                             "types-PyYAML", "mfusepy>=3.1", "selenium>=4.20", "matplotlib>=3.7"],
                    # bench plots (benchmarks/plots.py): without it `bench` writes every result and skips the plots
                    "plots": ["matplotlib>=3.7"]},
    entry_points={"console_scripts": ["hpc-hadoop=launcher.cli.main:main"]},
)
