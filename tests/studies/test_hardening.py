"""Issue #23's study findings, over real HTTP (uvicorn on 127.0.0.1) and in headless Chromium: malformed numbers
are 400s, every error page carries the security headers, a foreign page cannot replace a session, the admin can
sign out and revoke a link, exports download, and a replayed answer keeps its time."""

from __future__ import annotations

import time

import pytest
import requests
from study_helpers import ThreadServer, csrf_of

from xaimetrics.studies import LikertStudy, SimulatabilityStudy, StudyStore
from xaimetrics.studies._likert import Dimension, RatingItem
from xaimetrics.studies._simulatability import SampleSet, StudyArm

#: numbers that ``str.isdigit`` or ``int`` accept and a strict parser must not
MALFORMED = ["²", "٣", "-1", "+1", " 1", "1 ", "1.0", "0x1", "9" * 5000, "1_0", ""]


def _study() -> SimulatabilityStudy:
    samples = SampleSet.from_texts(
        0,
        ["the embassy closed", "a late goal"],
        [0, 1],
        ["referee quits", "new chip", "treaty signed"],
        [1, 2, 0],
    )
    return SimulatabilityStudy(
        ["World", "Sports", "Sci/Tech"], [samples], [], [StudyArm("NoExplanation", "NE2", False, 0)]
    )


@pytest.fixture
def served(tmp_path):
    study = _study()
    store = StudyStore(tmp_path / "answers.sqlite", study)
    with ThreadServer(study, store) as server:
        yield study, store, server
    store.close()


def _secured(response: requests.Response) -> None:
    """The headers every response carries, error pages included."""
    headers = response.headers
    assert "default-src 'none'" in headers["Content-Security-Policy"], response.status_code
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["X-Frame-Options"] == "DENY"
    assert headers["Referrer-Policy"] == "same-origin" and headers["Cache-Control"] == "no-store"


def _join(server, token: str) -> requests.Session:
    session = requests.Session()
    assert session.get(f"{server.url}/s/{token}").url.endswith("/study/0")
    return session


def _cookie(session: requests.Session) -> str | None:
    return session.cookies.get("xm_participant")


def test_malformed_numbers_are_400_with_the_security_headers(served, tmp_path):
    _, store, server = served
    session = _join(server, store.invite().token)
    token = csrf_of(session.get(f"{server.url}/study/0").text)
    session.post(f"{server.url}/study/0", data={"csrf": token, "continue": "1"})
    session.post(f"{server.url}/study/1", data={"csrf": token, "continue": "1"})
    for number in MALFORMED:
        path = requests.utils.quote(number, safe="")
        if number:  # "/study/" is another route
            response = session.get(f"{server.url}/study/{path}", allow_redirects=False)
            assert response.status_code == 400, number
            _secured(response)
            response = session.post(f"{server.url}/study/{path}", data={"csrf": token, "answer": "1"})
            assert response.status_code == 400, number
            _secured(response)
        response = session.post(f"{server.url}/study/2", data={"csrf": token, "answer": number})
        assert response.status_code == 400 and "Choose one of the answers" in response.text, number
        _secured(response)
    assert 2 not in store.answers(store.participants()[0])
    # the admin's count
    admin = requests.Session()
    admin.post(f"{server.url}/admin/login", data={"token": store.new_admin_token()})
    admin_csrf = csrf_of(admin.get(f"{server.url}/admin").text)
    for number in MALFORMED:
        response = admin.post(f"{server.url}/admin/invite", data={"csrf": admin_csrf, "count": number})
        assert response.status_code == 400 and "count must be a number" in response.text, number
        _secured(response)
    assert len(store.participants()) == 1


def test_malformed_likert_ratings_are_400(tmp_path):
    study = LikertStudy(
        [Dimension("tone", "emotional tone")], [RatingItem("a", "a joy", (0.5,))], shuffle=False
    )
    store = StudyStore(tmp_path / "answers.sqlite", study)
    invite = store.invite()
    with ThreadServer(study, store) as server:
        session = _join(server, invite.token)
        token = csrf_of(session.get(f"{server.url}/study/0").text)
        session.post(f"{server.url}/study/0", data={"csrf": token, "continue": "1"})
        for number in MALFORMED:
            response = session.post(f"{server.url}/study/1", data={"csrf": token, "d0": number})
            assert response.status_code == 400 and "Rate every dimension: tone." in response.text, number
            _secured(response)
        assert 1 not in store.answers(invite.participant)
    store.close()


