"""The acceptance floor, in a real headless Chromium: two participants complete a simulatability study and three
annotators a Likert study; the exports equal what was clicked; α and the agreement report come from them; a
restart between two answers loses nothing; payloads in texts and class names stay inert. Screenshots of every
screen kind are taken here (docs/studies.md shows them)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import requests
from study_helpers import ThreadServer, cli_server, free_port, screenshot, study_grid
from toy_grid import PROVIDERS

from xaimetrics.benchmark import ResultsStore, ranking_frame, rankings_by, run_grid
from xaimetrics.representation import analyze_ratings, krippendorff_alpha
from xaimetrics.studies import (
    LikertStudy,
    SimulatabilityStudy,
    StudyConfig,
    StudyStore,
    agreement_report,
    export_results,
    likert_study_from_grid,
    save_study,
    simulatability_study_from_grid,
)
from xaimetrics.studies._config import write_config
from xaimetrics.studies._likert import Dimension, RatingItem
from xaimetrics.studies._results import answers_frame, likert_ratings
from xaimetrics.studies._simulatability import MethodExplanation, SampleSet, StudyArm

#: how many of an arm's six questions each participant answers with the model's prediction
RIGHT = {"NMF": 5, "PCA": 3, "NoExplanation": 1}
DESKTOP = {"width": 1100, "height": 900}
PHONE = {"width": 390, "height": 844}


def _fits_width(page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"))


def _press(page, key: str) -> None:
    """Press a key that submits the page's form, and wait for the next page."""
    with page.expect_navigation():
        page.keyboard.press(key)


def _click(page, selector: str) -> None:
    """Click a button that submits the page's form, and wait for the next page."""
    with page.expect_navigation():
        page.click(selector)


def _take_part(page, store, study, participant, *, keyboard: bool, shots=None) -> dict[str, dict[str, int]]:
    """Go through every screen; return ``{arm: {sample: class id}}`` as clicked (or typed)."""
    sequence = store.screens(participant)
    clicked: dict[str, dict[str, int]] = {}
    seen: set[str] = set()
    while not page.url.endswith("/study"):
        screen = sequence[int(page.url.rsplit("/", 1)[1])]
        if shots is not None and screen.kind not in seen:
            seen.add(screen.kind)
            shots(page, screen.kind)
        if screen.kind in ("instructions", "learn"):
            _press(page, "Enter") if keyboard else _click(page, "button[type=submit]")
            continue
        arm = study.arm(screen.arm)
        sample = next(s for s in study.sample_set(arm.seed).ep if s.id == screen.sample)
        value = sample.prediction if screen.number <= RIGHT[arm.method] else (sample.prediction + 1) % 3
        clicked.setdefault(screen.arm, {})[screen.sample] = value
        if keyboard:
            _press(page, str(value + 1))
        else:
            _click(page, f"button[name=answer][value='{value}']")
    assert "Thank you" in page.inner_text("h1")
    return clicked


