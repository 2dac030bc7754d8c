"""Where the classification head starts, for the common Hugging Face layouts.

A :class:`SplitClassifier` with ``split=None`` cuts the model ``f = g∘h`` at the *input of the
classification head*: ``h`` maps a text to one vector, ``g`` (the head) maps that vector to the logits. The
mechanism is generic — a forward pre-hook on the first module of the head reads its input — and each layout
below only says which module that is, how to read one vector per text from its input, and how to run the
head on a batch of vectors:

==========================  ======================  ==============================================
layout (models)             head module             head input ``a`` and ``g(a)``
==========================  ======================  ==============================================
pooled (BERT, MiniLM,       ``classifier``          the pooled output ``tanh(W·h_[CLS] + b)``;
ALBERT, DeBERTa, ...)       (``nn.Linear``)         ``g(a) = classifier(a)``
pre-classifier              ``pre_classifier``      the last-layer ``[CLS]`` hidden state, as in the
(DistilBERT)                                        ConSim paper; ``g(a) = classifier(ReLU(pre_classifier(a)))``
first-token head (RoBERTa,  ``classifier`` (with    the last-layer ``<s>``/``[CLS]`` hidden state;
XLM-R, ELECTRA, ...)        ``dense``/``out_proj``)  ``g(a) = classifier(a[:, None, :])``
last-token score (Llama,    ``score``               the last-layer hidden state of the last real token
Qwen2, GPT-2, Mistral ...)  (``nn.Linear``)          (the model pools there); ``g(a) = score(a)``
encoder-decoder head (T5,   ``classification_head`` the decoder's last-layer state at the final
BART ...)                   (``dense``/``out_proj``) ``</s>``; ``g(a) = classification_head(a)``
==========================  ======================  ==============================================

Dropout inside ``g`` is the identity because the model runs in evaluation mode. A layout is recognised from
the module structure; :class:`~xaimetrics.models.SplitClassifier` then checks once, on real inputs, that
``g(h(x))`` reproduces the model's logits, so a look-alike with a different forward fails loudly instead of
returning wrong activations.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

__all__ = ["HeadAdapter", "detect_head"]


@dataclass(frozen=True)
class HeadAdapter:
    """How to read and re-run the classification head of one model layout.

    Attributes:
        layout: human-readable name of the layout, shown in messages.
        module_name: name (in ``model.named_modules()``) of the module whose input is the head input.
        width: the width ``p`` of the head input.
        first_token: the model pools the first column of the batch (BERT-style heads), so it needs right
            padding.
    """

    layout: str
    module_name: str
    width: int
    first_token: bool = True

    def extract(self, args: tuple[torch.Tensor, ...], last_positions: torch.Tensor) -> torch.Tensor:
        """The head input, shape ``(n, p)``, from the positional arguments of the head module.

        ``last_positions`` holds the column of each text's last real token in the padded batch.
        """
        return args[0]

    def rectify(self, args: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        """The arguments with a ReLU applied to the head input (the "positive" models)."""
        return (torch.relu(args[0]), *args[1:])

    def head(self, model: nn.Module, activations: torch.Tensor) -> torch.Tensor:
        """``g``: logits of shape ``(n, c)`` from head inputs of shape ``(n, p)``."""
        return model.get_submodule(self.module_name)(activations)


class _PreClassifierHead(HeadAdapter):
    """DistilBERT: ``pre_classifier`` → ReLU → dropout → ``classifier``."""

    def head(self, model: nn.Module, activations: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(model.get_submodule("pre_classifier")(activations))
        return model.get_submodule("classifier")(model.get_submodule("dropout")(hidden))


class _FirstTokenHead(HeadAdapter):
    """RoBERTa-style head module that receives every token and keeps the first one."""

    def extract(self, args: tuple[torch.Tensor, ...], last_positions: torch.Tensor) -> torch.Tensor:
        return args[0][:, 0]

    def rectify(self, args: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        features = args[0]
        # Only the first token reaches the head; the others pass unchanged.
        rectified = torch.cat([torch.relu(features[:, :1]), features[:, 1:]], dim=1)
        return (rectified, *args[1:])

    def head(self, model: nn.Module, activations: torch.Tensor) -> torch.Tensor:
        return model.get_submodule(self.module_name)(activations[:, None, :])


class _LastTokenHead(HeadAdapter):
    """Decoder sequence classifiers: ``score`` runs on every position, the model keeps the last real token."""

    def extract(self, args: tuple[torch.Tensor, ...], last_positions: torch.Tensor) -> torch.Tensor:
        hidden = args[0]
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), last_positions.to(hidden.device)]

    # rectify: the ReLU on every position is the ReLU on the one the model keeps.


def _model_type(model: nn.Module) -> str:
    config = getattr(model, "config", None)
    return str(getattr(config, "model_type", type(model).__name__))


def detect_head(model: nn.Module) -> HeadAdapter | None:
    """Recognise the classification-head layout of ``model``, or return ``None``.

    Example:
        >>> from transformers import BertConfig, AutoModelForSequenceClassification
        >>> config = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
        ...                     intermediate_size=16, num_labels=3)
        >>> adapter = detect_head(AutoModelForSequenceClassification.from_config(config))
        >>> adapter.layout, adapter.module_name, adapter.width
        ('pooled output (bert)', 'classifier', 8)
    """
    classifier = getattr(model, "classifier", None)
    pre_classifier = getattr(model, "pre_classifier", None)
    model_type = _model_type(model)
    if isinstance(pre_classifier, nn.Linear) and isinstance(classifier, nn.Linear):
        return _PreClassifierHead(
            f"[CLS] hidden state ({model_type})", "pre_classifier", pre_classifier.in_features
        )
    if isinstance(classifier, nn.Module) and isinstance(getattr(classifier, "out_proj", None), nn.Linear):
        dense = getattr(classifier, "dense", None)
        if isinstance(dense, nn.Linear):
            return _FirstTokenHead(
                f"first-token hidden state ({model_type})", "classifier", dense.in_features
            )
    if isinstance(classifier, nn.Linear):
        return HeadAdapter(f"pooled output ({model_type})", "classifier", classifier.in_features)
    score = getattr(model, "score", None)
    if isinstance(score, nn.Linear):
        return _LastTokenHead(
            f"last-token hidden state ({model_type})", "score", score.in_features, first_token=False
        )
    head = getattr(model, "classification_head", None)
    if (
        head is not None
        and isinstance(getattr(head, "out_proj", None), nn.Linear)
        and isinstance(getattr(head, "dense", None), nn.Linear)
    ):
        return HeadAdapter(
            f"decoder end-of-sequence state ({model_type})",
            "classification_head",
            head.dense.in_features,
            first_token=False,
        )
    return None