def test_every_error_page_carries_the_security_headers(served):
    _, store, server = served
    anonymous = requests.Session()
    for response, status in (
        (anonymous.get(f"{server.url}/study/0"), 403),
        (anonymous.get(f"{server.url}/s/{'x' * 32}"), 403),
        (anonymous.get(f"{server.url}/nothing/here"), 404),
        (anonymous.put(f"{server.url}/study"), 405),
        (anonymous.post(f"{server.url}/admin/login", json={"token": "x"}), 415),
        (anonymous.get(f"{server.url}/", headers={"Host": "attacker.example"}), 400),
        (
            anonymous.post(
                f"{server.url}/admin/login", data={"token": "x"}, headers={"Origin": "http://evil"}
            ),
            403,
        ),
    ):
        assert response.status_code == status, (response.url, response.status_code)
        _secured(response)
    # a handler that fails (here: its database is gone) answers a bare 500, with the headers
    session = _join(server, store.invite().token)
    store.close()
    failed = session.get(f"{server.url}/study/0")
    assert failed.status_code == 500 and failed.text == "Server error."
    _secured(failed)


def test_a_foreign_link_does_not_replace_an_open_session(served):
    _, store, server = served
    victim, attacker = store.invite(), store.invite()
    session = _join(server, victim.token)
    # the attacker's link, opened in the victim's browser: a confirmation page, the session stays
    page = session.get(f"{server.url}/s/{attacker.token}", allow_redirects=False)
    assert page.status_code == 200 and "already taking part with another link" in page.text
    assert "set-cookie" not in {k.lower() for k in page.headers} and _cookie(session) == victim.token
    _secured(page)
    # switching needs the confirmation's token (bound to the current session) and a same-site POST
    assert session.post(f"{server.url}/s/{attacker.token}", data={"switch": "1"}).status_code == 403
    assert session.post(f"{server.url}/s/{attacker.token}", data={"csrf": "0" * 64}).status_code == 403
    foreign = session.post(
        f"{server.url}/s/{attacker.token}",
        data={"csrf": csrf_of(page.text)},
        headers={"Origin": "http://evil.example"},
    )
    assert foreign.status_code == 403 and _cookie(session) == victim.token
    assert store.participant(_cookie(session)) == victim.participant
    # the person's own choice: switch
    switched = session.post(f"{server.url}/s/{attacker.token}", data={"csrf": csrf_of(page.text)})
    assert switched.url.endswith("/study/0") and _cookie(session) == attacker.token
    # the same link again, or a browser without a session: straight in
    assert session.get(f"{server.url}/s/{attacker.token}").url.endswith("/study/0")
    assert _cookie(_join(server, victim.token)) == victim.token


def test_admin_signs_out_revokes_a_link_and_downloads_the_exports(served):
    _, store, server = served
    one, two = store.invite(), store.invite()
    participant = _join(server, one.token)
    admin = requests.Session()
    admin.post(f"{server.url}/admin/login", data={"token": store.new_admin_token()})
    page = admin.get(f"{server.url}/admin")
    csrf = csrf_of(page.text)
    assert page.text.count('action="/admin/revoke"') == 2
    assert (
        admin.post(f"{server.url}/admin/revoke", data={"csrf": "f" * 64, "participant": "P1"}).status_code
        == 403
    )
    missing = admin.post(f"{server.url}/admin/revoke", data={"csrf": csrf, "participant": "P9"})
    assert missing.status_code == 400
    revoked = admin.post(f"{server.url}/admin/revoke", data={"csrf": csrf, "participant": "P1"})
    assert revoked.status_code == 200 and "The link of P1 is revoked" in revoked.text
    assert store.revoked() == {"P1"} and store.participant(one.token) is None
    assert participant.get(f"{server.url}/study/0").status_code == 403  # the open session ends too
    assert requests.get(f"{server.url}/s/{one.token}").status_code == 403
    _join(server, two.token)  # the others are untouched
    # the exports download (Content-Disposition: attachment), JSON included
    for name in ("answers.csv", "answers.json", "scores.csv"):
        export = admin.get(f"{server.url}/admin/export/{name}")
        assert export.headers["Content-Disposition"] == f'attachment; filename="{name}"', name
        _secured(export)
    # sign out: the cookie is gone, the admin pages are closed; a foreign sign-out is refused
    assert (
        admin.post(
            f"{server.url}/admin/logout", data={"csrf": csrf}, headers={"Origin": "http://evil"}
        ).status_code
        == 403
    )
    assert admin.post(f"{server.url}/admin/logout", data={"csrf": "f" * 64}).status_code == 403
    out = admin.post(f"{server.url}/admin/logout", data={"csrf": csrf})
    assert out.url.endswith("/admin/login") and admin.cookies.get("xm_admin") is None
    assert admin.get(f"{server.url}/admin").status_code == 403


