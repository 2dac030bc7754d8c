"""Why a write failed, in words: a full disk, the process's file-size limit, a read-only file system, missing
permission, or a path whose folder is a file.

SQLite and the OS report these as terse codes (``disk I/O error``, ``attempt to write a readonly database``,
``[Errno 27] File too large``); a user reading them cannot tell a healthy store on a full disk from a corrupted
one. :func:`write_failure_cause` looks at the error *and* at the machine (free space, ``ulimit -f``, the
mount's read-only flag, ``os.access``) and names the cause and its fix. Nothing here writes.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

__all__ = ["is_write_failure", "write_failure_cause"]

# SQLite primary result codes (https://sqlite.org/rescode.html)
_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 3, 8, 10, 13, 14
_WRITE_CODES = {_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN}
_WRITE_ERRNOS = {
    errno.ENOSPC,
    errno.EFBIG,
    errno.EROFS,
    errno.EACCES,
    errno.EPERM,
    errno.ENOTDIR,
    errno.EDQUOT,
}


def _sqlite_code(error: BaseException) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


def is_write_failure(error: BaseException) -> bool:
    """Whether ``error`` is a failed write (disk, limit, permission), not damaged contents.

    Example:
        >>> is_write_failure(OSError(errno.ENOSPC, "No space left on device"))
        True
        >>> is_write_failure(ValueError("x"))
        False
    """
    if isinstance(error, sqlite3.DatabaseError):
        code = _sqlite_code(error)
        if code is not None:
            return code in _WRITE_CODES
        message = str(error)
        return any(word in message for word in ("disk is full", "disk I/O", "readonly", "unable to open"))
    return isinstance(error, OSError) and error.errno in _WRITE_ERRNOS


def _existing_folder(path: Path) -> Path:
    folder = path if path.is_dir() else path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _file_size_limit() -> int | None:
    """The process's file-size limit (``ulimit -f``) in bytes, ``None`` when unlimited or not POSIX."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def write_failure_cause(path: str | os.PathLike[str], error: BaseException) -> str:
    """One sentence naming why writing ``path`` failed and how to fix it.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> (folder / "a-file").write_text("x")
        1
        >>> write_failure_cause(folder / "a-file" / "results.sqlite", OSError(errno.ENOTDIR, "Not a directory"))[:36]
        'a part of its folder path is a file,'
    """
    path = Path(path)
    code = _sqlite_code(error)
    number = getattr(error, "errno", None)
    for parent in path.parents:  # a file where a folder should be (e.g. 'results.csv/out.csv')
        if parent.exists():
            if not parent.is_dir():
                return f"a part of its folder path is a file, not a folder ({parent}). Choose another path"
            break
    soft = _file_size_limit()
    if soft is not None:
        largest = max(_size(path.with_name(path.name + suffix)) for suffix in ("", "-wal", "-journal"))
        if number == errno.EFBIG or largest + 64 * 1024 >= soft:
            return (
                f"the process's file-size limit (ulimit -f: {soft:,} bytes) was reached ({path.name} and its "
                f"journal reach {largest:,} bytes). Raise the limit ('ulimit -f unlimited') or write elsewhere"
            )
    folder = _existing_folder(path)
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None
    if (
        number in (errno.ENOSPC, errno.EDQUOT)
        or code == _SQLITE_FULL
        or (free is not None and free < 1 << 20)
    ):
        return (
            f"the disk holding {folder} is full ({'unknown' if free is None else f'{free:,} bytes'} free). "
            "Free some space or write elsewhere"
        )
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        read_only = False
    if read_only or number == errno.EROFS:
        return (
            f"{folder} is on a read-only file system. Copy the folder somewhere writable, or write elsewhere"
        )
    if (
        number in (errno.EACCES, errno.EPERM)
        or code in (_SQLITE_READONLY, _SQLITE_PERM)
        or not os.access(folder, os.W_OK)
        or (path.exists() and not os.access(path, os.W_OK))
    ):
        return (
            f"permission denied: this user (uid {os.getuid()}) may not write {path if path.exists() else folder}"
            ". Fix its permissions, or write elsewhere"
        )
    return f"the write failed ({type(error).__name__}: {error}). Check the disk and the folder, then retry"
