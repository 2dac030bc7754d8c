"""A prompt type, a simulator kind and an extractor added through their registries alone reach the API, the
command line and a grid run, and leave nothing behind."""

from __future__ import annotations

import argparse
import json
import re

import numpy as np
import pytest

from benchmark.toy_grid import PROVIDER_KWARGS, ToyTopicModel, toy_dataset, toy_grid
from xaimetrics import cli
from xaimetrics._arguments import add_registry_argument
from xaimetrics.benchmark import Providers, ResultsStore, ranking_frame, run_grid
from xaimetrics.benchmark._grid import ranking_prompt
from xaimetrics.concepts import EXTRACTORS, ConceptExtractor, ExtractorKind, make_extractor
from xaimetrics.consim import (
    BALANCES,
    INTERPRETATIONS,
    PROMPT_TYPES,
    SCORINGS,
    BalanceKind,
    ConSim,
    Explanation,
    InterpretationKind,
    PromptContent,
    PromptSetting,
    PromptType,
    ScoringKind,
)
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import SIMULATORS, ScriptedSimulator, SimulatorKind, make_simulator

#: E3 without f's predictions on the LP samples: can the simulator learn f from the explanations alone?
E3NL = PromptType(PromptContent(global_explanations=True, lp_samples=True, lp_local=True))
PREDICTIONS_BLOCK = "The classes predicted for these examples are:"
LOCAL_BLOCK = "The concepts contributions for each example are:"
_EP_ID = re.compile(r"^Sample_(\d+):", re.MULTILINE)


class TopVariance(ConceptExtractor):
    """Concepts are the ``n_concepts`` neurons of largest variance; the others stay at their mean."""

    def _fit(self, A):
        data = np.asarray(A.detach().cpu() if hasattr(A, "detach") else A, dtype=np.float64)
        k = self._resolve_n_concepts(data.shape[1], "the activation width")
        self.keep_ = np.sort(np.argsort(-data.var(axis=0), kind="stable")[:k])
        bias = data.mean(axis=0)
        bias[self.keep_] = 0.0
        self._set_decoder(np.eye(data.shape[1])[self.keep_], bias)

    def _encode(self, A):
        return A[:, list(self.keep_)]


def constant_simulator(argument, options):
    """Answers every evaluation sample of a prompt with the class named in the spec (``constant:<class>``)."""
    return ScriptedSimulator(
        lambda messages: "\n".join(f"Sample_{i}: {argument}" for i in _EP_ID.findall(messages[-1].content)),
        name=f"constant-{argument}",
    )


@pytest.fixture
def registered():
    with (
        PROMPT_TYPES.temporarily("E3nl", E3NL, description="E3 without f's predictions on the LP samples"),
        SIMULATORS.temporarily("constant", SimulatorKind(constant_simulator, argument="class")),
        EXTRACTORS.temporarily("TopVariance", ExtractorKind(TopVariance)),
    ):
        yield


def test_the_registered_names_reach_the_api(registered) -> None:
    setting = PromptSetting.parse("e3NL-a")
    assert (setting.name, setting.anonymized, setting.label) == ("E3nl", True, "E3nl-a")
    parsed = PromptSetting.parse("E3nl")
    kind = parsed.kind
    assert kind is PROMPT_TYPES.get("E3nl") and not parsed.anonymized and kind.is_ranked
    assert kind.baseline.name == "NE2" and ranking_prompt("NE2") == ("E2", "E3", "E3nl")

    model, train, test = ToyTopicModel(), toy_dataset("train"), toy_dataset("test")
    activations = model.activations(train.texts)
    extractor = make_extractor("topvariance", 3, random_state=0).fit(activations)
    assert isinstance(extractor, TopVariance)
    kept = activations[:, list(extractor.keep_)].numpy()
    np.testing.assert_allclose(extractor.encode(activations).numpy(), kept)
    explanation = Explanation(
        extractor=extractor, interpretation={0: "first", 1: "second", 2: "third"}, activations=activations
    )
    consim = ConSim(
        model, make_simulator("constant:world"), class_names=test.class_names, explanation=explanation
    )
    samples = consim.select_examples(test.texts, test.labels, n_lp=6, n_ep=6, seed=0, balance="relaxed")
    e3 = consim.build_prompt(samples, prompt_type="E3")
    mine = consim.build_prompt(samples, prompt_type="E3nl")
    # rendering follows the content: E3's prompt minus f's LP predictions (and their mention in the task)
    e3_blocks = e3.messages[0].content.split("\n\n")
    e3_blocks[0] = e3_blocks[0].replace(
        "examples of samples, labels, and concepts' contributions to labels",
        "examples of samples and concepts' contributions",
    )
    assert mine.messages[0].content.split("\n\n") == [
        b for b in e3_blocks if not b.startswith(PREDICTIONS_BLOCK)
    ]
    assert "labels" not in mine.messages[0].content.split("\n\n")[0]
    assert LOCAL_BLOCK in mine.messages[0].content and PREDICTIONS_BLOCK in e3.messages[0].content
    assert mine.messages[1] == e3.messages[1] and mine.label == "E3nl"
    result = consim.evaluate(samples, prompt_type="E3nl")
    world = test.class_names.index("world")
    assert result.label == "E3nl" and result.n_parsed == 6
    assert result.score == pytest.approx(float(np.mean(samples.ep_predictions == world)))


