"""TransformersChatSimulator plumbing with a tiny random-weight GPT-2 and an offline byte-level BPE tokenizer."""

from __future__ import annotations

import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import AnswerSchema, ChatMessage, TransformersChatSimulator
from xaimetrics.simulators._transformers import answer_continuations

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@pytest.fixture(scope="module")
def tiny_chat_model() -> tuple[object, object]:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<|end|>", "<|system|>", "<|user|>", "<|assistant|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(["Sample_12: not prime", "Sample_3: Sci/Tech", "a fine film"] * 20, trainer)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<|end|>", pad_token="<|end|>"
    )
    fast.chat_template = TEMPLATE
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=len(fast), n_embd=32, n_layer=2, n_head=2, n_positions=256,
        bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id,
    )  # fmt: skip
    return transformers.GPT2LMHeadModel(config), fast


PROMPT = [ChatMessage("system", "Classify."), ChatMessage("user", "Sample_12: twelve\nSample_3: a chip")]
SCHEMA = AnswerSchema(("12", "3"), ("not prime", "Sci/Tech", "prime"))


def test_constrained_answer_always_has_the_schema_format(tiny_chat_model: tuple[object, object]) -> None:
    model, tokenizer = tiny_chat_model
    sim = TransformersChatSimulator(model=model, tokenizer=tokenizer, device="cpu", max_new_tokens=40)
    response = sim.generate(PROMPT, answer_schema=SCHEMA)
    lines = response.text.split("\n")
    assert len(lines) == 2
    for sample_id, line in zip(SCHEMA.sample_ids, lines, strict=True):
        prefix, _, label = line.partition(": ")
        assert prefix == f"Sample_{sample_id}" and label in SCHEMA.classes
    expected = tokenizer.apply_chat_template(
        [m.as_dict() for m in PROMPT], add_generation_prompt=True, return_dict=True
    )
    assert response.prompt_tokens == len(expected["input_ids"])
    assert 0 < response.completion_tokens <= 40
    assert sim.usage.summary().calls == 1


def test_greedy_is_deterministic_and_unconstrained_runs(tiny_chat_model: tuple[object, object]) -> None:
    model, tokenizer = tiny_chat_model
    sim = TransformersChatSimulator(model=model, tokenizer=tokenizer, device="cpu", max_new_tokens=12)
    first, second = sim.generate(PROMPT), sim.generate(PROMPT)
    assert first.text == second.text and first.completion_tokens == second.completion_tokens
    assert first.completion_tokens >= 1
    free = TransformersChatSimulator(
        model=model, tokenizer=tokenizer, device="cpu", max_new_tokens=12, constrain=False
    )
    assert free.generate(PROMPT, answer_schema=SCHEMA).text == first.text  # the schema is ignored


def test_loads_a_saved_model_lazily(tiny_chat_model: tuple[object, object], tmp_path) -> None:
    model, tokenizer = tiny_chat_model
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    sim = TransformersChatSimulator(tmp_path, device="cpu", max_new_tokens=30)
    assert sim.name == f"transformers:{tmp_path.name}"
    assert sim.cache_identity()["model"] == str(tmp_path)
    text = sim.generate(PROMPT, answer_schema=SCHEMA).text
    assert text.startswith("Sample_12: ")


def test_answer_continuations_follow_the_lines() -> None:
    schema = AnswerSchema(("12", "3"), ("not prime", "prime"))
    assert answer_continuations(schema, "") == ["Sample_12: not prime\n", "Sample_12: prime\n"]
    assert answer_continuations(schema, "Sample_12: ") == ["not prime\n", "prime\n"]
    assert answer_continuations(schema, "Sample_12: prime\nSample_3: not") == [" prime"]
    assert answer_continuations(schema, "Sample_12: prime\nSample_3: prime\n") == [""]
    assert answer_continuations(schema, "Sample_3: prime") is None
    assert answer_continuations(schema, "Sample_12: prime\nSample_3: prime\nmore") is None


def test_arguments_are_checked() -> None:
    with pytest.raises(InvalidParameterError, match="exactly one of the two"):
        TransformersChatSimulator()
    with pytest.raises(InvalidParameterError, match="'tokenizer' parameter of TransformersChatSimulator"):
        TransformersChatSimulator(model=object())
    with pytest.raises(InvalidParameterError, match="'max_new_tokens'"):
        TransformersChatSimulator("x", max_new_tokens=0)
