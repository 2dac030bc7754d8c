"""The generic name registry every concept of the library is listed in."""

from __future__ import annotations

import pytest

from xaimetrics._registry import Registry
from xaimetrics.exceptions import InvalidParameterError


def _colours() -> Registry[int]:
    registry = Registry[int]("colour", argument="colour")
    registry.register("red", 1, aliases=("rouge", "R"), description="first")
    registry.register("green", 2)
    return registry


def test_lookup_is_case_insensitive_and_accepts_aliases() -> None:
    colours = _colours()
    assert colours.get("RED") == colours.get("rouge") == colours.get("r") == 1
    assert colours.canonical("Rouge") == "red"
    assert colours.names() == ("red", "green")
    assert list(colours) == ["red", "green"] and len(colours) == 2
    assert colours.entry("r").description == "first"


def test_unknown_name_names_the_argument_the_owner_and_every_choice() -> None:
    with pytest.raises(InvalidParameterError) as error:
        _colours().get("blue", owner="paint", argument="shade")
    message = str(error.value)
    assert "'shade' parameter of paint" in message
    assert "red (aliases: rouge, R), green" in message
    assert "Got blue." in message


def test_a_taken_name_or_alias_is_refused_unless_replaced() -> None:
    colours = _colours()
    with pytest.raises(InvalidParameterError, match="already used by the colour 'red'"):
        colours.register("crimson", 3, aliases=("rouge",))
    with pytest.raises(InvalidParameterError, match="not registered yet"):
        colours.register("green", 3)
    colours.register("green", 3, aliases=("vert",), replace=True)
    assert colours.get("vert") == 3 and colours.names() == ("red", "green")
    colours.register("crimson", 4, aliases=("rouge",), replace=True)
    assert "red" not in colours and colours.get("rouge") == 4


def test_decorator_and_temporary_registration() -> None:
    colours = _colours()

    @colours.register("blue", aliases=("bleu",))
    def blue() -> int:
        return 5

    assert colours.get("bleu") is blue
    with colours.temporarily("teal", 9):
        assert colours.get("TEAL") == 9
    assert "teal" not in colours
    colours.unregister("bleu")
    assert "blue" not in colours and "bleu" not in colours


def test_bad_registrations_are_explained() -> None:
    colours = _colours()
    with pytest.raises(InvalidParameterError, match="aliases=\\('x',\\)"):
        colours.register("x-ray", 1, aliases="x")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="non-empty string"):
        colours.register(" ", 1)


def test_unknown_names_get_the_closest_registered_one() -> None:
    """Every lookup through a registry suggests a close name (difflib), case-insensitively."""
    from xaimetrics.concepts import EXTRACTORS
    from xaimetrics.consim import PromptSetting
    from xaimetrics.simulators import check_simulator_spec

    colours = _colours()
    with pytest.raises(InvalidParameterError, match=r"Got reed\. Did you mean 'red'\?$"):
        colours.get("reed")
    with pytest.raises(InvalidParameterError, match=r"Got purple\.$"):  # nothing close: no suggestion
        colours.get("purple")
    with pytest.raises(InvalidParameterError, match=r"Got nfm\. Did you mean 'NMF'\?"):
        EXTRACTORS.get("nfm")
    with pytest.raises(InvalidParameterError, match=r"Got lcoal\. Did you mean 'local'\?"):
        check_simulator_spec("lcoal")
    with pytest.raises(InvalidParameterError, match=r"Got NE22-a\. Did you mean 'NE2'\?"):
        PromptSetting.parse("NE22-a")
