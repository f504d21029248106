"""The files gpuaudit ships besides its code: the report templates and the demo estate.

An installed gpuaudit holds them in the packages ``gpuaudit.templates`` and
``gpuaudit.cassettes``: setup.cfg maps the checkout's top-level ``templates/``
and ``cassettes/`` folders there with ``package_dir``. Only an install sees that
mapping, so a checkout run as it is (``PYTHONPATH=.``, ``python -m gpuaudit``)
finds the same folders next to the ``gpuaudit`` package instead.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

TEMPLATES = "templates"
CASSETTES = "cassettes"
_CHECKOUT = Path(__file__).resolve().parents[2]


def folder(kind: str, holding: str) -> Traversable:
    """The shipped folder ``kind`` (TEMPLATES or CASSETTES), which must hold ``holding``.

    A checkout's own folder comes first: the code beside it is the code that reads
    it, even when another checkout is installed (an editable install maps
    ``gpuaudit.templates`` to that other checkout's folder).
    """
    checkout = _CHECKOUT / kind
    if checkout.joinpath(holding).is_file():
        return checkout
    try:
        installed = resources.files(f"gpuaudit.{kind}")
        if installed.joinpath(holding).is_file():
            return installed
    except ModuleNotFoundError:
        pass
    raise FileNotFoundError(f"gpuaudit's {holding} is not installed")


def file_path(kind: str, name: str) -> Path:
    """The shipped file ``name`` of folder ``kind``, as a path for readers that need one."""
    return Path(str(folder(kind, name).joinpath(name)))
