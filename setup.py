"""Packaging of hpc-hadoop (console script ``hpc-hadoop``)."""

from setuptools import find_packages, setup

setup(
    name="hpc-hadoop",
    version="0.1.0",
    description="On-demand Apache Hadoop (YARN + MapReduce) inside HPC batch allocations, on the parallel filesystem",
    long_description=open("README.md").read() if __import__("os").path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["launcher", "launcher.*", "benchmarks", "benchmarks.*"]),
    install_requires=[
        "click>=8.1",
        "Jinja2>=3.1",
        "PyYAML>=6.0",
        "pydantic>=2.5",
        "httpx>=0.25",
        "psutil>=5.9",
        "platformdirs>=3.0",
        "rich>=13.0",
        "matplotlib>=3.7",  # bench plots: part of a normal install (issue 17 item 8)
    ],
    # mfusepy: the FUSE file system standing in for OrangeFS in the tests (tests/standins/orangefs_fuse.py)
    extras_require={"test": ["pytest>=7.4", "ruff>=0.4", "mypy>=1.10", "import-linter>=2.1", "types-PyYAML",
                             "mfusepy>=3.1"],
                    "plots": []},
    entry_points={"console_scripts": ["hpc-hadoop=launcher.cli:main"]},
)
