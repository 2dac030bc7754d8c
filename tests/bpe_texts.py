"""Sentences the tiny byte-level BPE tokenizer of the decoder tests is trained on, and which those tests
classify (every word of them is in the tokenizer's vocabulary)."""

BPE_TEXTS = [
    "the striker scored twice in the final",
    "shares fell after the bank cut its forecast",
    "a new chip doubles battery life",
    "ministers debated the budget late into the night",
    "ok",
    "the film won three awards, and the cast celebrated until dawn",
]