def test_two_participants_complete_a_simulatability_study(chromium, tmp_path):
    grid = study_grid()
    results = tmp_path / "results.sqlite"
    run_grid(grid, results, providers=PROVIDERS, progress=False)  # the LLM ("oracle") on the same settings
    study = simulatability_study_from_grid(grid, PROVIDERS, arms_per_participant=3)
    store = StudyStore(tmp_path / "answers.sqlite", study)
    first, second = store.invite(), store.invite()
    # the Latin square: each person meets the three conditions on three seeds; on each seed two methods meet
    assert first.participant.plan == ("NMF-3/E2-a/seed0", "PCA-3/E2-a/seed1", "NoExplanation/NE2-a/seed2")
    assert second.participant.plan == ("PCA-3/E2-a/seed0", "NoExplanation/NE2-a/seed1", "NMF-3/E2-a/seed2")

    def shots(page, kind):
        screenshot(page, f"simulatability-{kind}", tmp_path)

    with ThreadServer(study, store) as server:
        desktop = chromium.new_context(viewport=DESKTOP)
        phone = chromium.new_context(viewport=PHONE, has_touch=True)
        page1, page2 = desktop.new_page(), phone.new_page()
        errors: list[str] = []
        for page in (page1, page2):
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page1.goto(first.url(server.url))
        clicks1 = _take_part(page1, store, study, first.participant, keyboard=True, shots=shots)
        screenshot(page1, "simulatability-done", tmp_path)
        page2.goto(second.url(server.url))
        page2.wait_for_selector("button[type=submit]")
        assert _fits_width(page2)
        _click(page2, "button[type=submit]")
        _click(page2, "button[type=submit]")  # the learn screen of PCA E2-a
        assert _fits_width(page2)
        screenshot(page2, "simulatability-question-phone", tmp_path)
        clicks2 = _take_part(page2, store, study, second.participant, keyboard=False)
        assert errors == []  # the CSP lets the page's own script run, and nothing else
        desktop.close()
        phone.close()

    # the exports equal what was clicked
    answers = answers_frame(study, store)
    questions = answers[answers["kind"] == "question"]
    for label, clicks in (("P1", clicks1), ("P2", clicks2)):
        mine = questions[questions["participant"] == label]
        assert len(mine) == 18
        for subject, value in zip(mine["subject"], mine["value"], strict=True):
            arm, sample = subject.rsplit("/", 1)
            assert clicks[arm][sample] == value
    assert export_results(study, store, results) == 6
    store_rows = ResultsStore(results)
    humans = [r for r in store_rows.rows() if r["simulator"] == "human"]
    by_method: dict[str, list[float]] = {}
    for row in humans:
        payload = store_rows.payload(row["key"])
        (entry,) = payload["participants"]
        clicks = clicks1 if entry["participant"] == "P1" else clicks2
        arm = payload["study"]["arm"]
        names = study.class_names
        assert entry["result"]["answers"] == {s: names[v] for s, v in clicks[arm].items()}
        assert row["score"] == pytest.approx(RIGHT[row["method"]] / 6)
        by_method.setdefault(row["method"], []).append(row["score"])
    # the benchmark's rankings read the human rows like any simulator's
    rankings = rankings_by(ranking_frame(store_rows.to_frame()), ["simulator"])
    assert list(rankings[("human",)].index) == ["NMF", "PCA", "NoExplanation"]
    store_rows.close()

    report = agreement_report(results)
    assert report.simulators == ("oracle",)
    assert report.correlations.loc["oracle", "spearman"] == pytest.approx(1.0)
    assert report.correlations.loc["oracle", "kendall"] == pytest.approx(1.0)
    assert report.n_participants == 2 and report.n_answers == 36
    # α between the two people over the same texts, recomputed here from the clicks
    units: dict[tuple[int, str], list[float]] = {}
    for plan, clicks, column in ((first.participant.plan, clicks1, 0), (second.participant.plan, clicks2, 1)):
        for arm in plan:
            for sample, value in clicks[arm].items():
                units.setdefault((study.arm(arm).seed, sample), [np.nan, np.nan])[column] = value
    expected = krippendorff_alpha(np.array(list(units.values())), orientation="units_coders", level="nominal")
    assert report.alpha_same_text.alpha == pytest.approx(expected.alpha)
    assert report.alpha_same_arm is not None and np.isnan(report.alpha_same_arm.alpha)  # nobody shared an arm
    markdown = report.to_markdown()
    assert "Does the LLM rank explanations like people?" in markdown and "| oracle | NMF |" in markdown


def _rating(item: int, dimension: int, annotator: int) -> int:
    """Annotators mostly agree (a shared base rating), with a different deviation each."""
    base = 1 + (2 * item + 3 * dimension) % 5
    return int(np.clip(base + (annotator == 2) * (item % 2) - (annotator == 1) * (dimension == 2), 1, 5))


