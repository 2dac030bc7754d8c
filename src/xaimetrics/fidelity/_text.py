"""Perturbation of texts for a Hugging Face sequence classifier (or a ``SplitClassifier``).

Texts are tokenised once. Features are the non-special tokens (``granularity="token"``) or the words of
the tokenizer's pre-tokenisation (``granularity="word"``: all tokens of a word move together). Special
tokens (``[CLS]``, ``[SEP]``, …) are never features and never perturbed. A batch of perturbed rows is built
on the device from the padded id matrix and a token→feature index map:

- ``"mask"`` (and the default ``0.0``): perturbed tokens become the tokenizer's mask token;
- ``"pad"``: they become the pad token and leave the attention mask (the model no longer sees them);
- ``"delete"``: they are removed and the remaining tokens are packed to the left (positions shift as if the
  words had never been written);
- an ``int``: that token id; a callable ``ids (n, length) -> ids (n, length)``: per-position replacement ids.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Protocol, cast

import numpy as np
import torch

from xaimetrics._device import resolve_device
from xaimetrics._validation import caller, check_choice, check_texts, invalid
from xaimetrics.fidelity._outputs import (
    Activation,
    Scorer,
    build_targets,
    check_finite_explanation,
    model_outputs,
)
from xaimetrics.fidelity._tensor import warn_if_training

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import ArrayLike
    from transformers import PreTrainedTokenizerBase

    from xaimetrics._typing import DeviceLike
    from xaimetrics.fidelity._outputs import BaselineMode, FidelityModel, Operator

__all__ = ["TextPerturber", "TokenizedModel", "resolve_text_model"]


class TokenizedModel(Protocol):
    """A text classifier that holds its tokenizer (e.g. :class:`~xaimetrics.models.SplitClassifier`)."""

    @property
    def model(self) -> FidelityModel: ...

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase: ...


_MODES = ("mask", "pad", "delete")


def resolve_text_model(
    model: FidelityModel | TokenizedModel, tokenizer: PreTrainedTokenizerBase | None, owner: str
) -> tuple[FidelityModel, PreTrainedTokenizerBase, int | None]:
    """Return ``(hf_model, tokenizer, max_length)`` from a HF model + tokenizer or a ``SplitClassifier``."""
    # a SplitClassifier: its own tokenizer (unless one is given) and its own max_length
    if hasattr(model, "tokenizer") and hasattr(model, "model"):
        return model.model, tokenizer or model.tokenizer, getattr(model, "max_length", None)
    if tokenizer is None:
        raise invalid(
            "tokenizer",
            owner,
            "the model's tokenizer when the inputs are texts",
            None,
            "Pass tokenizer=AutoTokenizer.from_pretrained(...) or a xaimetrics.models.SplitClassifier as model.",
        )
    if not callable(model):
        raise invalid("model", owner, "a Hugging Face sequence classifier", type(model).__name__)
    return model, tokenizer, None


class TextPerturber:
    """Tokenised texts, their features and baseline, perturbed by feature masks."""

    def __init__(
        self,
        model: FidelityModel | TokenizedModel,
        texts: Sequence[str],
        *,
        tokenizer: PreTrainedTokenizerBase | None,
        granularity: str,
        baseline_mode: BaselineMode,
        max_length: int | None,
        device: DeviceLike | None,
        activation: Activation,
        operator: Operator | None,
    ) -> None:
        self.owner = owner = caller()
        texts = check_texts(texts, "inputs", owner)
        hf_model, tokenizer, default_length = resolve_text_model(model, tokenizer, owner)
        check_choice(granularity, "granularity", owner, ["token", "word"])
        if granularity == "word" and not getattr(tokenizer, "is_fast", False):
            raise invalid(
                "granularity", owner, "'token' with a slow tokenizer", "'word'", "Use a fast tokenizer."
            )
        if max_length is None:
            max_length = default_length or min(int(getattr(tokenizer, "model_max_length", 512)), 512)
        self.texts = texts
        self.tokenizer = tokenizer
        self.granularity = granularity
        self.device = _text_device(hf_model, model) if device is None else resolve_device(device, owner)
        self.hf_model = hf_model
        self.accepted = _accepted_inputs(hf_model)
        self._encode_texts(texts, tokenizer, granularity, int(max_length))
        self._resolve_baseline(baseline_mode)
        self.scorer: Scorer[dict[str, torch.Tensor]] = Scorer(
            lambda enc: model_outputs(hf_model, **enc), activation, operator
        )
        self.targets: torch.Tensor | None = None
        warn_if_training(hf_model, owner)

    # ------------------------------------------------------------------ tokenisation
    def _encode_texts(
        self, texts: list[str], tokenizer: PreTrainedTokenizerBase, granularity: str, max_length: int
    ) -> None:
        word = granularity == "word"
        enc = tokenizer(
            texts,
            truncation=True,
            max_length=max_length,
            return_special_tokens_mask=True,
            return_offsets_mapping=word,
        )
        n = len(texts)
        lengths = [len(ids) for ids in enc["input_ids"]]
        width = max(lengths)
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.keys = [
            k for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc and k in self.accepted
        ]
        ids = torch.full((n, width), pad_id, dtype=torch.long)
        attention = torch.zeros((n, width), dtype=torch.long)
        token_types = torch.zeros((n, width), dtype=torch.long)
        feature_of_token = torch.full((n, width), -1, dtype=torch.long)
        names: list[list[str]] = []
        for i in range(n):
            row_ids = enc["input_ids"][i]
            length = lengths[i]
            ids[i, :length] = torch.tensor(row_ids)
            attention[i, :length] = 1
            if "token_type_ids" in enc:
                token_types[i, :length] = torch.tensor(enc["token_type_ids"][i])
            special = enc["special_tokens_mask"][i]
            if word:
                words = enc.word_ids(i)
                offsets = enc["offset_mapping"][i]
                seen: dict[int, int] = {}
                spans: list[list[int]] = []
                for t, w in enumerate(words):
                    if w is None or special[t]:
                        continue
                    if w not in seen:
                        seen[w] = len(seen)
                        spans.append([offsets[t][0], offsets[t][1]])
                    spans[seen[w]][1] = offsets[t][1]
                    feature_of_token[i, t] = seen[w]
                names.append([texts[i][a:b] for a, b in spans])
            else:
                positions = [t for t in range(length) if not special[t]]
                feature_of_token[i, positions] = torch.arange(len(positions))
                tokens = tokenizer.convert_ids_to_tokens([row_ids[t] for t in positions])
                names.append(cast("list[str]", tokens))  # a list of ids gives a list of tokens
            if not names[-1]:
                raise invalid(
                    "inputs",
                    self.owner,
                    "texts with at least one non-special token",
                    f"text {i} ({texts[i][:30]!r}) with none",
                    "Remove empty texts.",
                )
        self.n_samples = n
        self.feature_names = names
        self.n_features = torch.tensor([len(f) for f in names], dtype=torch.long)
        self.lengths = torch.tensor(lengths, dtype=torch.long)
        order = torch.sort(-self.lengths, stable=True).indices
        self.sample_order = order
        self.sample_position = torch.empty_like(order)
        self.sample_position[order] = torch.arange(n)
        self.ids = ids.to(self.device)
        self.attention = attention.to(self.device)
        self.token_types = token_types.to(self.device)
        self.feature_of_token = feature_of_token.to(self.device)
        self._lengths_device = self.lengths.to(self.device)

    def _resolve_baseline(self, baseline_mode: BaselineMode) -> None:
        owner = self.owner
        tokenizer = self.tokenizer
        self.replacement: torch.Tensor | None = None
        if isinstance(baseline_mode, float) and baseline_mode == 0.0:
            baseline_mode = "mask" if tokenizer.mask_token_id is not None else "pad"
        if callable(baseline_mode):
            replacement = torch.as_tensor(baseline_mode(self.ids.clone()))
            if tuple(replacement.shape) != tuple(self.ids.shape):
                raise invalid(
                    "baseline_mode",
                    owner,
                    f"a callable returning token ids of the input ids' shape {tuple(self.ids.shape)}",
                    f"shape {tuple(replacement.shape)}",
                )
            self.mode = "replace"
            self.replacement = replacement.to(device=self.device, dtype=torch.long)
            return
        if isinstance(baseline_mode, int) and not isinstance(baseline_mode, bool):
            vocab = len(tokenizer)
            if not 0 <= baseline_mode < vocab:
                raise invalid("baseline_mode", owner, f"a token id in [0, {vocab - 1}]", baseline_mode)
            self.mode, self.token_id = "replace", int(baseline_mode)
            return
        if baseline_mode not in _MODES:
            raise invalid(
                "baseline_mode",
                owner,
                "'mask', 'pad', 'delete', a token id or a callable for text inputs",
                baseline_mode,
            )
        if baseline_mode == "mask" and tokenizer.mask_token_id is None:
            raise invalid(
                "baseline_mode",
                owner,
                "'pad', 'delete' or a token id",
                "'mask'",
                "This tokenizer has no mask token.",
            )
        if baseline_mode == "pad" and tokenizer.pad_token_id is None:
            raise invalid(
                "baseline_mode",
                owner,
                "'mask', 'delete' or a token id",
                "'pad'",
                "This tokenizer has no pad token.",
            )
        self.mode = baseline_mode
        self.token_id = tokenizer.mask_token_id if baseline_mode == "mask" else tokenizer.pad_token_id

    # ------------------------------------------------------------------ batches
    def encode(self, samples: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """Model inputs for ``samples`` with the features flagged in ``mask`` ``(b, F)`` perturbed."""
        width = int(self._lengths_device[samples].max())
        ids = self.ids[samples, :width]
        attention = self.attention[samples, :width]
        token_types = self.token_types[samples, :width]
        feature = self.feature_of_token[samples, :width]
        perturbed = (feature >= 0) & mask.gather(1, feature.clamp(min=0))
        if self.mode == "delete":
            keep = attention.bool() & ~perturbed
            order = torch.sort(keep.to(torch.int8), dim=1, descending=True, stable=True).indices
            new_width = int(keep.sum(dim=1).max())
            order = order[:, :new_width]
            ids = ids.gather(1, order)
            token_types = token_types.gather(1, order)
            attention = keep.gather(1, order).to(attention.dtype)
            ids = torch.where(attention.bool(), ids, torch.full_like(ids, self.tokenizer.pad_token_id or 0))
        elif self.mode == "replace" and self.replacement is not None:
            ids = torch.where(perturbed, self.replacement[samples, :width], ids)
        else:
            ids = torch.where(perturbed, torch.full_like(ids, self.token_id), ids)
            if self.mode == "pad":
                attention = attention * (~perturbed).to(attention.dtype)
        batch = {"input_ids": ids, "attention_mask": attention, "token_type_ids": token_types}
        return {k: batch[k] for k in self.keys}

    def forward(self, samples: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Scores of the perturbed texts, shape ``(b,)``."""
        return self.scorer(self.encode(samples, mask), self.targets[samples])  # type: ignore[index]

    def _batched(
        self, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], batch_size: int | None, full: bool
    ) -> torch.Tensor:
        n = self.n_samples
        size = n if batch_size is None else batch_size
        width = int(self.n_features.max())
        parts, rows = [], []
        with torch.inference_mode():
            for start in range(0, n, size):
                samples = self.sample_order[start : start + size].to(self.device)
                mask = torch.full((len(samples), width), full, dtype=torch.bool, device=self.device)
                parts.append(fn(samples, mask))
                rows.append(samples.cpu())
        out = torch.cat(parts)
        result = torch.empty_like(out)
        result[torch.cat(rows).to(out.device)] = out
        return result

    def set_targets(self, targets: ArrayLike | None, batch_size: int | None) -> None:
        outputs = self._batched(lambda s, m: self.scorer.activated(self.encode(s, m)), batch_size, False)
        self.targets = build_targets(targets, outputs, self.owner)
        self.clean_outputs = outputs

    def endpoint_scores(self, *, baseline: bool, batch_size: int | None) -> torch.Tensor:
        if not baseline and self.scorer.is_default and self.targets is not None:
            return (self.clean_outputs * self.targets).sum(dim=-1).to(device="cpu", dtype=torch.float64)
        return self._batched(self.forward, batch_size, baseline).to(device="cpu", dtype=torch.float64)

    # ------------------------------------------------------------------ explanations
    def explanation_scores(self, explanations: ArrayLike) -> tuple[torch.Tensor, torch.Tensor]:
        """Validate per-text explanations; return scores ``(n, max_features)`` (``-inf`` padded) and counts."""
        owner = self.owner
        n = self.n_samples
        rows = _explanation_rows(explanations, n, owner)
        width = int(self.n_features.max())
        scores = torch.full((n, width), -torch.inf, dtype=torch.float64)
        feature_cpu = self.feature_of_token.cpu()
        padded = isinstance(rows, np.ndarray)
        n_columns = rows.shape[1] if isinstance(rows, np.ndarray) else None
        if padded and n_columns not in (width, self.ids.shape[1]):
            raise invalid(
                "explanations",
                owner,
                f"a 2-D array of width {width} (features, padded at the end) or {self.ids.shape[1]} (all tokens)",
                f"shape {np.shape(rows)}",
            )
        feature_cpu = self.feature_of_token.cpu()
        for i, row in enumerate(rows):
            n_i = int(self.n_features[i])
            n_tokens = int(self.lengths[i])
            if padded and n_columns == width:
                values = row[:n_i]
            elif not padded and row.shape[0] == n_i:
                values = row
            elif self.granularity == "token" and (padded or row.shape[0] == n_tokens):
                values = row[:n_tokens][(feature_cpu[i, :n_tokens] >= 0).numpy()]
            else:
                expected = f"{n_i} scores (its {self.granularity}s, see feature_names)"
                if self.granularity == "token":
                    expected += f" or {n_tokens} (with special tokens)"
                raise invalid("explanations", owner, f"for text {i}, {expected}", f"{row.shape[0]} scores")
            check_finite_explanation(values, f"for text {i}", owner)
            scores[i, :n_i] = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float64))
        return scores, self.n_features.clone()


