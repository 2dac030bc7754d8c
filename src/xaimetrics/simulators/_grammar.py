"""GBNF grammars (llama.cpp) that force a ConSim answer into ``Sample_{id}: {class}`` lines."""

from __future__ import annotations

from xaimetrics._validation import invalid
from xaimetrics.simulators._base import AnswerSchema

__all__ = ["answer_grammar", "gbnf_literal"]


def gbnf_literal(text: str) -> str:
    """``text`` as a double-quoted GBNF string literal (quotes, backslashes and control characters escaped).

    Example:
        >>> print(gbnf_literal('say "hi"\\n'))
        "say \\"hi\\"\\n"
    """
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def answer_grammar(schema: AnswerSchema) -> str:
    """A GBNF grammar accepting exactly one ``Sample_{id}: {class}`` line per expected id, in order.

    Lines are separated by ``\\n`` and a final newline is optional; the class is one of ``schema.classes``
    verbatim, so a constrained model can neither skip a sample nor invent a label.

    Example:
        >>> print(answer_grammar(AnswerSchema(sample_ids=("4", "1"), classes=("Sci/Tech", "not prime"))))
        root ::= line-0 "\\n" line-1 "\\n"?
        line-0 ::= "Sample_4: " label
        line-1 ::= "Sample_1: " label
        label ::= "Sci/Tech" | "not prime"
    """
    if not isinstance(schema, AnswerSchema):
        raise invalid("schema", "answer_grammar", "an AnswerSchema", type(schema).__name__)
    n = len(schema.sample_ids)
    root = ' "\\n" '.join(f"line-{i}" for i in range(n))
    rules = [f'root ::= {root} "\\n"?']
    rules += [
        f"line-{i} ::= {gbnf_literal(f'Sample_{sid}: ')} label" for i, sid in enumerate(schema.sample_ids)
    ]
    rules.append("label ::= " + " | ".join(gbnf_literal(c) for c in schema.classes))
    return "\n".join(rules)
