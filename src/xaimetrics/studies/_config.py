"""The server configuration of a study (``STUDY.toml``) and :func:`serve`.

``xaimetrics study create`` writes it beside the bundle::

    # Serve with: xaimetrics study serve annotations/study.toml
    study = "study.json"          # the bundle (paths are relative to this file)
    database = "study.sqlite"     # the answers (SQLite, WAL)
    host = "127.0.0.1"
    port = 8765
    allowed_hosts = []            # extra host names the server answers (behind a proxy)
    max_body_bytes = 16384
    secure_cookies = false        # true behind HTTPS
"""

from __future__ import annotations

import dataclasses
import errno
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from xaimetrics._optional import import_optional
from xaimetrics._validation import invalid
from xaimetrics.studies._app import DEFAULT_HOSTS, create_app
from xaimetrics.studies._bundle import Study, load_study
from xaimetrics.studies._store import StudyStore

__all__ = ["StudyConfig", "bind", "load_config", "open_study", "serve", "write_config"]

_OWNER = "StudyConfig"


@dataclass(frozen=True)
class StudyConfig:
    """Where a study's bundle and answers are, and how it is served.

    Example:
        >>> StudyConfig(Path("s.json")).database
        PosixPath('s.sqlite')
    """

    study: Path
    database: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8765
    allowed_hosts: tuple[str, ...] = ()
    max_body_bytes: int = 16_384
    secure_cookies: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "study", Path(self.study))
        database = self.study.with_suffix(".sqlite") if self.database is None else Path(self.database)
        object.__setattr__(self, "database", database)
        object.__setattr__(self, "allowed_hosts", tuple(str(h) for h in self.allowed_hosts))
        port, limit = self.port, self.max_body_bytes
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port < 65536:
            raise invalid("port", _OWNER, "an integer in [1, 65535]", port)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1024 <= limit <= 1_048_576:
            raise invalid("max_body_bytes", _OWNER, "an integer in [1024, 1048576]", limit)

    @property
    def hosts(self) -> tuple[str, ...]:
        """The host names the server answers: the defaults, ``host`` and ``allowed_hosts``."""
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return tuple(dict.fromkeys((*DEFAULT_HOSTS, host.lower(), *self.allowed_hosts)))


def load_config(path: str | Path) -> StudyConfig:
    """Read ``STUDY.toml`` (or take a bundle ``.json`` directly, with the default settings)."""
    path = Path(path)
    if not path.is_file():
        raise invalid("path", "load_config", "an existing STUDY.toml or study bundle (.json)", str(path))
    if path.suffix == ".json":
        return StudyConfig(path)
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = import_optional("tomli", extra="studies", caller="load_config")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise invalid("path", "load_config", "a valid TOML file", f"{path}: {error}") from error
    names = [f.name for f in dataclasses.fields(StudyConfig)]
    unknown = sorted(set(data) - set(names))
    if unknown or "study" not in data:
        raise invalid("path", "load_config", "a TOML file with 'study' and keys among " + ", ".join(names),
                      f"{path}: unknown {unknown}" if unknown else f"{path}: no 'study' key")  # fmt: skip
    for key in ("study", "database"):
        if key in data:
            data[key] = path.parent / str(data[key])
    return StudyConfig(**data)


def write_config(config: StudyConfig, path: str | Path) -> Path:
    """Write ``STUDY.toml`` with paths relative to its folder."""
    path = Path(path)

    def relative(value: Path) -> str:
        try:
            return str(value.resolve().relative_to(path.parent.resolve()))
        except ValueError:
            return str(value.resolve())

    hosts = ", ".join(f'"{h}"' for h in config.allowed_hosts)
    text = (
        f"# Serve with: xaimetrics study serve {path}\n"
        f'study = "{relative(config.study)}"\ndatabase = "{relative(Path(str(config.database)))}"\n'
        f'host = "{config.host}"\nport = {config.port}\nallowed_hosts = [{hosts}]\n'
        f"max_body_bytes = {config.max_body_bytes}\nsecure_cookies = {str(config.secure_cookies).lower()}\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def open_study(config: StudyConfig) -> tuple[Study, StudyStore]:
    """The study bundle and its answer database."""
    study = load_study(config.study)
    return study, StudyStore(Path(str(config.database)), study)


def bind(host: str, port: int, *, argument: str = "port") -> socket.socket:
    """A listening socket on ``host:port``, bound now so that a busy port fails before anything is printed.

    Raises:
        InvalidParameterError: when the port is in use (naming it, and a free one to pass instead).

    Example:
        >>> first = bind("127.0.0.1", 0)
        >>> port = first.getsockname()[1]
        >>> try:
        ...     bind("127.0.0.1", port, argument="--port")
        ... except ValueError as error:
        ...     print(str(error).split(". Got")[0])
        The '--port' parameter of xaimetrics study serve must be a free port on 127.0.0.1
        >>> first.close()
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # as uvicorn does: a restart right after a stop works (two listeners still cannot share a port)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as error:
        sock.close()
        if error.errno not in (errno.EADDRINUSE, errno.EACCES):
            raise invalid(argument, "xaimetrics study serve", f"a port this machine can listen on at {host}",
                          f"{port} ({error.strerror})", "Check the host name, or pass another --port.") from error  # fmt: skip
        reason = (
            "is in use (another study server?)" if error.errno == errno.EADDRINUSE else "needs privileges"
        )
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host.strip("[]"), 0))
            free = probe.getsockname()[1]
        raise invalid(
            argument, "xaimetrics study serve", f"a free port on {host}", port,
            f"Port {port} {reason}. Serve on another port with --port {free} (or set port = {free} in the "
            "study's .toml), or stop the other server.",
        ) from error  # fmt: skip
    sock.setblocking(False)
    return sock


def serve(config: StudyConfig, *, log_level: str = "warning", sock: socket.socket | None = None) -> None:
    """Serve the study with uvicorn until interrupted (see :func:`create_app`).

    Args:
        config: the study's configuration.
        log_level: uvicorn's.
        sock: a socket from :func:`bind` (default: bind ``config.host:config.port`` now).
    """
    uvicorn = import_optional("uvicorn", extra="studies", caller="serve")
    sock = bind(config.host, config.port) if sock is None else sock
    study, store = open_study(config)
    app = create_app(
        study, store, max_body_bytes=config.max_body_bytes, allowed_hosts=config.hosts,
        secure_cookies=config.secure_cookies,
    )  # fmt: skip
    server = uvicorn.Server(uvicorn.Config(
        app, host=config.host, port=config.port, log_level=log_level, server_header=False,
        proxy_headers=False, limit_concurrency=64, timeout_keep_alive=5, h11_max_incomplete_event_size=16_384,
    ))  # fmt: skip
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        store.close()
