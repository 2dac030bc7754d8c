"""TransformersChatSimulator class probabilities: continuations, prefix reuse = no reuse, no leak between samples.

Tiny random-weight Qwen2 and Llama models with an offline byte-level BPE tokenizer built in the test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from xaimetrics.simulators import AnswerSchema, ChatMessage, TransformersChatSimulator
from xaimetrics.simulators._probabilities import check_probabilities

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
TASK = ChatMessage("system", "Classify each sample. Answer 'Sample_<id>: <class>'.")
PROMPT = [TASK, ChatMessage("user", "Sample_12: twelve is even\nSample_3: a new chip")]
OTHER = [TASK, ChatMessage("user", "Sample_12: a fine film\nSample_3: not a prime")]  # same task prefix
# "prime" is a prefix of no other line here, but Class_1 / Class_10 need the newline terminator
SCHEMAS = [
    AnswerSchema(("12", "3"), ("not prime", "Sci/Tech", "prime"), probabilities=True),
    AnswerSchema(("12", "3"), ("Class_1", "Class_10", "Class_2"), probabilities=True),
]
TOLERANCE = 1e-4  # reuse vs. no reuse: float32 attention over a cache vs. the whole sequence


def _tokenizer() -> object:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<|end|>", "<|system|>", "<|user|>", "<|assistant|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus = ["Sample_12: not prime", "Sample_3: Sci/Tech", "Sample_3: Class_10", "a fine film"] * 20
    tokenizer.train_from_iterator(corpus, trainer)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<|end|>", pad_token="<|end|>"
    )
    fast.chat_template = TEMPLATE
    return fast


@pytest.fixture(scope="module", params=["qwen2", "llama"])
def tiny_model(request: pytest.FixtureRequest) -> tuple[object, object]:
    tokenizer = _tokenizer()
    torch.manual_seed(0)
    common = {
        "vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512,
        "eos_token_id": tokenizer.eos_token_id, "bos_token_id": tokenizer.eos_token_id,
    }  # fmt: skip
    if request.param == "qwen2":
        model = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**common))
    else:
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**common))
    return model.eval(), tokenizer


def _simulator(tiny_model: tuple[object, object], **kwargs: object) -> TransformersChatSimulator:
    model, tokenizer = tiny_model
    return TransformersChatSimulator(model=model, tokenizer=tokenizer, device="cpu", **kwargs)  # type: ignore[arg-type]


def _reference(tiny_model: tuple[object, object], messages: list[ChatMessage], schema: AnswerSchema) -> dict:
    """p(class) from one full forward pass over prompt + the whole answer line, per class (no cache at all)."""
    model, tokenizer = tiny_model
    prompt = list(
        tokenizer.apply_chat_template(
            [m.as_dict() for m in messages], add_generation_prompt=True, return_dict=True
        )["input_ids"]
    )
    out = {}
    for sample_id in schema.sample_ids:
        lines = [
            tokenizer.encode(f"Sample_{sample_id}: {c}", add_special_tokens=False) for c in schema.classes
        ]
        if any(a != b and b[: len(a)] == a for a in lines for b in lines):  # a line prefixes another
            lines = [
                tokenizer.encode(f"Sample_{sample_id}: {c}\n", add_special_tokens=False)
                for c in schema.classes
            ]
        shared = 0
        while all(len(line) > shared and line[shared] == lines[0][shared] for line in lines):
            shared += 1
        scores = []
        for line in lines:
            ids = torch.tensor([prompt + line])
            with torch.no_grad():
                log_probs = torch.log_softmax(model(input_ids=ids).logits[0].double(), dim=-1)
            positions = range(len(prompt) + shared, len(prompt) + len(line))
            scores.append(sum(float(log_probs[p - 1, ids[0, p]]) for p in positions))
        weights = np.exp(np.array(scores) - max(scores))
        out[sample_id] = tuple(weights / weights.sum())
    return out


@pytest.mark.parametrize("schema", SCHEMAS, ids=["words", "anonymised"])
def test_probabilities_match_a_full_forward_pass_and_the_text(tiny_model, schema: AnswerSchema) -> None:
    response = _simulator(tiny_model).generate(PROMPT, answer_schema=schema)
    assert response.error is None and response.completion_tokens == 0
    checked = check_probabilities(response.probabilities, schema, "test")
    expected = _reference(tiny_model, PROMPT, schema)
    for sample_id in schema.sample_ids:
        assert checked[sample_id] == pytest.approx(expected[sample_id], abs=TOLERANCE)
    argmax = [schema.classes[int(np.argmax(checked[i]))] for i in schema.sample_ids]
    assert response.text == "\n".join(
        f"Sample_{i}: {c}" for i, c in zip(schema.sample_ids, argmax, strict=True)
    )


def test_prefix_reuse_equals_no_reuse_across_prompts(tiny_model) -> None:
    reuse, fresh = _simulator(tiny_model), _simulator(tiny_model, prefix_reuse=False)
    for messages, schema in [
        (PROMPT, SCHEMAS[0]),
        (OTHER, SCHEMAS[1]),
        (PROMPT, SCHEMAS[1]),
        (OTHER, SCHEMAS[0]),
    ]:
        a = reuse.generate(messages, answer_schema=schema)
        b = fresh.generate(messages, answer_schema=schema)
        for sample_id in schema.sample_ids:
            assert a.probabilities[sample_id] == pytest.approx(b.probabilities[sample_id], abs=TOLERANCE)
        assert a.text == b.text
        assert a.prompt_tokens < b.prompt_tokens  # fewer tokens computed
        # the prompt's cache holds exactly the prompt afterwards: no sample's tokens stay in it
        tokens, cache = reuse._prefix_state
        assert cache.get_seq_length() == len(tokens)
    assert reuse._prefix_state is not None and fresh._prefix_state is None


def test_shared_prefix_is_not_read_again(tiny_model) -> None:
    sim = _simulator(tiny_model)
    first = sim.generate(PROMPT, answer_schema=SCHEMAS[0])
    second = sim.generate(OTHER, answer_schema=SCHEMAS[0])
    again = sim.generate(OTHER, answer_schema=SCHEMAS[0])
    assert second.prompt_tokens < first.prompt_tokens  # the task text came from the previous prompt
    assert again.metadata["prompt_tokens_total"] == second.metadata["prompt_tokens_total"]
    assert again.prompt_tokens < second.prompt_tokens
    for sample_id, values in second.probabilities.items():
        assert again.probabilities[sample_id] == pytest.approx(values, abs=TOLERANCE)


def test_no_sample_is_conditioned_on_another(tiny_model) -> None:
    sim = _simulator(tiny_model)
    both = sim.generate(PROMPT, answer_schema=SCHEMAS[1]).probabilities
    alone = sim.generate(PROMPT, answer_schema=AnswerSchema(("3",), SCHEMAS[1].classes, probabilities=True))
    reordered = sim.generate(
        PROMPT, answer_schema=AnswerSchema(("3", "12"), SCHEMAS[1].classes, probabilities=True)
    )
    assert alone.probabilities["3"] == pytest.approx(both["3"], abs=1e-6)
    assert reordered.probabilities["12"] == pytest.approx(both["12"], abs=1e-6)
    assert math.isclose(sum(both["12"]), 1.0)


def test_prefix_reuse_uses_the_supported_cache_api(tiny_model) -> None:
    """No deprecation of the tuple/``past_key_values`` API: the DynamicCache goes through the supported
    argument (``cache`` in transformers 5, ``past_key_values`` in 4, where it is not deprecated)."""
    import warnings

    sim = _simulator(tiny_model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for schema in SCHEMAS:
            assert sim.generate(PROMPT, answer_schema=schema).error is None
    deprecations = [str(w.message) for w in caught if "past_key_values" in str(w.message)]
    assert deprecations == []