def test_a_replayed_answer_keeps_its_time(served):
    _, store, server = served
    invite = store.invite()
    session = _join(server, invite.token)
    token = csrf_of(session.get(f"{server.url}/study/0").text)
    session.post(f"{server.url}/study/0", data={"csrf": token, "continue": "1"})
    session.post(f"{server.url}/study/1", data={"csrf": token, "continue": "1"})
    session.post(f"{server.url}/study/2", data={"csrf": token, "answer": "1"})
    (first,) = [r for r in store.responses() if r["screen"] == 2]
    time.sleep(0.05)
    for _ in range(3):  # replayed (or double-clicked) POSTs of the same answer
        session.post(f"{server.url}/study/2", data={"csrf": token, "answer": "1"})
    (replayed,) = [r for r in store.responses() if r["screen"] == 2]
    assert replayed == first
    session.post(f"{server.url}/study/2", data={"csrf": token, "answer": "2"})  # a real change
    (changed,) = [r for r in store.responses() if r["screen"] == 2]
    assert (
        changed["value"] == 2 and changed["revisions"] == 1 and changed["answered_at"] > first["answered_at"]
    )


# -- in the browser -------------------------------------------------------------------------------------------
ATTACKER_SITE = "http://attacker.test"


def test_in_the_browser_a_foreign_page_cannot_swap_the_participant(chromium, served):
    _, store, server = served
    victim, attacker = store.invite(), store.invite()
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    # a foreign site: a link to the attacker's invite that navigates on load, and a form that posts to it
    foreign = {
        "/navigate": f'<script>location.href = "{attacker.url(server.url)}";</script>',
        "/post": f'<form method="post" action="{attacker.url(server.url)}"><input name="csrf" value="{"0" * 64}">'
        "</form><script>document.forms[0].submit();</script>",
    }
    context.route(
        f"{ATTACKER_SITE}/**",
        lambda route: route.fulfill(
            body=foreign[route.request.url.removeprefix(ATTACKER_SITE)], content_type="text/html"
        ),
    )
    page = context.new_page()
    page.goto(victim.url(server.url))
    assert page.url.endswith("/study/0")
    page.goto(f"{ATTACKER_SITE}/navigate")
    page.wait_for_url(f"{server.url}/s/**")
    assert "already taking part with another link" in page.inner_text("h1")
    page.goto(f"{ATTACKER_SITE}/post")
    page.wait_for_load_state()
    assert "Access denied" in page.inner_text("body")
    page.goto(f"{server.url}/study")
    cookies = {c["name"]: c["value"] for c in context.cookies(server.url)}
    assert cookies["xm_participant"] == victim.token and page.url.endswith("/study/0")
    # the person's own click switches
    page.goto(attacker.url(server.url))
    with page.expect_navigation():
        page.click("button[name=switch]")
    assert {c["name"]: c["value"] for c in context.cookies(server.url)}["xm_participant"] == attacker.token
    context.close()


def test_in_the_browser_admin_revokes_downloads_and_signs_out(chromium, served, tmp_path):
    _, store, server = served
    invite = store.invite()
    admin_token = store.new_admin_token()
    participant = chromium.new_context()
    taking_part = participant.new_page()
    taking_part.goto(invite.url(server.url))
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{server.url}/admin/login")
    page.fill("input[name=token]", admin_token)
    with page.expect_navigation():
        page.click("button[type=submit]")
    with page.expect_download() as download:
        page.click("a[href='/admin/export/answers.json']")
    assert download.value.suggested_filename == "answers.json"
    assert download.value.path().read_text().startswith("[")
    with page.expect_navigation():
        page.click("button[aria-label='Revoke the link of P1']")
    assert "The link of P1 is revoked" in page.inner_text("main") and "revoked" in page.inner_text("table")
    taking_part.reload()
    assert "Access denied" in taking_part.inner_text("h1")
    with page.expect_navigation():
        page.click("text=Sign out")
    assert page.url.endswith("/admin/login")
    page.goto(f"{server.url}/admin")
    assert "Access denied" in page.inner_text("h1")
    # a malformed number in the browser: a 400 page with the headers (without a valid session: denied first)
    assert page.goto(f"{server.url}/study/%C2%B2").status == 403
    assert taking_part.goto(f"{server.url}/study/%C2%B2").status == 403  # revoked
    fresh = chromium.new_context().new_page()
    fresh.goto(store.invite().url(server.url))
    response = fresh.goto(f"{server.url}/study/%C2%B2")
    assert response.status == 400 and response.headers["x-content-type-options"] == "nosniff"
    assert "default-src 'none'" in response.headers["content-security-policy"]
    context.close()
    participant.close()
    fresh.context.close()
