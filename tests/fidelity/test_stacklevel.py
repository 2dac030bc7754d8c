"""user_stacklevel: a warning raised inside the fidelity package points at the user's line."""

from __future__ import annotations

import warnings

from xaimetrics.fidelity._stacklevel import user_stacklevel


def test_called_from_outside_the_package_it_points_at_the_direct_caller() -> None:
    def warn_here() -> None:
        warnings.warn("from a user function", UserWarning, stacklevel=user_stacklevel())

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_here()
    assert caught[0].filename == __file__ and caught[0].lineno == warn_here.__code__.co_firstlineno + 1


def test_frames_inside_the_package_are_skipped() -> None:
    import xaimetrics.fidelity._stacklevel as module

    # compiled as if it lived in the package: the warning skips it and lands on this test's line
    code = compile(
        "def inner():\n    warnings.warn('deep', UserWarning, stacklevel=user_stacklevel())\n",
        module.__file__, "exec",
    )  # fmt: skip
    namespace = {"warnings": warnings, "user_stacklevel": user_stacklevel}
    exec(code, namespace)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        namespace["inner"]()
    assert caught[0].filename == __file__