def _consim(monkeypatch, tmp_path, *args: str) -> int:
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("xaimetrics.consim._command",))
    monkeypatch.setenv("XAIMETRICS_CACHE_DIR", str(tmp_path / "cache"))
    common = [
        "--dataset", "rotten_tomatoes", "--device", "cpu", "--n-lp", "6", "--n-ep", "6", "--fit-samples", "150",
        "--pool-samples", "120", "--n-concepts", "3", "--min-frequency", "3", "--balance", "relaxed",
    ]  # fmt: skip
    return cli.main(["consim", *common, *args])


def test_the_registered_names_reach_the_command_line(
    registered, tiny_model_dir, monkeypatch, tmp_path, capsys
) -> None:
    model = ["--model", str(tiny_model_dir)]
    args = ["--method", "topvariance", "--prompt-type", "E3nl-a", "--baseline", "--dry-run"]
    assert _consim(monkeypatch, tmp_path, *model, *args) == 0
    captured = capsys.readouterr()
    assert "Fitting TopVariance with 3 concepts" in captured.err
    baseline, mine = captured.out.split("===== E3nl-a =====")
    assert "===== NE2-a =====" in baseline and PREDICTIONS_BLOCK in baseline  # the derived baseline
    assert LOCAL_BLOCK in mine and PREDICTIONS_BLOCK not in mine and "Class_0" in mine

    args = ["--prompt-type", "NE2", "--simulator", "constant:positive", "--json"]
    assert _consim(monkeypatch, tmp_path, *model, *args) == 0
    (record,) = json.loads(capsys.readouterr().out)
    references = list(record["references"].values())
    assert record["raw_answer"].count(": positive") == 6
    assert record["score"] == pytest.approx(float(np.mean(np.array(references) == "positive")))

    with pytest.raises(SystemExit):
        _consim(monkeypatch, tmp_path, "--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "TopVariance" in help_text and "E3nl" in help_text and "constant:<class>" in help_text


def test_the_registered_names_reach_a_grid_run(registered, tmp_path) -> None:
    grid = toy_grid(
        methods=("TopVariance", "PCA", "NoExplanation"), prompt_types=("NE2", "E2", "E3nl"), seeds=(0, 1),
        simulators=("constant:world",),
    )  # fmt: skip
    summary = run_grid(grid, tmp_path / "r.sqlite", providers=Providers(**PROVIDER_KWARGS), progress=False)
    with ResultsStore(tmp_path / "r.sqlite") as store:
        frame = store.to_frame()
        payloads = [store.payload(key)["result"] for key in frame["key"]]
    assert summary.completed == len(frame) == len(grid.settings()) == 2 * (2 * 2 + 1) and summary.failed == 0
    assert set(frame["method"]) == {"TopVariance", "PCA", "NoExplanation"}
    assert set(frame["prompt_type"]) == {"NE2", "E2", "E3nl"} and set(frame["simulator"]) == {
        "constant:world"
    }
    for score, result in zip(frame["score"], payloads, strict=True):
        assert score == pytest.approx(
            float(np.mean(np.array(list(result["references"].values())) == "world"))
        )
        system = result["messages"][0]["content"]
        assert (PREDICTIONS_BLOCK in system) == (result["prompt_type"] != "E3nl")
    long = ranking_frame(frame)
    assert set(long["prompt_type"]) == {"E2", "E3nl"}
    assert set(long.loc[long["prompt_type"] == "E3nl", "method"]) == {"TopVariance", "PCA", "NoExplanation"}


def test_choices_list_the_registered_names_and_forget_them_afterwards() -> None:
    cases = [
        ({"prompt_types": ("NE2", "E9")}, r"'prompt_types' parameter of Grid must be one of NE1, .*U1, E3nl"),
        ({"simulators": ("gpt",)}, r"'simulators' parameter of Grid must be among .*'constant:<class>'"),
        ({"methods": ("LDA",)}, r"'methods' parameter of Grid must be among .*'TopVariance'"),
    ]
    with (
        PROMPT_TYPES.temporarily("E3nl", E3NL),
        SIMULATORS.temporarily("constant", SimulatorKind(constant_simulator, argument="class")),
        EXTRACTORS.temporarily("TopVariance", ExtractorKind(TopVariance)),
    ):
        for changes, message in cases:
            with pytest.raises(InvalidParameterError, match=message):
                toy_grid(**changes)
        with pytest.raises(InvalidParameterError, match="'spec' parameter of make_simulator"):
            make_simulator("constant")  # the class is required
    assert "E3nl" not in PROMPT_TYPES and "constant" not in SIMULATORS and "TopVariance" not in EXTRACTORS
    for changes, message in cases:
        with pytest.raises(InvalidParameterError) as error:
            toy_grid(**changes)
        assert not re.search(message, str(error.value))
    with pytest.raises(InvalidParameterError, match=r"one of NE1, E1, NE2, E2, E3, U1 \(optionally"):
        toy_grid(prompt_types=("NE2", "E2", "E3nl"))
    with pytest.raises(InvalidParameterError, match=r"Got constant:world\."):
        toy_grid(simulators=("constant:world",))


def test_bad_registrations_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="without the '-a' / '_a' suffix"):
        PROMPT_TYPES.register("E5-a", PromptType(PromptContent(global_explanations=True)))
    with pytest.raises(InvalidParameterError, match=r"'baseline_name'.*a registered baseline prompt type"):
        PROMPT_TYPES.register("E5", PromptType(PromptContent(global_explanations=True), baseline_name="E2"))
    with pytest.raises(InvalidParameterError, match="a PromptType"):
        PROMPT_TYPES.register("E5", PromptContent(global_explanations=True))  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="'lp_local' parameter of PromptContent"):
        PromptContent(global_explanations=True, lp_local=True)
    assert "E5" not in PROMPT_TYPES
    with PROMPT_TYPES.temporarily("E1", E3NL, replace=True):  # a built-in replaced for a while comes back
        assert PROMPT_TYPES.get("E1").content.lp_local
    assert not PROMPT_TYPES.get("E1").content.lp_local and PROMPT_TYPES.names()[1] == "E1"


