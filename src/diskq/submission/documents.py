"""Reading one diskq document named on a command line: a result document or a submission.

``diskq sign`` and ``diskq plan FILE`` both take either kind. A path that is not a readable
regular file of JSON (a FIFO, a device, a directory, a huge file, not UTF-8, not JSON) is a wrong
argument, :class:`~diskq.errors.InvalidInput`; a diskq document whose fields do not validate is
the caller's ``invalid`` error (signing calls it a :class:`~diskq.errors.SubmissionError`).
"""

from __future__ import annotations

from pathlib import Path

from diskq import files
from diskq.errors import DiskqError, InvalidInput, SubmissionError

#: the database reads no larger file (``diskq.database.extract.MAX_FILE_BYTES``), so no larger
#: document can become a submission
MAX_BYTES = 16 * 1024 * 1024


def read_document(
    path: Path, *, invalid: type[DiskqError] = InvalidInput, hint: str | None = None, verb: str | None = None
):
    """The :class:`~diskq.result.ResultDocument` or :class:`~diskq.submission.model.Submission`
    in ``path``, validated strictly. ``hint`` goes with the errors about a wrong file; ``verb``
    (``"sign"``) starts the errors about an invalid document: ``cannot sign PATH: ...``."""
    from pydantic import ValidationError

    from diskq.result import ResultDocument
    from diskq.submission.integers import describe
    from diskq.submission.model import Submission
    from diskq.submission.problems import field_path
    from diskq.submission.strictjson import UnsafeInteger, parse_json

    where = f"cannot {verb} {path}" if verb else str(path)
    try:
        raw = files.read_regular(path, MAX_BYTES, follow_symlinks=True)
    except files.UnreadableFile as exc:
        if not path.exists():
            raise InvalidInput(f"{path} does not exist", hint=hint) from None
        raise InvalidInput(f"{path} {exc.message}", hint=hint) from None
    try:
        data = parse_json(raw)
    except UnsafeInteger as exc:
        raise invalid(f"{where}: {exc.field}: {describe(exc.text)}") from None
    except SubmissionError as exc:  # not UTF-8, not JSON, nested too deeply: a wrong file
        raise InvalidInput(f"{path}: {exc.message}", hint=hint) from None
    kind = data.get("format") if isinstance(data, dict) else None
    model = {"diskq-result": ResultDocument, "diskq-submission": Submission}.get(kind)
    if model is None:
        raise InvalidInput(f"{path} is neither a diskq result document nor a submission", hint=hint)
    try:
        return model.model_validate_json(raw, strict=True)
    except ValidationError as exc:
        e = exc.errors(include_url=False, include_input=False)[0]
        raise invalid(f"{where}: {field_path(e['loc'])}: {e['msg']}") from None
