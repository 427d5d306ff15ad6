"""Foot placement: terrain, contacts, smoothing, foot placement on clips and on joint
positions, and the motion-quality metrics (public as ``limbik.metrics``)."""

from limbik.placement.contacts import (
    contact_spans,
    contacts_from_ranges,
    detect_contacts,
    horizontal_speed,
    local_minimum,
)
from limbik.placement.spring import smooth_damp, smooth_zero_lag
from limbik.placement.terrain import Terrain

__all__ = [
    "Terrain",
    "contact_spans",
    "contacts_from_ranges",
    "detect_contacts",
    "horizontal_speed",
    "local_minimum",
    "smooth_damp",
    "smooth_zero_lag",
]
