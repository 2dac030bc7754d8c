"""Simulators by spec string (``"local"``, ``"local:<model>"``, ``"openai:<model>"``, ``"perfect"``): one registry.

A *spec* is a kind, optionally followed by ``:`` and an argument (a model name). Each kind is a
:class:`SimulatorKind` in :data:`SIMULATORS`; :func:`make_simulator` turns a spec into a simulator (behind the
persistent response cache when asked) and :func:`check_simulator_spec` validates one without building it, so
that the command line, the grid and the demo accept, list and explain the same names. Adding a kind is one
``register`` call::

    SIMULATORS.register("echo", SimulatorKind(lambda argument, options: EchoSimulator()))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xaimetrics._registry import Registry
from xaimetrics._validation import invalid
from xaimetrics.simulators._base import Simulator

__all__ = [
    "SIMULATORS",
    "SimulatorKind",
    "SimulatorOptions",
    "check_simulator_spec",
    "make_simulator",
    "simulator_choices",
]


@dataclass(frozen=True)
class SimulatorOptions:
    """What a spec does not say but a simulator may need: server URL, key variable, calls in flight, extras."""

    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int | None = None
    #: the base deadline of a local model's call in seconds (``None``: the simulator's default)
    call_timeout: float | None = None
    #: keyword arguments for the simulator's constructor (each kind's own: any type it accepts)
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SimulatorKind:
    """How the specs of one kind become simulators.

    Args:
        factory: ``factory(argument, options) -> simulator``; ``argument`` is the text after ``:`` (``None``
            when the spec has none), ``options`` a :class:`SimulatorOptions`.
        argument: what follows ``:`` (``"model"`` for ``openai:<model>``); ``None`` when the kind takes none.
        argument_required: whether the spec must have the argument (``local`` alone is the default model).
        arguments: the allowed arguments, when the list is closed (the verified GGUF models of ``local:``).
        uses_base_url: whether the simulator calls a server at ``base_url``.
        oracle: whether it knows the reference answers (told each prompt through ``register(setting, prompt)``):
            it is never put behind the response cache and cannot propose concept labels.
        interactive: whether a person answers (``human``): usable one setting at a time (``xaimetrics
            consim``), never in a grid, whose human rows come from a study (:mod:`xaimetrics.studies`).

    Example:
        >>> SIMULATORS.get("openai").argument, SIMULATORS.get("perfect").oracle
        ('model', True)
    """

    factory: Callable[[str | None, SimulatorOptions], Simulator]
    argument: str | None = None
    argument_required: bool = True
    arguments: Callable[[], Iterable[str]] | None = None
    uses_base_url: bool = False
    oracle: bool = False
    interactive: bool = False

    def forms(self, name: str) -> tuple[str, ...]:
        """How a spec of this kind is written (``"local"``, ``"openai:<model>"``)."""
        if self.argument is None:
            return (name,)
        placeholder = f"{name}:<{self.argument}>"
        return (placeholder,) if self.argument_required else (name,)


def _local(argument: str | None, options: SimulatorOptions) -> Simulator:
    from xaimetrics.simulators._llama import default_simulator

    keywords: dict[str, Any] = dict(options.extra)
    if options.call_timeout is not None:
        keywords["call_timeout"] = options.call_timeout
    return default_simulator(**keywords) if argument is None else default_simulator(argument, **keywords)


def _gguf_names() -> Iterable[str]:
    from xaimetrics.simulators._assets import GGUF_ASSETS

    return tuple(GGUF_ASSETS)


#: the URL whose models :data:`TOKEN_PRICES` prices (another server may reuse a model name at another price)
_OPENAI_API = "https://api.openai.com/v1"


def _openai(argument: str | None, options: SimulatorOptions) -> Simulator:
    from xaimetrics.simulators._openai import OpenAICompatibleSimulator
    from xaimetrics.simulators._prices import TOKEN_PRICES

    keywords: dict[str, Any] = dict(options.extra)
    if options.api_key_env is not None:
        keywords["api_key_env"] = options.api_key_env
    if options.concurrency is not None:
        keywords["max_concurrency"] = options.concurrency
    simulator = OpenAICompatibleSimulator(str(argument), base_url=options.base_url, **keywords)
    if "price_per_1k_tokens" not in keywords and simulator.base_url == _OPENAI_API:
        simulator.price_per_1k_tokens = TOKEN_PRICES.get(
            simulator.model
        )  # OpenAI's own API: its dated prices
    return simulator


def _perfect(argument: str | None, options: SimulatorOptions) -> Simulator:
    from xaimetrics.simulators._perfect import PerfectSimulator

    return PerfectSimulator()


def _lexical(argument: str | None, options: SimulatorOptions) -> Simulator:
    from xaimetrics.simulators._lexical import LexicalSimulator

    return LexicalSimulator(**options.extra)


def _human(argument: str | None, options: SimulatorOptions) -> Simulator:
    from xaimetrics.simulators._scripted import HumanSimulator

    return HumanSimulator(**options.extra)


#: every simulator kind, by name (case-insensitive)
SIMULATORS: Registry[SimulatorKind] = Registry("simulator", argument="simulator")
SIMULATORS.register(
    "local", SimulatorKind(_local, argument="name", argument_required=False, arguments=_gguf_names), builtin=True,
    description="the offline GGUF model (llama.cpp); 'local:<name>' picks another verified model",
)  # fmt: skip
SIMULATORS.register(
    "openai", SimulatorKind(_openai, argument="model", uses_base_url=True), builtin=True,
    description="any OpenAI-compatible server (with base_url)",
)  # fmt: skip
SIMULATORS.register(
    "perfect", SimulatorKind(_perfect, oracle=True), builtin=True,
    description="answers the model's predictions (a pipeline check)",
)  # fmt: skip
SIMULATORS.register(
    "lexical", SimulatorKind(_lexical), builtin=True,
    description="a deterministic literal reader of the prompt's words (a reference, no LLM)",
)  # fmt: skip
SIMULATORS.register(
    "human", SimulatorKind(_human, oracle=False, interactive=True), builtin=True,
    description="a person at the terminal; in grids, human rows come from a study (xaimetrics study)",
)  # fmt: skip


def simulator_choices(extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Every way to write a spec: each kind's form, then the closed lists of arguments, then ``extra`` names.

    Example:
        >>> simulator_choices()[:3]
        ('local', 'openai:<model>', 'perfect')
    """
    forms = [form for entry in SIMULATORS.entries() for form in entry.value.forms(entry.name)]
    for entry in SIMULATORS.entries():
        if entry.value.arguments is not None:
            forms += [f"{entry.name}:{argument}" for argument in entry.value.arguments()]
    return (*forms, *extra)


