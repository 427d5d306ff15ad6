"""Foot placement: terrain, contacts, smoothing, quality metrics."""

from limbik.placement import metrics
from limbik.placement.contacts import (
    contact_spans,
    contacts_from_ranges,
    detect_contacts,
    horizontal_speed,
)
from limbik.placement.spring import smooth_damp, smooth_zero_lag
from limbik.placement.terrain import Terrain

__all__ = [
    "Terrain",
    "contact_spans",
    "contacts_from_ranges",
    "detect_contacts",
    "horizontal_speed",
    "metrics",
    "smooth_damp",
    "smooth_zero_lag",
]
