"""URDF on hostile input: unknown encodings, huge offsets, wrong types; the top-level export."""

from __future__ import annotations

import math

import pytest

import limbik
from limbik.chain.urdf import MAX_MAGNITUDE
from limbik.errors import InvalidInputError, URDFError

ARM = ('<robot name="r"><link name="a"/><link name="b"/>'
       '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
       '<origin xyz="{x} 0 0"/><axis xyz="0 0 1"/>'
       '<limit lower="-1" upper="1"/></joint></robot>')


def test_parse_urdf_is_exported_at_top_level():
    assert limbik.parse_urdf is limbik.chain.parse_urdf
    assert "parse_urdf" in limbik.__all__


@pytest.mark.parametrize("encoding", ["klingon", "utf-99", "x" * 200])
def test_unknown_encoding_is_a_urdf_error(encoding):
    text = f'<?xml version="1.0" encoding="{encoding}"?>' + ARM.replace("{x}", "1")
    with pytest.raises(URDFError, match="LookupError"):
        limbik.parse_urdf(text.encode(), "a", "b")


@pytest.mark.parametrize("x", ["1e160", "-1e101", "1e400", "inf", "nan"])
def test_origins_beyond_the_documented_range_are_rejected(x):
    with pytest.raises(URDFError) as info:
        limbik.parse_urdf(ARM.replace("{x}", x), "a", "b")
    assert info.value.line == 1
    assert "xyz" in str(info.value)


def test_origins_at_the_documented_range_give_finite_reach():
    chain = limbik.parse_urdf(ARM.replace("{x}", repr(MAX_MAGNITUDE)), "a", "b")
    assert math.isfinite(chain.reach)
    solution = limbik.jacobian_ik(chain, [0.0, MAX_MAGNITUDE, 0.0])
    assert math.isfinite(float(solution.error))


@pytest.mark.parametrize("value", [None, 3, ["<robot/>"]])
def test_parse_urdf_wants_text(value):
    with pytest.raises(InvalidInputError, match="text must be URDF text"):
        limbik.parse_urdf(value, "a", "b")


@pytest.mark.parametrize("x", ["1_0", "\u0661", "\uff11", "0x1", "1e", "."])
def test_numbers_are_plain_ascii_decimals(x):
    with pytest.raises(URDFError, match="xyz"):
        limbik.parse_urdf(ARM.replace("{x}", x), "a", "b")


@pytest.mark.parametrize("x", ["1", "-1.", ".5", "+2.5e-1", "1E2"])
def test_decimal_numbers_are_read(x):
    chain = limbik.parse_urdf(ARM.replace("{x}", x), "a", "b")
    assert chain.reach == pytest.approx(abs(float(x)))


def test_entity_declarations_are_refused_before_any_expansion():
    laughs = "".join(f'<!ENTITY e{k} "{f"&e{k - 1};" * 10 if k else "1"}">'
                     for k in range(9))  # 10^8 characters if expanded
    text = f'<?xml version="1.0"?><!DOCTYPE robot [{laughs}]>' + ARM.replace("{x}", "&e8;")
    with pytest.raises(URDFError, match="no XML entity declarations"):
        limbik.parse_urdf(text, "a", "b")
    small = '<!DOCTYPE robot [<!ENTITY one "1">]>' + ARM.replace("{x}", "&one;")
    with pytest.raises(URDFError, match="ENTITY one"):
        limbik.parse_urdf(small, "a", "b")
