"""The package list, found rather than kept by hand (everything else is in pyproject.toml).

The three top-level folders install under one import name, ``trajset``
(``trajset.pipeline`` is ``pipeline/``, ...); setuptools' own ``find`` cannot
add that prefix, so the subpackages of each folder are found here.
"""

from setuptools import find_packages, setup

ROOTS = ("pipeline", "redactors", "schemas")

setup(
    package_dir={f"trajset.{root}": root for root in ROOTS},
    packages=[
        f"trajset.{root}{'.' + sub if sub else ''}"
        for root in ROOTS
        for sub in ["", *find_packages(root)]
    ],
)
