"""The web app over real HTTP (uvicorn on 127.0.0.1): tokens, CSRF, limits, headers, isolation of participants."""

from __future__ import annotations

import concurrent.futures
import logging
import re

import pytest
import requests
from study_helpers import ThreadServer, csrf_of

from xaimetrics.studies import LikertStudy, SimulatabilityStudy, StudyStore, create_app
from xaimetrics.studies._likert import Dimension, RatingItem
from xaimetrics.studies._simulatability import SampleSet, StudyArm

SECRET_WORDS = ("embassy", "referee", "Sci/Tech", "P1", "P2", "Guess", "NoExplanation", "seed")


def _study() -> SimulatabilityStudy:
    samples = SampleSet.from_texts(
        0,
        ["the embassy closed", "a late goal"],
        [0, 1],
        ["referee quits", "new chip", "treaty signed"],
        [1, 2, 0],
    )
    return SimulatabilityStudy(
        ["World", "Sports", "Sci/Tech"], [samples], [], [StudyArm("NoExplanation", "NE2", False, 0)],
        title="Guess the model",
    )  # fmt: skip


@pytest.fixture
def served(tmp_path):
    study = _study()
    store = StudyStore(tmp_path / "answers.sqlite", study)
    with ThreadServer(study, store) as server:
        yield study, store, server
    store.close()


def _join(server, token: str) -> requests.Session:
    session = requests.Session()
    response = session.get(f"{server.url}/s/{token}")
    assert response.status_code == 200 and response.url.endswith("/study/0")
    return session


def _batch_of(html: str) -> str:
    found = re.search(r'name="batch" value="([A-Za-z0-9_-]+)"', html)
    assert found, "no batch id in the invite form"
    return found.group(1)


def _reveals_nothing(response: requests.Response) -> None:
    assert response.status_code == 403
    text = re.sub(r'nonce="[^"]*"', "", response.text)  # the random CSP nonce may spell anything
    for word in SECRET_WORDS:
        assert word not in text


def test_wrong_or_missing_tokens_get_403_and_reveal_nothing(served):
    _, store, server = served
    invite = store.invite()
    admin = store.new_admin_token()
    anonymous = requests.Session()
    _reveals_nothing(anonymous.get(f"{server.url}/s/{'x' * 32}"))
    _reveals_nothing(anonymous.get(f"{server.url}/s/{invite.token[:-1]}"))
    for path in (
        "/study",
        "/study/0",
        "/study/2",
        "/admin",
        "/admin/export/answers.csv",
        "/admin/export/scores.csv",
    ):
        _reveals_nothing(anonymous.get(server.url + path))
        _reveals_nothing(
            anonymous.get(server.url + path, cookies={"xm_participant": "forged", "xm_admin": "forged"})
        )
    _reveals_nothing(anonymous.post(f"{server.url}/study/0", data={"csrf": "0" * 64, "continue": "1"}))
    _reveals_nothing(
        anonymous.get(f"{server.url}/admin", headers={"Authorization": f"Bearer {invite.token}"})
    )
    _reveals_nothing(anonymous.post(f"{server.url}/admin/login", data={"token": "wrong"}))
    assert (
        anonymous.get(f"{server.url}/admin", headers={"Authorization": f"Bearer {admin}"}).status_code == 200
    )
    # nothing in the database gives access: tokens are stored as hashes only
    raw = (store.path).read_bytes() + store.path.with_name(store.path.name + "-wal").read_bytes()
    assert invite.token.encode() not in raw and admin.encode() not in raw


def test_forms_need_the_participants_own_csrf_token_and_a_same_site_origin(served):
    _, store, server = served
    one, two = _join(server, store.invite().token), _join(server, store.invite().token)
    token_one = csrf_of(one.get(f"{server.url}/study/0").text)
    token_two = csrf_of(two.get(f"{server.url}/study/0").text)
    assert token_one != token_two
    _reveals_nothing(two.post(f"{server.url}/study/0", data={"csrf": token_one, "continue": "1"}))
    _reveals_nothing(one.post(f"{server.url}/study/0", data={"continue": "1"}))
    evil = one.post(
        f"{server.url}/study/0", data={"csrf": token_one}, headers={"Origin": "http://evil.example"}
    )
    assert evil.status_code == 403
    assert one.post(f"{server.url}/study/0", data={"csrf": token_one, "continue": "1"}).url.endswith(
        "/study/1"
    )


