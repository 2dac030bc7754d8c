"""The OpenAI Files + Batches endpoints on top of the fake chat server, over real HTTP, for batch-run tests.

``POST /v1/files`` (multipart upload, ``purpose=batch``), ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/batches`` and ``POST /v1/batches/{id}/cancel``. A batch answers each input
line with :meth:`FakeOpenAIServer.complete` — the same answer a live chat request gets — once it has been looked at
``polls`` times. Faults: ``failing_lines`` (those line numbers get an error in the error file), ``expire_after``
(the batch expires after answering that many lines; the rest get ``batch_expired``), ``done_at_cancel`` (lines
answered before a cancel lands), ``create_delay_s`` (the batch is created, then the answer waits: a client killed
meanwhile never learns the id). ``paid_lines`` counts every line answered with HTTP 200 (what a provider bills).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from collections.abc import Iterable
from typing import Any

from fake_openai_server import FakeOpenAIServer, _Handler

__all__ = ["FakeBatchServer"]


class FakeBatchServer(FakeOpenAIServer):
    def __init__(
        self,
        *args: Any,
        polls: int = 1,
        failing_lines: Iterable[int] = (),
        expire_after: int | None = None,
        done_at_cancel: int = 0,
        create_delay_s: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.polls = polls
        self.failing_lines = set(failing_lines)
        self.expire_after = expire_after
        self.done_at_cancel = done_at_cancel
        self.create_delay_s = create_delay_s
        self.files: dict[str, tuple[str, bytes]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._looks: dict[str, int] = {}
        self.paid_lines = 0
        self.created = threading.Event()
        self._batch_lock = threading.RLock()

    # -- bookkeeping ------------------------------------------------------------------------------------------
    def _file(self, name: str, data: bytes, purpose: str) -> dict[str, Any]:
        with self._batch_lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = (name, data)
        return {
            "id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
            "filename": name, "purpose": purpose, "status": "processed",
        }  # fmt: skip

    def _run(self, batch: dict[str, Any], lines: int | None, status: str) -> None:
        """Answer the first ``lines`` input lines (all: None), the rest get an error; end with ``status``."""
        _, data = self.files[batch["input_file_id"]]
        outputs, errors = [], []
        for number, line in enumerate(data.decode().splitlines()):
            item = json.loads(line)
            if lines is not None and number >= lines:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                errors.append({"id": f"req-{number}", "custom_id": item["custom_id"], "response": None,
                               "error": {"code": code, "message": f"not run: the batch was {status}"}})  # fmt: skip
                continue
            if number in self.failing_lines:
                body = {"error": {"message": "injected failure", "type": "server_error"}}
                errors.append({"id": f"req-{number}", "custom_id": item["custom_id"],
                               "response": {"status_code": 500, "request_id": f"r{number}", "body": body},
                               "error": None})  # fmt: skip
                continue
            code, body = self.complete(item["body"])
            if code == 200:
                self.paid_lines += 1
            outputs.append({"id": f"req-{number}", "custom_id": item["custom_id"],
                            "response": {"status_code": code, "request_id": f"r{number}", "body": body},
                            "error": None})  # fmt: skip
        for kind, items in (("output_file_id", outputs), ("error_file_id", errors)):
            if items:
                text = "".join(json.dumps(i) + "\n" for i in items).encode()
                batch[kind] = self._file(f"{batch['id']}-{kind}.jsonl", text, "batch_output")["id"]
        batch["status"] = status
        batch["request_counts"] = {
            "total": len(outputs) + len(errors), "completed": len(outputs), "failed": len(errors)
        }  # fmt: skip

    def _look(self, batch: dict[str, Any]) -> None:
        if batch["status"] not in ("validating", "in_progress"):
            return
        self._looks[batch["id"]] = self._looks.get(batch["id"], 0) + 1
        if self._looks[batch["id"]] < self.polls:
            batch["status"] = "in_progress"
        elif self.expire_after is not None:
            self._run(batch, self.expire_after, "expired")
        else:
            self._run(batch, None, "completed")

    # -- routes -----------------------------------------------------------------------------------------------
    def _route(self, handler: _Handler, method: str, raw: bytes, body: Any) -> bool:
        path = handler.path.split("?")[0].rstrip("/")
        parts = path.split("/")[2:]  # after /v1
        with self._batch_lock:
            if method == "POST" and parts == ["files"]:
                handler._send_json(200, self._upload(handler, raw))
            elif method == "GET" and len(parts) == 3 and parts[0] == "files" and parts[2] == "content":
                if parts[1] not in self.files:
                    return False
                handler._send_bytes(200, self.files[parts[1]][1])
            elif method == "POST" and parts == ["batches"]:
                batch = self._create(body)
            elif method == "GET" and parts == ["batches"]:
                data = list(reversed(self.batches.values()))
                handler._send_json(200, {"object": "list", "data": data, "has_more": False,
                                         "first_id": data[0]["id"] if data else None,
                                         "last_id": data[-1]["id"] if data else None})  # fmt: skip
            elif len(parts) >= 2 and parts[0] == "batches" and parts[1] in self.batches:
                batch = self.batches[parts[1]]
                if method == "POST" and parts[2:] == ["cancel"]:
                    if batch["status"] in ("validating", "in_progress"):
                        self._run(batch, self.done_at_cancel, "cancelled")
                else:
                    self._look(batch)
                handler._send_json(200, batch)
            else:
                return False
        if method == "POST" and parts == ["batches"]:
            self.created.set()
            if self.create_delay_s:
                self._sleep(self.create_delay_s)
            handler._send_json(200, batch)
        return True

    def _upload(self, handler: _Handler, raw: bytes) -> dict[str, Any]:
        head = f"Content-Type: {handler.headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            payload = part.get_payload(decode=True)
            fields[str(part.get_param("name", header="content-disposition"))] = (
                part.get_filename(), payload if isinstance(payload, bytes) else b""
            )  # fmt: skip
        name, data = fields["file"]
        return self._file(name or "upload.jsonl", data, fields["purpose"][1].decode())

    def _create(self, body: dict[str, Any]) -> dict[str, Any]:
        batch_id = f"batch_{len(self.batches) + 1}"
        batch = {
            "id": batch_id, "object": "batch", "endpoint": body["endpoint"], "input_file_id": body["input_file_id"],
            "completion_window": body["completion_window"], "status": "validating", "created_at": int(time.time()),
            "metadata": body.get("metadata"), "output_file_id": None, "error_file_id": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
        }  # fmt: skip
        self.batches[batch_id] = batch
        return batch