def test_three_annotators_complete_a_likert_study(chromium, tmp_path):
    study = likert_study_from_grid(study_grid(), PROVIDERS, method="NMF", n_examples=5, n_annotators=3)
    store = StudyStore(tmp_path / "answers.sqlite", study)
    admin = store.new_admin_token()
    with ThreadServer(study, store) as server:
        context = chromium.new_context(viewport=DESKTOP)
        page = context.new_page()
        page.goto(f"{server.url}/admin")
        assert "Access denied" in page.inner_text("h1")
        screenshot(page, "denied", tmp_path)
        page.goto(f"{server.url}/admin/login")
        screenshot(page, "admin-login", tmp_path)
        page.fill("input[name=token]", admin)
        _click(page, "button[type=submit]")
        page.fill("input[name=count]", "3")
        _click(page, "form[action='/admin/invite'] button")
        links = [cell.inner_text() for cell in page.query_selector_all("code")]
        assert len(links) == 3 and all(link.startswith(f"{server.url}/s/") for link in links)
        page.reload()  # reloading the page of the new links invites nobody again
        assert [cell.inner_text() for cell in page.query_selector_all("code")] == links
        assert len(store.participants()) == 3
        screenshot(page, "admin", tmp_path)
        context.close()

        given = np.full((5, 3, len(study.dimensions)), np.nan)
        for a, link in enumerate(links):
            context = chromium.new_context(viewport=PHONE if a == 2 else DESKTOP)
            page = context.new_page()
            page.goto(link)
            participant = store.participant(link.rsplit("/", 1)[1])
            sequence = store.screens(participant)
            if a == 0:
                screenshot(page, "likert-instructions", tmp_path)
            _press(page, "Enter")
            while not page.url.endswith("/study"):
                screen = sequence[int(page.url.rsplit("/", 1)[1])]
                item = [i.id for i in study.items].index(screen.item)
                if a == 2 and screen.number == 1:
                    assert _fits_width(page)
                    screenshot(page, "likert-rate-phone", tmp_path)
                for d in range(len(study.dimensions)):
                    rating = _rating(item, d, a)
                    given[item, a, d] = rating
                    if a == 1:
                        page.check(f"input[name=d{d}][value='{rating}']")
                    else:  # keyboard only: the number keys rate the highlighted dimension in turn
                        page.keyboard.press(str(rating))
                    if a == 0 and screen.number == 1 and d == 0:  # rated, and the next one highlighted
                        assert page.is_checked(f"input[name=d0][value='{rating}']")
                        assert "active" in page.get_attribute("fieldset.rating >> nth=1", "class")
                        screenshot(page, "likert-rate", tmp_path)
                _press(page, "Enter") if a != 1 else _click(page, "button[type=submit]")
            context.close()

    ratings = likert_ratings(study, store)
    assert ratings.annotators == ("P1", "P2", "P3")
    np.testing.assert_array_equal(ratings.ratings, given)  # the export equals what was clicked
    path = ratings.save(tmp_path / "annotations" / "ratings.json")
    cube = np.array(json.loads(path.read_text()), dtype=float)
    np.testing.assert_array_equal(cube, given)
    evaluation = analyze_ratings(cube)
    flat = given.transpose(1, 0, 2).reshape(3, -1)  # annotators × (item, dimension) units
    import krippendorff

    assert evaluation.alpha.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=flat, level_of_measurement="ordinal")
    )
    frame = ratings.frame()
    assert len(frame) == given.size and analyze_ratings(frame).alpha.alpha == pytest.approx(
        evaluation.alpha.alpha
    )


PAYLOADS = (
    "<script>window.__xss = 1</script>",
    '<img src=x onerror="window.__xss = 2">',
    '"><svg onload="window.__xss = 3">',
)


