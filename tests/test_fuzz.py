"""Short seeded fuzz runs of the file and problem inputs (``tools/fuzz.py`` runs them long),
and the hostile small files under a 1 GiB memory cap."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import limbik
from fuzzers import FUZZERS, check_bvh_text, check_glb_bytes, hostile_bvh_files, hostile_glb_files
from limbik.errors import GltfError

SEED = int(os.environ.get("LIMBIK_FUZZ_SEED", "18"))
COUNTS = {"bvh": 100, "urdf": 200, "json": 40, "gltf": 15, "line": 200, "scales": 60}


@pytest.mark.parametrize("name", sorted(FUZZERS))
def test_fuzz_short_run(name):
    failures = FUZZERS[name](SEED, COUNTS[name])
    assert failures == []


@pytest.mark.parametrize("name", sorted(hostile_bvh_files()))
def test_hostile_bvh_file_is_handled(name):
    text = hostile_bvh_files()[name]
    assert len(text.encode()) < 1 << 20
    assert check_bvh_text(text) is None


@pytest.mark.parametrize("name", sorted(hostile_glb_files()))
def test_hostile_glb_file_is_refused_without_the_memory_it_asks_for(name, tmp_path):
    data = hostile_glb_files()[name]
    assert len(data) < 1 << 20
    with pytest.raises(GltfError):
        limbik.read_gltf(write(tmp_path / "hostile.glb", data))
    assert check_glb_bytes(data, tmp_path) is None


def write(path, data):
    path.write_bytes(data)
    return path


CAPPED = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
sys.path.insert(0, sys.argv[1])
import tempfile
from pathlib import Path
from fuzzers import check_bvh_text, check_glb_bytes, hostile_bvh_files, hostile_glb_files
for name, text in hostile_bvh_files().items():
    problem = check_bvh_text(text)
    assert problem is None, (name, problem)
with tempfile.TemporaryDirectory() as folder:
    for name, data in hostile_glb_files().items():
        problem = check_glb_bytes(data, Path(folder))
        assert problem is None, (name, problem)
print("ok")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
def test_hostile_bvh_files_parse_within_one_gib():
    """Each file is under 1 MB; with the address space capped at 1 GiB (the library's
    imports included) every one is parsed or rejected with a BVHParseError."""
    out = subprocess.run([sys.executable, "-c", CAPPED, str(Path(__file__).parent)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
