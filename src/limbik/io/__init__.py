"""Motion files: BVH and glTF read and write, dispatch by extension, up axis and units."""

from limbik.io.bvh import format_bvh, parse_bvh, read_bvh, write_bvh
from limbik.io.files import MOTION_FORMATS, motion_format, read_motion, write_motion
from limbik.io.gltf import gltf_contents, read_gltf, write_gltf
from limbik.io.units import (
    UNITS,
    UP_AXES,
    export_axes,
    import_axes,
    import_height_field,
    unit_scale,
)

__all__ = [
    "MOTION_FORMATS",
    "UNITS",
    "UP_AXES",
    "export_axes",
    "format_bvh",
    "gltf_contents",
    "import_axes",
    "import_height_field",
    "motion_format",
    "parse_bvh",
    "read_bvh",
    "read_gltf",
    "read_motion",
    "unit_scale",
    "write_bvh",
    "write_gltf",
    "write_motion",
]
