"""``Terrain``: a height field y = h(x, z) with bilinear interpolation, normals and raycasts."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from limbik._runtime.validation import (
    MAX_MAGNITUDE,
    FloatArray,
    as_float,
    as_float_array,
    as_int,
    as_points,
    broadcast_shapes,
    read_only,
)
from limbik.errors import LimbikWarning, TerrainError
from limbik.geometry.vectors import normalize
from limbik.placement._terrain_kernels import sample_heights

__all__ = ["Terrain"]


#: A terrain file may hold at most this many samples (512 MB as float64): a small file
#: must not ask for more (a PNG compresses a large flat image to a few hundred kB).
MAX_TERRAIN_SAMPLES = 1 << 26


def _check_samples(path: str | Path, shape: tuple[int, ...]) -> None:
    count = int(np.prod(shape, dtype=np.float64))
    if count > MAX_TERRAIN_SAMPLES:
        raise TerrainError(f"terrain file {path} must hold at most {MAX_TERRAIN_SAMPLES} "
                           f"samples, got shape {tuple(shape)}", argument="path")


#: Straight down, the unit direction ``normalize((0, -length, 0))`` is for every length
#: ``Terrain.raycast`` accepts (``sqrt(length²) == length`` in IEEE doubles).
_DOWN = np.array([0.0, -1.0, 0.0])


class Terrain:
    """A height field: ``heights[i, j]`` is the height at ``x = x0 + j·cell``, ``z = z0 + i·cell``.

    Heights between samples are bilinear; outside the grid they are clamped to the
    edge. The world is Y up, so the ground is the surface ``y = height(x, z)``.

    Parameters
    ----------
    heights : array_like, shape (rows, cols)
        Samples; rows run along +Z, columns along +X.
    cell_size : float
        Spacing between samples (length units), > 0.
    origin : (float, float)
        ``(x0, z0)``, the world position of ``heights[0, 0]``.
    """

    __slots__ = ("_h", "cell_size", "name", "origin")

    def __init__(self, heights: Any, cell_size: float = 1.0,
                 origin: tuple[float, float] = (0.0, 0.0), *, name: str = "array") -> None:
        h = as_float_array(heights, "heights")
        if h.ndim != 2 or h.shape[0] < 1 or h.shape[1] < 1:
            raise TerrainError(f"heights must be a 2-D array (rows, cols), got shape {h.shape}",
                               argument="heights")
        if h.size and not np.max(np.abs(h)) <= MAX_MAGNITUDE:
            raise TerrainError(f"heights must be within ±{MAX_MAGNITUDE:g} (as every number "
                               f"limbik reads or writes), got {float(np.max(np.abs(h))):.3g}",
                               argument="heights")
        self._h = np.ascontiguousarray(h)
        self._h.flags.writeable = False
        self.cell_size = as_float(cell_size, "cell_size", minimum=0.0, exclusive=True)
        o = as_float_array(origin, "origin", (2,))
        if o.ndim != 1:
            raise TerrainError(f"origin must be (x0, z0), got shape {o.shape}", argument="origin")
        self.origin = (float(o[0]), float(o[1]))
        self.name = name

    # ------------------------------------------------------------------ constructors
    @classmethod
    def flat(cls, height: float = 0.0) -> Terrain:
        """A horizontal plane at ``height``."""
        return cls(np.full((1, 1), as_float(height, "height")), name=f"flat({height:g})")

    @classmethod
    def from_array(cls, heights: Any, cell_size: float = 1.0,
                   origin: tuple[float, float] = (0.0, 0.0)) -> Terrain:
        """From a 2-D array of samples (see the class docstring for the layout)."""
        return cls(heights, cell_size, origin)

    @classmethod
    def from_npy(cls, path: str | Path, cell_size: float = 1.0,
                 origin: tuple[float, float] = (0.0, 0.0)) -> Terrain:
        """From a ``.npy`` file holding a 2-D float array."""
        try:
            # mapped first: a header whose shape the file does not back is refused here, and
            # nothing is read before the size is checked
            data = np.load(Path(path), mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise TerrainError(f"terrain file {path} could not be read as .npy: {exc}",
                               argument="path") from exc
        if not isinstance(data, np.ndarray):  # an .npz archive under a .npy name
            data.close()
            raise TerrainError(f"terrain file {path} must hold a single 2-D array (.npy), got "
                               "an archive of arrays (.npz)", argument="path")
        if data.ndim != 2:
            raise TerrainError(f"terrain file {path} must hold a 2-D array, got shape {data.shape}",
                               argument="path")
        _check_samples(path, data.shape)
        data = np.array(data)  # into memory, off the file
        terrain = cls(data, cell_size, origin)
        terrain.name = Path(path).name
        return terrain

    @classmethod
    def from_png(cls, path: str | Path, cell_size: float = 1.0,
                 origin: tuple[float, float] = (0.0, 0.0), height_scale: float = 1.0) -> Terrain:
        """From a greyscale PNG: pixel value in [0, 1] times ``height_scale``.

        Colour images are converted to luminance. Row 0 of the image is ``z = z0``.
        """
        from matplotlib import image
        from PIL import Image

        try:
            with Image.open(Path(path)) as header:  # the size, before any pixel is decoded
                width, height = header.size
            _check_samples(path, (height, width))
            data = np.asarray(image.imread(Path(path)), dtype=np.float64)
        except TerrainError:
            raise
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            raise TerrainError(f"terrain file {path} could not be read as PNG: {exc}",
                               argument="path") from exc
        if data.ndim == 3:
            rgb = data[..., :3]
            data = rgb @ np.array([0.2126, 0.7152, 0.0722]) if rgb.shape[-1] == 3 else rgb[..., 0]
        if data.dtype.kind in "ui" or data.max(initial=0) > 1.0:
            data = data / 255.0
        scale = as_float(height_scale, "height_scale")
        terrain = cls(data * scale, cell_size, origin)
        terrain.name = Path(path).name
        return terrain

    @classmethod
    def hills(cls, seed: int = 0, *, extent: tuple[float, float, float, float] = (-10, 10, -10, 10),
              amplitude: float = 0.15, wavelength: float = 3.0, cell_size: float | None = None,
              ) -> Terrain:
        """Smooth random hills: a sum of seeded sinusoids, peak-to-peak about ``2·amplitude``.

        ``extent`` is ``(x_min, x_max, z_min, z_max)``; ``wavelength`` the typical hill size.
        """
        rng = np.random.default_rng(as_int(seed, "seed", minimum=0))
        xs, zs, x0, z0, cell = _grid(extent, cell_size, wavelength)
        X, Z = np.meshgrid(xs, zs)
        h = np.zeros_like(X)
        n_waves = 6
        for _ in range(n_waves):
            k = 2 * np.pi / (wavelength * rng.uniform(0.7, 1.6))
            theta = rng.uniform(0, 2 * np.pi)
            phase = rng.uniform(0, 2 * np.pi)
            h += np.sin(k * (np.cos(theta) * X + np.sin(theta) * Z) + phase)
        h *= as_float(amplitude, "amplitude") / np.sqrt(n_waves / 2)
        return cls(h, cell, (x0, z0), name=f"hills(seed={seed})")

    @classmethod
    def steps(cls, *, step_height: float = 0.1, step_length: float = 0.6,
              extent: tuple[float, float, float, float] = (-10, 10, -10, 10),
              direction: str = "x", cell_size: float | None = None) -> Terrain:
        """A staircase rising by ``step_height`` every ``step_length`` along +X (or +Z).

        Each riser is one cell wide (bilinear), so keep ``cell_size`` small for sharp steps.
        """
        step_length = as_float(step_length, "step_length", minimum=0.0, exclusive=True)
        cell = cell_size if cell_size is not None else step_length / 20
        xs, zs, x0, z0, cell = _grid(extent, cell, step_length)
        X, Z = np.meshgrid(xs, zs)
        along = X if direction == "x" else Z
        if direction not in ("x", "z"):
            raise TerrainError(f"direction must be 'x' or 'z', got {direction!r}",
                               argument="direction")
        h = np.floor(along / step_length) * as_float(step_height, "step_height")
        return cls(h, cell, (x0, z0), name="steps")

    @classmethod
    def slope(cls, angle: float = 0.1, *, direction: float = 0.0,
              extent: tuple[float, float, float, float] = (-10, 10, -10, 10)) -> Terrain:
        """A plane through the origin rising at ``angle`` (rad) toward heading ``direction``.

        ``direction`` is measured from +X toward +Z (rad).
        """
        angle = as_float(angle, "angle")
        if not -1.5 < angle < 1.5:
            raise TerrainError(f"angle must be within (-1.5, 1.5) rad, got {angle}",
                               argument="angle")
        # a plane is exact under bilinear interpolation, so a coarse lattice suffices
        x_min, x_max, z_min, z_max = (float(e) for e in extent)
        cell = min(x_max - x_min, z_max - z_min) / 4 if x_max > x_min and z_max > z_min else 0.0
        xs, zs, x0, z0, cell = _grid(extent, cell, 1.0)
        X, Z = np.meshgrid(xs, zs)
        h = np.tan(angle) * (np.cos(direction) * X + np.sin(direction) * Z)
        return cls(h, cell, (x0, z0), name=f"slope({angle:g})")

    # ------------------------------------------------------------------ queries
    @property
    def heights(self) -> FloatArray:
        """The samples ``(rows, cols)`` (read-only)."""
        return self._h

    def _cell_coords(self, x: FloatArray, z: FloatArray
                     ) -> tuple[FloatArray, FloatArray, np.ndarray, np.ndarray]:
        rows, cols = self._h.shape
        u = np.clip((x - self.origin[0]) / self.cell_size, 0.0, cols - 1)
        v = np.clip((z - self.origin[1]) / self.cell_size, 0.0, rows - 1)
        j = np.minimum(np.floor(u).astype(np.intp), max(cols - 2, 0))
        i = np.minimum(np.floor(v).astype(np.intp), max(rows - 2, 0))
        return u - j, v - i, i, j

    def _corners(self, i: np.ndarray, j: np.ndarray) -> tuple[FloatArray, ...]:
        rows, cols = self._h.shape
        i1 = np.minimum(i + 1, rows - 1)
        j1 = np.minimum(j + 1, cols - 1)
        h = self._h
        return h[i, j], h[i, j1], h[i1, j], h[i1, j1]

    def height(self, x: Any, z: Any) -> FloatArray:
        """Ground height at ``(x, z)``; broadcasts, returns shape of ``x + z``."""
        if isinstance(x, float | np.floating) and isinstance(z, float | np.floating):
            if not (math.isfinite(x) and math.isfinite(z)):  # (one point: checked cheaply)
                as_float_array(x, "x")
                as_float_array(z, "z")
            return self._height_unchecked(np.asarray(x, dtype=np.float64),
                                          np.asarray(z, dtype=np.float64))
        xa = as_float_array(x, "x")
        za = as_float_array(z, "z")
        broadcast_shapes(("x", xa.shape), ("z", za.shape))  # or a named error
        return self._height_unchecked(xa, za)

    def _height_unchecked(self, x: FloatArray, z: FloatArray) -> FloatArray:
        """:meth:`height` for float64 arrays (broadcast together), without validation."""
        shape = np.broadcast_shapes(np.shape(x), np.shape(z))
        if self._h.size == 1:
            return np.full(shape, float(self._h[0, 0]))
        xs = np.ascontiguousarray(np.broadcast_to(x, shape), dtype=np.float64).reshape(-1)
        zs = np.ascontiguousarray(np.broadcast_to(z, shape), dtype=np.float64).reshape(-1)
        return sample_heights(self._h, self.cell_size, self.origin[0], self.origin[1],
                              read_only(xs), read_only(zs)).reshape(shape)

    def height_at(self, points: Any) -> FloatArray:
        """Ground height under points ``(..., 3)``: shape ``(...)``."""
        p = as_points(points, "points")
        return self.height(p[..., 0], p[..., 2])

    def normal(self, x: Any, z: Any) -> FloatArray:
        """Unit surface normal ``(..., 3)`` at ``(x, z)`` (pointing up).

        Uses the bilinear patch's gradient; outside the grid the clamped surface is flat
        along the clamped axis.
        """
        xa = as_float_array(x, "x")
        za = as_float_array(z, "z")
        xa, za = np.broadcast_arrays(xa, za)
        if self._h.size == 1:  # a plane: the patch's gradient is 0 (negated, as below)
            out = np.empty(xa.shape + (3,))
            out[...] = (-0.0, 1.0, -0.0)
            return out
        rows, cols = self._h.shape
        fu, fv, i, j = self._cell_coords(xa, za)
        h00, h01, h10, h11 = self._corners(i, j)
        dhdx = ((1 - fv) * (h01 - h00) + fv * (h11 - h10)) / self.cell_size
        dhdz = ((1 - fu) * (h10 - h00) + fu * (h11 - h01)) / self.cell_size
        u = (xa - self.origin[0]) / self.cell_size
        v = (za - self.origin[1]) / self.cell_size
        dhdx = np.where((u < 0) | (u > cols - 1), 0.0, dhdx)
        dhdz = np.where((v < 0) | (v > rows - 1), 0.0, dhdz)
        n = np.stack([-dhdx, np.ones_like(dhdx), -dhdz], axis=-1)
        return normalize(n)

    def ground_below(self, origins: Any, length: float) -> tuple[np.ndarray, FloatArray]:
        """Where rays straight down from ``origins`` ``(..., 3)``, ``length`` long, meet
        the ground: ``(hit (...), point (..., 3))``.

        The same bits as ``raycast(origins, (0, -length, 0), max_distance=length)``'s hit
        and point (a ray starting below the ground hits at its origin's ground point),
        without the normals and the oblique rays' machinery: a per-frame foot ray's query.
        Any ``length > 0`` works (``raycast`` refuses a direction too short to normalise).
        """
        o = as_points(origins, "origins")
        length = as_float(length, "length", minimum=0.0, exclusive=True)
        d = _DOWN  # raycast's unit direction for any ray straight down it accepts
        ground0 = self._height_unchecked(o[..., 0], o[..., 2])
        gap0 = o[..., 1] - ground0
        t = np.where(gap0 <= 0, 0.0, gap0)  # the distance down: gap0 / 1
        hit = np.isfinite(t) & (t <= length)
        safe_t = np.where(hit, t, 0.0)[..., None]
        point = np.where(hit[..., None], o + d * safe_t, o)
        point[..., 1] = ground0
        return hit, point

    def raycast(self, origins: Any, directions: Any, max_distance: float = np.inf,
                ) -> tuple[np.ndarray, FloatArray, FloatArray, FloatArray]:
        """Cast rays ``(..., 3)`` against the ground.

        Returns ``(hit, distance, point, normal)`` with shapes ``(...)``, ``(...)``,
        ``(..., 3)``, ``(..., 3)``. ``distance`` is along the unit direction. A ray
        that starts below the ground hits at distance 0. Rays that miss have
        ``hit=False``, ``distance=inf`` and the point/normal of the ray origin's
        vertical projection. ``max_distance`` (>= 0, default unlimited) is the longest
        distance that counts as a hit.

        Vertical rays are exact; other rays are marched in steps of half a cell and
        refined by bisection to 1e-10 of the cell size.
        """
        o = as_points(origins, "origins")
        d = normalize(as_points(directions, "directions"))
        o, d = np.broadcast_arrays(o, d)
        if np.any(np.abs(d).sum(axis=-1) == 0):
            raise TerrainError("directions must be non-zero vectors", argument="directions")
        unlimited = (isinstance(max_distance, float | np.floating)
                     and float(max_distance) == np.inf)
        limit = np.inf if unlimited else as_float(max_distance, "max_distance", minimum=0.0)
        ground0 = self.height(o[..., 0], o[..., 2])
        gap0 = o[..., 1] - ground0
        below = gap0 <= 0
        vertical = (np.abs(d[..., 0]) < 1e-15) & (np.abs(d[..., 2]) < 1e-15)
        # exact for vertical rays: distance = gap / -dy when moving down
        with np.errstate(divide="ignore", invalid="ignore"):
            t_vert = np.where(d[..., 1] < 0, gap0 / -d[..., 1], np.inf)
        t = np.where(vertical, t_vert, np.inf)
        oblique = ~vertical & ~below
        if np.any(oblique):
            t_obl = self._march(o[oblique], d[oblique], limit)
            t[oblique] = t_obl
        t = np.where(below, 0.0, t)
        hit = np.isfinite(t) & (t <= limit)
        t = np.where(hit, t, np.inf)
        safe_t = np.where(hit, t, 0.0)[..., None]
        # a hit on the ground under its end point, a miss under its origin; only hits of
        # rays with a sideways part end elsewhere than over the origin, whose ground was
        # sampled already (o + 0 t holds the same x and z, up to the sign of a zero)
        point = np.where(hit[..., None], o + d * safe_t, o)
        ground = np.array(ground0, dtype=np.float64)
        moved = hit & ((d[..., 0] != 0.0) | (d[..., 2] != 0.0))
        if np.any(moved):
            ground[moved] = self.height(point[moved][:, 0], point[moved][:, 2])
        point[..., 1] = ground
        return hit, t, point, self.normal(point[..., 0], point[..., 2])

    def _march(self, o: FloatArray, d: FloatArray, limit: float) -> FloatArray:
        """Distances to the first ground crossing for rays starting above ground: ``(n,)``."""
        rows, cols = self._h.shape
        lo_h, hi_h = float(self._h.min()), float(self._h.max())
        # the ray can only cross between the heights lo_h..hi_h; bound the march by that
        with np.errstate(divide="ignore", invalid="ignore"):
            t_exit = np.where(d[:, 1] < 0, (o[:, 1] - lo_h) / -d[:, 1], np.inf)
        horizontal = np.hypot(d[:, 0], d[:, 2])
        span = self.cell_size * (max(rows, cols) + 2)
        t_far = np.minimum(np.minimum(t_exit, limit),
                           np.where(horizontal > 0, span * 4 / np.maximum(horizontal, 1e-300)
                                    + np.abs(o[:, 1] - hi_h), np.inf))
        t_far = np.where(np.isfinite(t_far), t_far, span * 4)
        step = self.cell_size * 0.5
        out = np.full(len(o), np.inf)
        t0 = np.zeros(len(o))
        active = np.ones(len(o), dtype=bool)
        while np.any(active):
            t1 = np.minimum(t0 + step, t_far)
            p1 = o + d * t1[:, None]
            g1 = p1[:, 1] - self.height(p1[:, 0], p1[:, 2])
            crossed = active & (g1 <= 0)
            if np.any(crossed):
                out[crossed] = self._bisect(o[crossed], d[crossed], t0[crossed], t1[crossed])
            active &= ~crossed & (t1 < t_far)
            t0 = t1
        return out

    def _bisect(self, o: FloatArray, d: FloatArray, lo: FloatArray, hi: FloatArray) -> FloatArray:
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            p = o + d * mid[:, None]
            above = p[:, 1] - self.height(p[:, 0], p[:, 2]) > 0
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
            if np.all(hi - lo < 1e-10 * self.cell_size):
                break
        return hi

    def distance_outside(self, x: Any, z: Any) -> FloatArray:
        """How far ``(x, z)`` lies outside the samples' rectangle (0 inside it, and
        everywhere on a single-sample terrain, which is level); broadcasts."""
        xa, za = as_float_array(x, "x"), as_float_array(z, "z")
        broadcast_shapes(("x", xa.shape), ("z", za.shape))
        rows, cols = self._h.shape
        if rows == cols == 1:
            return np.zeros(np.broadcast_shapes(xa.shape, za.shape))
        (x0, z0), cell = self.origin, self.cell_size
        dx = np.maximum(np.maximum(x0 - xa, xa - (x0 + (cols - 1) * cell)), 0.0)
        dz = np.maximum(np.maximum(z0 - za, za - (z0 + (rows - 1) * cell)), 0.0)
        return np.hypot(dx, dz)

    def warn_if_left(self, points: Any, what: str = "motion") -> float:
        """A :class:`~limbik.errors.LimbikWarning` when ``points`` (frames, ..., 3) leave
        the samples' rectangle, where heights are the edge's: it says how far (the largest
        distance, in length units), in how many frames, and both extents. Returns that
        distance (0 when every point is over the terrain)."""
        p = as_points(points, what)
        far = self.distance_outside(p[..., 0], p[..., 2])
        worst = float(np.max(far, initial=0.0))
        if worst > 0.0:
            frames = far.reshape(far.shape[0], -1).max(axis=1) if far.ndim else far[None]
            rows, cols = self._h.shape
            (x0, z0), cell = self.origin, self.cell_size
            warnings.warn(
                f"{what} leaves terrain {self.name!r} by up to {worst:.4g} beyond its "
                f"edge in {int(np.count_nonzero(frames))} of {frames.size} frames, where "
                f"heights are the edge's: the terrain covers x {x0:.4g} to "
                f"{x0 + (cols - 1) * cell:.4g}, z {z0:.4g} to {z0 + (rows - 1) * cell:.4g}; "
                f"the {what}, x {np.min(p[..., 0]):.4g} to {np.max(p[..., 0]):.4g}, z "
                f"{np.min(p[..., 2]):.4g} to {np.max(p[..., 2]):.4g}",
                LimbikWarning, stacklevel=3)
        return worst

    def __repr__(self) -> str:
        rows, cols = self._h.shape
        return (f"Terrain({self.name}, {rows}x{cols} samples, cell={self.cell_size:g}, "
                f"origin={self.origin})")


def _grid(extent: tuple[float, float, float, float], cell_size: float | None,
          feature: float) -> tuple[FloatArray, FloatArray, float, float, float]:
    x_min, x_max, z_min, z_max = (float(e) for e in extent)
    if not (x_max > x_min and z_max > z_min):
        raise TerrainError(f"extent must be (x_min, x_max, z_min, z_max) with min < max, "
                           f"got {extent}", argument="extent")
    cell = float(cell_size) if cell_size is not None else feature / 16
    if not cell > 0:
        raise TerrainError(f"cell_size must be > 0, got {cell}", argument="cell_size")
    nx = int(np.ceil((x_max - x_min) / cell)) + 1
    nz = int(np.ceil((z_max - z_min) / cell)) + 1
    if nx * nz > 25_000_000:
        raise TerrainError(f"extent and cell_size give {nx}x{nz} samples; use a larger cell_size",
                           argument="cell_size")
    xs = x_min + cell * np.arange(nx, dtype=np.float64)
    zs = z_min + cell * np.arange(nz, dtype=np.float64)
    return xs.astype(np.float64), zs.astype(np.float64), x_min, z_min, cell