def test_request_limits_host_check_and_security_headers(served):
    _, store, server = served
    session = _join(server, store.invite().token)
    page = session.get(f"{server.url}/study/0")
    token = csrf_of(page.text)
    headers = page.headers
    nonce = re.search(r"'nonce-([^']+)'", headers["Content-Security-Policy"]).group(1)
    assert (
        f'<script nonce="{nonce}">' in page.text
        and "default-src 'none'" in headers["Content-Security-Policy"]
    )
    assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Cache-Control"] == "no-store" and headers["Referrer-Policy"] == "same-origin"
    cookie = next(c for c in session.cookies if c.name == "xm_participant")
    assert cookie.has_nonstandard_attr("HttpOnly") and cookie.get_nonstandard_attr("SameSite") == "lax"
    big = session.post(f"{server.url}/study/0", data={"csrf": token, "filler": "x" * 20_000})
    assert big.status_code == 413
    assert session.post(f"{server.url}/study/0", json={"csrf": token}).status_code == 415
    assert requests.get(f"{server.url}/", headers={"Host": "attacker.example"}).status_code == 400
    assert requests.get(f"{server.url}/docs").status_code == 404  # no API documentation to browse


def test_answers_are_validated_and_only_reachable_screens_can_be_answered(served):
    _, store, server = served
    invite = store.invite()
    session = _join(server, invite.token)
    token = csrf_of(session.get(f"{server.url}/study/0").text)
    # a later screen cannot be answered before the earlier ones: back to the first unanswered one
    assert session.post(f"{server.url}/study/3", data={"csrf": token, "answer": "1"}).url.endswith("/study/0")
    assert session.get(f"{server.url}/study/3").url.endswith("/study/0")
    assert session.get(f"{server.url}/study/99").url.endswith("/study/0")
    session.post(f"{server.url}/study/0", data={"csrf": token, "continue": "1"})
    session.post(f"{server.url}/study/1", data={"csrf": token, "continue": "1"})
    bad = session.post(f"{server.url}/study/2", data={"csrf": token, "answer": "7"})
    assert bad.status_code == 400 and "Choose one of the answers" in bad.text
    assert 2 not in store.answers(invite.participant)
    ok = session.post(f"{server.url}/study/2", data={"csrf": token, "answer": "1"})
    assert ok.url.endswith("/study/3") and store.answers(invite.participant)[2] == {"": 1}
    # going back and changing an answer is allowed, and counted as a revision
    back = session.get(f"{server.url}/study/2")
    assert re.findall(r'value="(\d)"[^>]*class="chosen"', back.text) == ["1"]
    session.post(f"{server.url}/study/2", data={"csrf": token, "answer": "2"})
    (row,) = [r for r in store.responses() if r["screen"] == 2]
    assert row["value"] == 2 and row["revisions"] == 1


def test_concurrent_participants_only_see_and_change_their_own_answers(served):
    _, store, server = served
    invites = [store.invite() for _ in range(6)]
    sessions = [_join(server, invite.token) for invite in invites]

    def take_part(index: int) -> list[str]:
        session = sessions[index]
        token = csrf_of(session.get(f"{server.url}/study/0").text)
        pages = []
        for screen in (0, 1):
            session.post(f"{server.url}/study/{screen}", data={"csrf": token, "continue": "1"})
        for screen in (2, 3, 4):
            answer = (index + screen) % 3
            pages.append(
                session.post(f"{server.url}/study/{screen}", data={"csrf": token, "answer": str(answer)}).text
            )
            pages.append(session.get(f"{server.url}/study/{screen}").text)
        return pages

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        pages = list(pool.map(take_part, range(6)))
    for index, invite in enumerate(invites):
        answers = store.answers(invite.participant)
        assert {s: answers[s][""] for s in (2, 3, 4)} == {s: (index + s) % 3 for s in (2, 3, 4)}
        for screen, page in zip((2, 3, 4), pages[index][1::2], strict=True):  # the re-opened question
            chosen = re.findall(r'value="(\d)"[^>]*class="chosen"', page)
            assert chosen == [str((index + screen) % 3)]
    # one participant's cookie never reaches another participant's answers
    spy = sessions[0]
    token = csrf_of(spy.get(f"{server.url}/study/2").text)
    spy.post(f"{server.url}/study/2", data={"csrf": token, "answer": "0"})
    assert store.answers(invites[1].participant)[2] == {"": (1 + 2) % 3}