def test_human_is_a_simulator_kind_for_one_setting_but_not_for_a_grid(tmp_path) -> None:
    import io

    from xaimetrics.benchmark import Grid
    from xaimetrics.simulators import AnswerSchema, ChatMessage
    from xaimetrics.simulators._scripted import HumanSimulator

    typed = io.StringIO("Sample_1: world\n\n")
    human = make_simulator("Human", cache=tmp_path / "responses.sqlite", stdin=typed, stdout=io.StringIO())
    assert isinstance(human, HumanSimulator)  # a person's answers are never replayed from the cache
    schema = AnswerSchema(("1",), ("sport", "world"))
    assert (
        human.generate([ChatMessage("user", "Sample_1: x")], answer_schema=schema).text == "Sample_1: world"
    )
    assert not (tmp_path / "responses.sqlite").exists()
    with pytest.raises(
        InvalidParameterError, match=r"'simulators' parameter of Grid.*xaimetrics study create"
    ):
        Grid(methods=("PCA",), prompt_types=("E2",), simulators=("human",))


@pytest.mark.parametrize(
    ("registry", "key", "value", "kind"),
    [
        (INTERPRETATIONS, "interpretations", ("exemplars",), INTERPRETATIONS.get("top_words")),
        (SCORINGS, "scoring", "exemplars", SCORINGS.get("accuracy")),
        (BALANCES, "balance", "exemplars", BALANCES.get("strict")),
    ],
)
def test_interpretations_scorings_and_balance_modes_are_read_from_their_registries(
    registry, key, value, kind
) -> None:
    listed = ", ".join(repr(name) for name in registry.names())
    with registry.temporarily("exemplars", kind, description="the nearest training texts"):
        assert getattr(toy_grid(**{key: value}), key) == value
        with pytest.raises(
            InvalidParameterError, match=rf"'{key}' parameter of Grid must be among {listed}, 'exemplars'"
        ):
            toy_grid(**{key: "lime" if isinstance(value, str) else ("lime",)})
        parser = argparse.ArgumentParser()
        add_registry_argument(parser, "--scoring", SCORINGS, default="accuracy")
        assert ("exemplars" in parser.format_help()) == (registry is SCORINGS)
    with pytest.raises(
        InvalidParameterError, match=rf"'{key}' parameter of Grid must be among {listed}\. Got exemplars"
    ):
        toy_grid(**{key: value})


