"""The learn and question screens fit a phone (390 px) and a laptop (1280 px) with 20 long news articles: the
answer buttons are on the first screen, texts are shortened with the whole text one click away, the concepts
that describe each (anonymised) class sit on the answer buttons, U1 badges carry the concepts' words, and Likert
values read by value. Screenshots of these screens go to docs/images/studies/ (see docs/studies.md)."""

from __future__ import annotations

import pytest
from study_helpers import ThreadServer, article, article_study, screenshot

from xaimetrics.studies import LikertStudy, StudyStore
from xaimetrics.studies._likert import Dimension, RatingItem

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}


def _fits_width(page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"))


def _visible_without_scrolling(page, selector: str) -> bool:
    """Every element of ``selector`` lies inside the first screen (the page is not scrolled)."""
    return bool(
        page.evaluate(
            """(selector) => window.scrollY === 0 && Array.from(document.querySelectorAll(selector)).every(
                (e) => { const r = e.getBoundingClientRect(); return r.height > 0 && r.top >= 0
                    && r.bottom <= window.innerHeight && r.right <= window.innerWidth; })""",
            selector,
        )
    )


def _screens(page) -> float:
    return float(page.evaluate("document.documentElement.scrollHeight / window.innerHeight"))


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_learn_and_question_screens_fit_with_twenty_long_articles(chromium, tmp_path, viewport):
    study = article_study()
    store = StudyStore(tmp_path / "answers.sqlite", study)
    anonymised, u1 = (store.invite(arms=[arm.id]) for arm in study.arms)
    device = "phone" if viewport is PHONE else "laptop"
    with ThreadServer(study, store) as server:
        context = chromium.new_context(viewport=viewport, has_touch=viewport is PHONE)
        page = context.new_page()
        page.goto(anonymised.url(server.url))
        with page.expect_navigation():
            page.click("button[type=submit]")  # the instructions
        assert "learn how the model answers" in page.inner_text("h1")
        # the learn screen: 20 articles of ~2,400 characters; "Go to the questions" on the first screen
        assert len(page.query_selector_all("ol.examples li")) == 20
        assert _visible_without_scrolling(page, "button[data-enter]") and _fits_width(page)
        screens = _screens(page)
        assert screens < (7 if viewport is PHONE else 5), screens  # was 49 (phone) and 26 (laptop) screens
        # the classes' concepts come first, with their words
        first_class = page.inner_text(".card.class")
        assert "Class_0" in first_class and "embassy, minister, treaty" in first_class
        screenshot(page, f"simulatability-articles-learn-{device}", tmp_path, full_page=False)
        # a shortened example opens to the whole text, as the LLM reads it
        whole = page.query_selector("ol.examples details.whole")
        assert article(0, 0) not in page.inner_text("ol.examples")
        whole.query_selector("summary").click()
        assert article(0, 0) in whole.inner_text()
        with page.expect_navigation():
            page.click("button[data-enter]")

        # the question screen: the answer buttons on the first screen, each with its class's concepts
        assert _visible_without_scrolling(page, "button[name=answer]") and _fits_width(page)
        buttons = [b.inner_text() for b in page.query_selector_all("button[name=answer]")]
        assert "Class_0" in buttons[0] and "embassy" in buttons[0] and "goal" in buttons[1], buttons
        assert page.query_selector(".card details.whole") is not None  # the article, shortened
        screenshot(page, f"simulatability-articles-question-{device}", tmp_path, full_page=False)
        context.close()

        # U1: the sample's own badges name the concepts' words, not "concept 2"
        context = chromium.new_context(viewport=viewport)
        page = context.new_page()
        page.goto(u1.url(server.url))
        for _ in range(2):  # instructions, learn
            with page.expect_navigation():
                page.click("button[data-enter]")
        badges = page.inner_text(".card .badges")
        assert "for: goal, match, coach" in badges and "concept 1" not in badges, badges
        assert _visible_without_scrolling(page, "button[name=answer]")
        context.close()
    store.close()


def test_likert_values_read_by_value_on_the_rating_screen(chromium, tmp_path):
    # 0.01 is 1 % of the maximum: "very low", although it ranks above most texts
    values = [0.0, 0.0, 0.0, 0.005, 0.01, 1.0]
    items = [RatingItem(str(i), f"text number {i}", (v,)) for i, v in enumerate(values)]
    study = LikertStudy([Dimension("Concept 3", "sport", high="sport")], items, shuffle=False)
    assert study.value_label(study.items[4], 0) == "0.01 (very low: 1 % of the largest value)"
    assert (
        study.value_label(study.items[5], 0) == "1.00 (very high: 100 % of the largest value, toward sport)"
    )
    store = StudyStore(tmp_path / "answers.sqlite", study)
    invite = store.invite()
    with ThreadServer(study, store) as server:
        context = chromium.new_context(viewport=PHONE)
        page = context.new_page()
        page.goto(invite.url(server.url))
        page.goto(f"{server.url}/study/0")
        with page.expect_navigation():
            page.click("button[type=submit]")
        for _ in range(4):
            page.check("input[name=d0][value='3']")
            with page.expect_navigation():
                page.click("button[name=save]")
        assert "text number 4" in page.inner_text(".sample")
        assert "0.01 (very low: 1 % of the largest value)" in page.inner_text(".value")
        meter = page.query_selector("meter")
        assert float(meter.get_attribute("min")) == 0.0 and float(meter.get_attribute("max")) == 1.0
        context.close()
    store.close()