def test_admin_invites_and_exports(served, tmp_path):
    _, store, server = served
    admin = store.new_admin_token()
    session = requests.Session()
    assert session.post(f"{server.url}/admin/login", data={"token": admin}).url.endswith("/admin")
    page = session.get(f"{server.url}/admin").text
    form = {"csrf": csrf_of(page), "batch": _batch_of(page), "count": "2"}
    created = session.post(f"{server.url}/admin/invite", data=form)
    assert created.history[0].status_code == 303 and "/admin?invited=" in created.url
    links = re.findall(r"<code>(http://[^<]+)</code>", created.text)
    assert len(links) == 2 and len(store.participants()) == 2
    refused = session.post(f"{server.url}/admin/invite", data={**form, "csrf": "f" * 64})
    assert refused.status_code == 403 and len(store.participants()) == 2
    assert session.post(f"{server.url}/admin/invite", data={**form, "count": "0"}).status_code == 400
    # reloading the page of the links, or posting the same form again, invites nobody: the same links
    for again in (session.get(created.url), session.post(f"{server.url}/admin/invite", data=form)):
        assert (
            re.findall(r"<code>(http://[^<]+)</code>", again.text) == links and len(store.participants()) == 2
        )
    no_batch = session.post(f"{server.url}/admin/invite", data={"csrf": form["csrf"], "count": "2"})
    assert no_batch.status_code == 400 and "batch id" in no_batch.text and len(store.participants()) == 2
    forgotten = session.get(f"{server.url}/admin?invited={'z' * 22}").text
    assert "no longer shown" in forgotten and "<code>http" not in forgotten
    fresh = session.get(f"{server.url}/admin").text  # a new form: a new batch
    assert _batch_of(fresh) != form["batch"]
    session.post(f"{server.url}/admin/invite", data={**form, "batch": _batch_of(fresh), "count": "1"})
    assert len(store.participants()) == 3
    participant = _join(server, links[0].rsplit("/", 1)[1])
    token = csrf_of(participant.get(f"{server.url}/study/0").text)
    for screen, data in ((0, {"continue": "1"}), (1, {"continue": "1"}), (2, {"answer": "1"})):
        participant.post(f"{server.url}/study/{screen}", data={"csrf": token, **data})
    answers = session.get(f"{server.url}/admin/export/answers.csv")
    assert answers.headers["Content-Disposition"] == 'attachment; filename="answers.csv"'
    lines = answers.text.strip().splitlines()
    assert len(lines) == 4 and "P1,2,question,NoExplanation/NE2/seed0/2,,1," in lines[3]
    assert lines[3].endswith(",Sports,Sports,True")  # answered Sports, the model's answer, so correct
    assert session.get(f"{server.url}/admin/export/nothing.csv").status_code == 404


