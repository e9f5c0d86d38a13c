"""The wheel's build hook: compile the package's gettext catalogs (``.po`` -> ``.mo``) into the wheel.

Pure Python (``microtape/language.py``'s ``compile_po``, loaded by its path, so
the build needs nothing but hatchling and no system ``msgfmt``). The ``.mo``
files are never committed; an editable install compiles them on first use.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompileCatalogs(BuildHookInterface):  # type: ignore[misc]  # hatchling ships no type information
    """Put ``microtape/locale/<lang>/LC_MESSAGES/microtape.mo``, compiled from its ``.po``, into the wheel."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Compile each catalog into a temporary folder and force-include the ``.mo`` (``*.mo`` is excluded otherwise)."""
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        spec = importlib.util.spec_from_file_location("_microtape_language", root / "microtape" / "language.py")
        assert spec is not None and spec.loader is not None
        language = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(language)
        out = Path(tempfile.mkdtemp(prefix="microtape-mo-"))
        for po in sorted((root / "microtape" / "locale").glob("*/LC_MESSAGES/microtape.po")):
            relative = po.relative_to(root).with_suffix(".mo")
            language.compile_po(po, out / relative)
            build_data["force_include"][str(out / relative)] = str(relative)