def _explanation_rows(explanations: object, n: int, owner: str) -> np.ndarray | list[np.ndarray]:
    """A list of 1-D float arrays (or a 2-D array whose rows are padded at the end)."""
    if isinstance(explanations, torch.Tensor):
        explanations = explanations.detach().cpu().numpy()
    if isinstance(explanations, np.ndarray) and explanations.ndim == 2:
        rows: np.ndarray | list[np.ndarray] = explanations.astype(np.float64)
    elif isinstance(explanations, list | tuple):
        listed: list[np.ndarray] = []
        rows = listed
        for row in explanations:
            array = np.asarray(row.detach().cpu() if isinstance(row, torch.Tensor) else row, dtype=np.float64)
            if array.ndim != 1:
                raise invalid(
                    "explanations",
                    owner,
                    "one 1-D array of scores per text",
                    f"an array of shape {array.shape}",
                )
            listed.append(array)
    else:
        raise invalid(
            "explanations",
            owner,
            "a list of 1-D arrays (one per text) or a padded 2-D array",
            type(explanations).__name__,
        )
    if len(rows) != n:
        raise invalid("explanations", owner, f"one explanation per text ({n})", f"{len(rows)} explanations")
    return rows


def _accepted_inputs(hf_model: object) -> frozenset[str]:
    """Model inputs named by ``forward`` (DistilBERT takes no ``token_type_ids``); all three if unknown."""
    names = ("input_ids", "attention_mask", "token_type_ids")
    try:
        parameters = inspect.signature(cast("torch.nn.Module", hf_model).forward).parameters
    except (TypeError, ValueError, AttributeError):
        return frozenset(names)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return frozenset(names)
    return frozenset(n for n in names if n in parameters)


def _text_device(hf_model: object, wrapper: object) -> torch.device:
    device = getattr(wrapper, "device", None)
    if isinstance(device, torch.device):
        return device
    for parameter in cast("torch.nn.Module", hf_model).parameters():  # a Hugging Face model
        return parameter.device
    return torch.device("cpu")