def test_a_likert_screen_needs_every_dimension_rated(tmp_path):
    study = LikertStudy(
        [Dimension("tone", "emotional tone"), Dimension("topic", "the topic")],
        [RatingItem("a", "a joy", (0.5, 0.1)), RatingItem("b", "dull", (-0.5, 0.3))], shuffle=False,
    )  # fmt: skip
    store = StudyStore(tmp_path / "answers.sqlite", study)
    invite = store.invite()
    with ThreadServer(study, store) as server:
        session = _join(server, invite.token)
        token = csrf_of(session.get(f"{server.url}/study/0").text)
        session.post(f"{server.url}/study/0", data={"csrf": token, "continue": "1"})
        partial = session.post(f"{server.url}/study/1", data={"csrf": token, "d0": "4", "d1": "9"})
        assert partial.status_code == 400 and "Rate every dimension: topic." in partial.text
        assert 'value="4" required checked' in partial.text  # what was given is kept
        done = session.post(f"{server.url}/study/1", data={"csrf": token, "d0": "4", "d1": "2"})
        assert done.url.endswith("/study/2") and store.answers(invite.participant)[1] == {"0": 4, "1": 2}
    store.close()


def test_refused_requests_are_logged_without_tokens(served, caplog):
    _, store, server = served
    invite = store.invite()
    admin_token = store.new_admin_token()
    caplog.set_level(logging.DEBUG, logger="xaimetrics.studies")
    assert requests.get(f"{server.url}/", headers={"Host": "attacker.example"}).status_code == 400
    assert requests.get(f"{server.url}/s/{'x' * 32}").status_code == 403
    session = _join(server, invite.token)
    token = csrf_of(session.get(f"{server.url}/study/0").text)
    assert session.post(f"{server.url}/study/0", data={"csrf": token, "continue": "1"}).url.endswith(
        "/study/1"
    )
    admin = requests.Session()
    assert admin.post(f"{server.url}/admin/login", data={"token": admin_token}).url.endswith("/admin")
    records = [r for r in caplog.records if r.name == "xaimetrics.studies"]
    refused = [r.getMessage() for r in records if r.levelno == logging.INFO and "refused" in r.getMessage()]
    assert refused == ["refused GET / (400)", "refused GET /s/… (403)"]
    assert any(
        r.levelno == logging.DEBUG and "saved the answer of P1 to screen 0" in r.getMessage() for r in records
    )
    logged = "\n".join(r.getMessage() for r in records)
    for secret in (invite.token, admin_token, token, "x" * 32):
        assert secret not in logged


def test_log_lines_escape_what_a_visitor_sends(served, caplog):
    _, _, server = served
    caplog.set_level(logging.DEBUG, logger="xaimetrics.studies")
    hostile = "/%1b%5b2J%1b%5d0%3bowned%07%00aforged%c2%85%e2%80%ae"
    assert requests.get(f"{server.url}{hostile}", headers={"Host": "attacker.example"}).status_code == 400
    response = requests.post(f"{server.url}/admin/invite", headers={"Origin": "http://x\x1b[1m.example"})
    assert response.status_code == 403
    records = [r for r in caplog.records if r.name == "xaimetrics.studies"]
    lines = [r.getMessage() for r in records]
    assert "refused GET /\\x1b[2J\\x1b]0;owned\\x07\\x00aforged\\x85\\u202e (400)" in lines
    for line in lines:
        assert line.isprintable(), line  # no NUL, ESC, CR, LF, C1 or bidirectional control left


def test_host_names_follow_starlettes_patterns(tmp_path):
    study = _study()
    store = StudyStore(tmp_path / "answers.sqlite", study)
    with ThreadServer(study, store, allowed_hosts=["127.0.0.1", "*.study.example"]) as server:
        for host, status in (("127.0.0.1", 200), ("a.study.example", 200), ("study.example", 400),
                             ("localhost", 400), ("evil.example", 400), ("[::1]", 400)):  # fmt: skip
            response = requests.get(f"{server.url}/", headers={"Host": f"{host}:{server.port}"})
            assert response.status_code == status, host
            assert response.headers["X-Frame-Options"] == "DENY"  # the refusals carry the headers too
    store.close()
    with pytest.raises(ValueError, match=r"'allowed_hosts' parameter of create_app .* Got exa\*mple.org\."):
        create_app(study, store, allowed_hosts=["exa*mple.org"])
    with pytest.raises(ValueError, match=r"must be a list of host names.* Got 'localhost'\."):
        create_app(study, store, allowed_hosts="localhost")