def test_payloads_in_texts_and_class_names_stay_inert(chromium, tmp_path):
    classes = [PAYLOADS[0], PAYLOADS[1]]
    samples = SampleSet.from_texts(
        0, [PAYLOADS[2], "plain text"], [0, 1], [PAYLOADS[0] + " late goal", PAYLOADS[1]], [1, 0]
    )
    explanation = MethodExplanation(
        method="NMF", seed=0, n_concepts=2, concepts={0: {"aligned": [PAYLOADS[1]]}, 1: {"label": PAYLOADS[2]}},
        global_importances=np.array([[0.9, -0.2], [-0.3, 0.8]]), lp_local=np.array([[0.5, 0.1], [0.1, 0.7]]),
        ep_local=np.array([[0.5, 0.1], [0.1, 0.7]]),
    )  # fmt: skip
    arms = [StudyArm("NMF", "U1", False, 0, n_concepts=2)]
    study = SimulatabilityStudy(classes, [samples], [explanation], arms, title=PAYLOADS[1])
    likert = LikertStudy(
        [Dimension(PAYLOADS[0], PAYLOADS[1], description=PAYLOADS[2], low=PAYLOADS[0], high=PAYLOADS[1])],
        [RatingItem("0", PAYLOADS[2], (0.5,)), RatingItem("1", PAYLOADS[0], (-0.5,))], title=PAYLOADS[2],
        instructions=PAYLOADS[1],
    )  # fmt: skip
    for bundle, name in ((study, "sim"), (likert, "likert")):
        store = StudyStore(tmp_path / f"{name}.sqlite", bundle)
        invite = store.invite()
        admin = store.new_admin_token()
        with ThreadServer(bundle, store) as server:
            context = chromium.new_context(viewport=DESKTOP, extra_http_headers={})
            page = context.new_page()
            dialogs: list[str] = []

            def on_dialog(dialog, seen=dialogs):
                seen.append(dialog.message)
                dialog.dismiss()

            page.on("dialog", on_dialog)
            page.goto(invite.url(server.url))
            texts = []
            while not page.url.endswith("/study"):
                assert page.evaluate("window.__xss") is None
                assert page.evaluate("document.querySelectorAll('script').length") == 1  # ours only
                assert page.query_selector("img[src=x], svg") is None
                texts.append(page.inner_text("body"))
                if page.query_selector("fieldset.rating"):
                    page.check("input[name=d0][value='2']")
                    _click(page, "button[type=submit]")
                elif page.query_selector("button[name=answer]"):
                    _click(page, "button[name=answer]")
                else:
                    _click(page, "button[type=submit]")
            page.set_extra_http_headers({"Authorization": f"Bearer {admin}"})
            page.goto(f"{server.url}/admin")
            assert page.evaluate("window.__xss") is None and page.query_selector("img[src=x], svg") is None
            texts.append(page.inner_text("body"))
            context.close()
        shown = "\n".join(texts)
        assert dialogs == []
        for payload in PAYLOADS:  # shown as text, literally
            assert payload in shown, payload
        store.close()


def test_a_server_restart_between_two_answers_loses_nothing(chromium, tmp_path):
    study = simulatability_study_from_grid(study_grid(seeds=(0,)), PROVIDERS, methods=["NoExplanation"])
    bundle = save_study(study, tmp_path / "study.json")
    config = write_config(StudyConfig(bundle), tmp_path / "study.toml")
    with StudyStore(tmp_path / "study.sqlite", study) as store:
        invite = store.invite()
    port = free_port()
    context = chromium.new_context(viewport=DESKTOP)
    page = context.new_page()
    with cli_server(config, port) as server:
        assert "server" not in {k.lower() for k in requests.get(f"http://127.0.0.1:{port}/").headers}
        page.goto(invite.url(f"http://127.0.0.1:{port}"))
        _click(page, "button[type=submit]")  # instructions
        _click(page, "button[type=submit]")  # learn: the LP samples
        _click(page, "button[name=answer][value='2']")  # first answer
        assert page.url.endswith("/study/3")
        server.kill()  # SIGKILL: no shutdown handler runs
        server.wait()
    with StudyStore(tmp_path / "study.sqlite", study) as store:  # committed before the next screen was served
        participant = store.participant(invite.token)
        assert store.answers(participant)[2] == {"": 2}
    with cli_server(config, port):
        # the page rendered before the restart posts to the new server (the CSRF secret is stored)
        _click(page, "button[name=answer][value='1']")
        page.goto(f"http://127.0.0.1:{port}/study")
        assert page.url.endswith("/study/4")
    context.close()
    with StudyStore(tmp_path / "study.sqlite", study) as store:
        answers = store.answers(store.participant(invite.token))
        assert answers[2] == {"": 2} and answers[3] == {"": 1} and 4 not in answers
