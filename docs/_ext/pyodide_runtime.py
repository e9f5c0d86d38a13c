"""The pinned Pyodide runtime of the book's browser pages: fetched once, checked, cached, unpacked.

The version and the sha256 of its npm tarball are pinned in ``pyproject.toml``
(``[tool.microtape.browser]``). :func:`ensure` returns the cached tarball
(``~/.cache/microtape/pyodide-<version>.tgz``, or ``$MICROTAPE_CACHE``), fetching
it first with npm's own client (``npm pack pyodide@<version>``) when it is not
there; a tarball whose sha256 is not the pinned one is never used.
:func:`unpack` copies the runtime's files from it into a folder of the built book.

Standard library only, so ``.ci/run`` can run it before anything is installed::

    python3 docs/_ext/pyodide_runtime.py            # fetch (once) and check; prints the path
    python3 docs/_ext/pyodide_runtime.py --check    # check the cache only; exit 1 if it is missing
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
"""What a page needs of the npm package: the loader, the interpreter, the standard library, the lock."""


class RuntimeMissing(Exception):
    """The runtime is not in the cache and could not be fetched (the message says why and what to run)."""


@dataclass(frozen=True)
class Pin:
    """The pinned runtime: its version and the sha256 of its npm tarball."""

    version: str
    sha256: str

    @property
    def name(self) -> str:
        return f"pyodide-{self.version}.tgz"

    @property
    def how(self) -> str:
        """The command that fetches it, for messages."""
        return "python3 docs/_ext/pyodide_runtime.py"


def pin(root: Path = ROOT) -> Pin:
    """The pin in ``root/pyproject.toml``."""
    with (root / "pyproject.toml").open("rb") as f:
        table = tomllib.load(f)["tool"]["microtape"]["browser"]
    return Pin(str(table["pyodide"]), str(table["sha256"]).lower())


def cache_dir() -> Path:
    return Path(os.environ.get("MICROTAPE_CACHE") or Path.home() / ".cache" / "microtape")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cached(p: Pin) -> Path | None:
    """The cached tarball if it is there and is the pinned one."""
    path = cache_dir() / p.name
    return path if path.is_file() and sha256(path) == p.sha256 else None


def fetch(p: Pin, timeout: float = 300) -> Path:
    """Fetch the pinned tarball with ``npm pack`` into the cache; check its sha256; return its path."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeMissing(f"npm is not installed, so pyodide@{p.version} cannot be fetched (Debian: apt-get install npm)")
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        try:
            proc = subprocess.run([npm, "pack", f"pyodide@{p.version}", "--pack-destination", tmp],
                                  capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise RuntimeMissing(f"npm pack pyodide@{p.version} did not finish in {timeout:g} s (no network?)") from None
        got = Path(tmp) / p.name
        if proc.returncode != 0 or not got.is_file():
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise RuntimeMissing(f"npm pack pyodide@{p.version} failed (no network?): {last}")
        digest = sha256(got)
        if digest != p.sha256:
            raise RuntimeMissing(f"npm gave a pyodide-{p.version}.tgz with sha256 {digest}, not the pinned {p.sha256}; it is not used")
        target = folder / p.name
        os.replace(got, target)
    return target


def ensure(p: Pin, allow_fetch: bool = True) -> Path:
    """The cached tarball, fetched first if needed (and allowed); :class:`RuntimeMissing` says why not."""
    found = cached(p)
    if found is not None:
        return found
    if (cache_dir() / p.name).is_file():
        bad = sha256(cache_dir() / p.name)
        raise RuntimeMissing(f"{cache_dir() / p.name} has sha256 {bad}, not the pinned {p.sha256}: delete it and fetch again with {p.how}")
    if not allow_fetch:
        raise RuntimeMissing(f"{cache_dir() / p.name} is not there; fetch it with {p.how}")
    return fetch(p)


def unpack(tarball: Path, target: Path) -> int:
    """Copy the runtime's :data:`FILES` out of the tarball into ``target``; return their size in bytes."""
    target.mkdir(parents=True, exist_ok=True)
    total = 0
    with tarfile.open(tarball, "r:gz") as archive:
        for name in FILES:
            member = archive.getmember(f"package/{name}")
            source = archive.extractfile(member)
            assert source is not None, name
            with source, (target / name).open("wb") as out:
                shutil.copyfileobj(source, out)
            total += member.size
    return total


def main(argv: list[str]) -> int:
    p = pin()
    try:
        path = ensure(p, allow_fetch="--check" not in argv)
    except RuntimeMissing as err:
        print(f"pyodide_runtime: {err}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
