"""``xaimetrics study serve``: the port is checked before the "shown once" admin token is printed, a busy port
is a one-line error naming the port and the ``--port`` fix, and invite links point at the port actually
served."""

from __future__ import annotations

import re
import socket

from study_helpers import cli_server, free_port

from xaimetrics import cli
from xaimetrics.studies import SimulatabilityStudy, StudyConfig, StudyStore, save_study
from xaimetrics.studies._config import bind, write_config
from xaimetrics.studies._simulatability import SampleSet, StudyArm


def _config(tmp_path):
    samples = SampleSet.from_texts(0, ["the embassy closed", "a late goal"], [0, 1], ["referee quits"], [1])
    study = SimulatabilityStudy(
        ["World", "Sports"], [samples], [], [StudyArm("NoExplanation", "NE2", False, 0)]
    )
    bundle = save_study(study, tmp_path / "study.json")
    return study, write_config(StudyConfig(bundle), tmp_path / "study.toml")


def _run(argv, capsys):
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_busy_port_fails_before_the_admin_token_is_printed(tmp_path, capsys):
    study, config = _config(tmp_path)
    with socket.socket() as other:  # another study server on the port
        other.bind(("127.0.0.1", 0))
        other.listen(1)
        busy = other.getsockname()[1]
        code, out = _run(["study", "serve", str(config), "--port", str(busy)], capsys)
    assert code == 1 and "Traceback" not in out
    assert f"Port {busy} is in use" in out and "'--port'" in out
    suggested = int(re.search(r"with --port (\d+)", out).group(1))
    assert suggested != busy and "Admin token" not in out
    with StudyStore(tmp_path / "study.sqlite", study) as store:
        assert not store.has_admin_token  # no token was made (and lost)
    sock = bind("127.0.0.1", suggested)  # the suggested port is free
    sock.close()


def test_invite_links_use_the_port_actually_served(chromium, tmp_path, capsys):
    _, config = _config(tmp_path)
    port = free_port()  # not the configuration's 8765
    with cli_server(config, port) as server:
        code, out = _run(["study", "invite", str(config), "--count", "2"], capsys)
        links = re.findall(r"(http://\S+/s/\S+)", out)
        assert code == 0 and len(links) == 2
        assert all(link.startswith(f"http://127.0.0.1:{port}/s/") for link in links), links
        page = chromium.new_page()
        page.goto(links[0])  # the link works as printed, in a browser
        assert page.url == f"http://127.0.0.1:{port}/study/0" and "Welcome" in page.inner_text("h1")
        page.close()
        server.kill()
        server.wait()
        printed = server.stdout.read()
    assert printed.index(f"Serving on http://127.0.0.1:{port}") > printed.index("Admin token (shown once)")
    # an explicit --base-url still wins (a proxy's address)
    code, out = _run(["study", "invite", str(config), "--base-url", "https://study.example.org"], capsys)
    assert code == 0 and "https://study.example.org/s/" in out