def test_each_name_has_one_spelling_across_the_grid_and_the_command_line() -> None:
    """The command line offers exactly the registries' names (no second spelling such as 'words' or 'llm')."""
    parser = argparse.ArgumentParser()
    add_registry_argument(parser, "--scoring", SCORINGS, default="accuracy")
    (action,) = [a for a in parser._actions if a.dest == "scoring"]
    assert tuple(action.choices) == SCORINGS.names() == ("accuracy", "probability")
    assert all(not entry.aliases for entry in EXTRACTORS.entries()) and "none" not in EXTRACTORS
    assert INTERPRETATIONS.names() == ("top_words", "llm_labels") and BALANCES.names() == (
        "strict",
        "relaxed",
    )
    assert [
        (e.name, e.aliases) for e in (*INTERPRETATIONS.entries(), *SCORINGS.entries(), *BALANCES.entries())
    ] == [(name, ()) for name in (*INTERPRETATIONS.names(), *SCORINGS.names(), *BALANCES.names())]


def test_a_registered_interpretation_scoring_and_balance_mode_run_their_own_functions() -> None:
    """The callers ask the entry what to do: no name is compared anywhere on the way."""
    from xaimetrics.benchmark._budget import estimate_tokens
    from xaimetrics.consim import interpret_concepts, select_examples
    from xaimetrics.consim._scoring import answer_schema
    from xaimetrics.simulators import AnswerSchema

    seen = []

    def exemplars(inputs):
        seen.append(list(inputs.texts))
        return {0: {"label": "the nearest training texts"}}

    kind = InterpretationKind(exemplars, lambda: {"label": "x" * 400}, asks_simulator=True)
    with INTERPRETATIONS.temporarily("exemplars", kind):
        assert interpret_concepts("exemplars", ["a", "b"], model=None, extractor=None) == {
            0: {"label": "the nearest training texts"}
        }
        grid = toy_grid(interpretations=("top_words", "exemplars"))
        longer = estimate_tokens(grid, [s for s in grid.settings() if s.interpretation == "exemplars"])
        shorter = estimate_tokens(grid, [s for s in grid.settings() if s.interpretation == "top_words"])
    assert seen == [["a", "b"]]
    assert longer["prompt"] > shorter["prompt"]  # the stand-in of 400 characters per concept is counted

    def schema_with_classes_reversed(schema):
        return AnswerSchema(schema.sample_ids, tuple(reversed(schema.classes)))

    with SCORINGS.temporarily("reversed", ScoringKind(schema_with_classes_reversed)):

        class Prompt:
            answer_schema = AnswerSchema(("0",), ("no", "yes"))

        assert answer_schema(Prompt(), "reversed").classes == ("yes", "no")  # type: ignore[arg-type]

    def two_right_of_the_first_class(quotas, available, names, error):
        assert quotas.tolist() == [[1, 1], [1, 1]] and available.tolist() == [[3, 0], [2, 1]]
        return np.array([[2, 0], [1, 1]]), ("mine",)

    with BALANCES.temporarily("greedy", BalanceKind(two_right_of_the_first_class, relaxed=True)):
        samples = select_examples(
            ["a", "b", "c", "d", "e", "f"], [0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0], n_lp=2, n_ep=2,
            balance="greedy",  # type: ignore[arg-type]
        )  # fmt: skip
    assert samples.selection is not None and samples.selection.notes == ("mine",)
    assert samples.selection.chosen.tolist() == [[2, 0], [1, 1]]