def check_simulator_spec(
    spec: str, *, extra: Iterable[str] = (), owner: str = "make_simulator", argument: str = "spec"
) -> tuple[str, str | None]:
    """``(kind name, argument)`` of a spec, or an error naming ``argument``, ``owner`` and every choice.

    Names in ``extra`` (simulators a runner provides itself) are accepted as they are: ``(spec, None)``.

    Example:
        >>> check_simulator_spec("openai:gpt-4o-mini"), check_simulator_spec("LOCAL")
        (('openai', 'gpt-4o-mini'), ('local', None))
    """
    extra = tuple(extra)
    if isinstance(spec, str) and spec in extra:
        return spec, None
    name, _, value = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    kind = SIMULATORS.find(name)
    given = value if ":" in str(spec) else None
    if kind is not None and _accepts(kind, given):
        return SIMULATORS.canonical(name), given
    choices = ", ".join(repr(choice) for choice in simulator_choices(extra))
    from xaimetrics._registry import did_you_mean

    raise invalid(
        argument, owner, f"among {choices}", spec, did_you_mean(name, (*SIMULATORS.names(), *extra)) or None
    )


def _accepts(kind: SimulatorKind, argument: str | None) -> bool:
    if argument is None:
        return kind.argument is None or not kind.argument_required
    if kind.argument is None or not argument:
        return False
    return kind.arguments is None or argument in tuple(kind.arguments())


def make_simulator(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    concurrency: int | None = None,
    call_timeout: float | None = None,
    cache: str | Path | None = None,
    provided: Mapping[str, Callable[[], Simulator]] | None = None,
    owner: str = "make_simulator",
    argument: str = "spec",
    **extra: object,
) -> Simulator:
    """The simulator a spec stands for, behind the persistent response cache at ``cache`` (oracles never).

    The one factory of simulators: the CLI, :func:`~xaimetrics.benchmark.run_grid` (with the names its
    :class:`~xaimetrics.benchmark.Providers` add, ``provided``) and the Ray workers all call it.

    Args:
        spec: ``"local"``, ``"local:<name>"``, ``"openai:<model>"``, ``"perfect"``, a registered kind, or a
            name of ``provided``.
        base_url, api_key_env, concurrency: for the simulators that use them (``openai:``).
        call_timeout: the base deadline of a local model's call in seconds (``local``; ``None``: its default).
        cache: SQLite file of the response cache (``None``: no cache).
        provided: ``{name: factory() -> simulator}`` a caller adds (a runner's own simulators); such a
            simulator is put behind the cache too.
        owner, argument: who asks and for which argument, in error messages.
        extra: other keyword arguments for the simulator (:attr:`SimulatorOptions.extra`).

    Example:
        >>> make_simulator("perfect").name
        'perfect'
    """
    provided = provided or {}
    name, value = check_simulator_spec(spec, extra=provided, owner=owner, argument=argument)
    if name in provided:
        made = provided[name]()
        return made if cache is None else _cached(made, cache)
    kind = SIMULATORS.get(name)
    options = SimulatorOptions(
        base_url=base_url,
        api_key_env=api_key_env,
        concurrency=concurrency,
        call_timeout=call_timeout,
        extra=extra,
    )
    simulator = kind.factory(value, options)
    if cache is None or kind.oracle or kind.interactive:
        return simulator
    return _cached(simulator, cache)


def _cached(simulator: Simulator, cache: str | Path) -> Simulator:
    from xaimetrics.simulators._response_cache import CachedSimulator

    return CachedSimulator(simulator, cache)
