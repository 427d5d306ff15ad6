"""limbik in Blender: the add-on, and the armature conversions it uses.

:func:`build_addon` writes the installable zip (``limbik_blender/__init__.py`` is
``addon.py`` of this package); :mod:`limbik.app.blender.armature` converts sampled
armatures to and from :class:`~limbik.skeleton.motion.Motion` with NumPy only.
``addon.py`` imports ``bpy`` and runs only inside Blender.
"""

from __future__ import annotations

import io
import zipfile
from importlib import resources
from pathlib import Path

from limbik._runtime.atomic import atomic_write

__all__ = ["ADDON_MODULE", "build_addon"]

#: The add-on's module name inside Blender (``bpy.ops.preferences.addon_enable``).
ADDON_MODULE = "limbik_blender"


def build_addon(path: str | Path) -> Path:
    """Write the Blender add-on zip to ``path`` (atomically); returns the path.

    Install it from Blender's Preferences > Add-ons > Install..., or with
    ``bpy.ops.preferences.addon_install(filepath=...)`` and
    ``bpy.ops.preferences.addon_enable(module="limbik_blender")``. limbik itself
    must be importable in Blender's Python (see docs/blender.md).
    """
    source = resources.files("limbik.app.blender").joinpath("addon.py").read_text("utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{ADDON_MODULE}/__init__.py", source)
    out = Path(path)
    with atomic_write(out, "wb") as handle:
        handle.write(buffer.getvalue())
    return out
