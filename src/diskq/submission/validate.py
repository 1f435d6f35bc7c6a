"""Validation of submission files: everything that must hold before a file enters the database.

Files come from strangers, so nothing here trusts its input: only regular files are read, never
through a symbolic link; the JSON reader (:mod:`diskq.submission.strictjson`) refuses NaN,
Infinity, duplicate member names, byte-order marks, invalid UTF-8, oversize files, absurd
nesting and integers a signature cannot hold exactly (beyond 2^53 - 1); the model is applied in
strict mode (no "12" for 12); every finding is a :class:`Problem` of one line, and
:func:`validate_file` never raises for a bad file.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from diskq import files
from diskq.errors import DiskqError, SignatureError, SubmissionError
from diskq.result import ResultDocument
from diskq.submission import methods, paths
from diskq.submission.analysis import analysis_problems
from diskq.submission.canonical import CanonicalError
from diskq.submission.complete import incomplete_problems
from diskq.submission.figures import check_figures
from diskq.submission.model import SAFE_TEXT, Submission
from diskq.submission.problems import Problem, field_path
from diskq.submission.replay import replay_problems
from diskq.submission.sign import attribution_problem, payload_and_id, verify_payload
from diskq.submission.strictjson import UnsafeInteger, parse_json
from diskq.submission.sustained import sustained_problems

__all__ = ["Problem", "load_submission", "validate_file", "check_figures", "MAX_BYTES"]

#: Largest submission file accepted: room for two sweeps of 30 steps with fio's full JSON each.
MAX_BYTES = 4 * 1024 * 1024
#: Schema errors reported per file before the rest are summarised.
MAX_SCHEMA_PROBLEMS = 10
_SAFE = re.compile(SAFE_TEXT)
_MAX_NAME = 100


def _kind_problem(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "is a symbolic link: symbolic links are not followed"
    if stat.S_ISDIR(mode):
        return "is a directory, not a submission file"
    return "is not a regular file (a FIFO, socket or device): only regular files are read"


def _read(path: Path, max_bytes: int) -> bytes:
    """The file's bytes: a regular file only, never through a symbolic link, and never waiting on
    a FIFO (:func:`diskq.files.read_regular`)."""
    try:
        data = files.read_regular(path, max_bytes)
    except files.NotRegularFile as exc:
        raise SubmissionError(_kind_problem(exc.mode)) from None
    except files.FileTooLarge:
        raise SubmissionError(f"file is larger than {max_bytes} bytes") from None
    except files.UnreadableFile as exc:
        raise SubmissionError(exc.message) from None
    return _sized(data, max_bytes)


def _sized(data: bytes, max_bytes: int) -> bytes:
    if len(data) > max_bytes:
        raise SubmissionError(f"file is larger than {max_bytes} bytes")
    if not data.strip():
        raise SubmissionError("file is empty")
    return data


def _load(path: Path, max_bytes: int, data: bytes | None = None) -> tuple[Submission | None, list[Problem]]:
    label = str(path)
    try:
        data = _read(path, max_bytes) if data is None else _sized(data, max_bytes)
        obj = parse_json(data)
    except UnsafeInteger as exc:
        return None, [Problem(label, exc.field, exc.detail)]
    except SubmissionError as exc:
        return None, [Problem(label, "-", exc.message)]
    if not isinstance(obj, dict):
        return None, [Problem(label, "-", f"top level is a JSON {type(obj).__name__}, not an object")]
    if obj.get("format") != "diskq-submission":
        hint = " (a result document: sign it with `diskq sign` first)" if obj.get("format") == "diskq-result" else ""
        return None, [Problem(label, "format", f"is not 'diskq-submission'{hint}")]
    try:
        return Submission.model_validate_json(data, strict=True), []
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        out = [Problem(label, field_path(e["loc"]) or "-", e["msg"]) for e in errors[:MAX_SCHEMA_PROBLEMS]]
        if len(errors) > MAX_SCHEMA_PROBLEMS:
            out.append(Problem(label, "-", f"and {len(errors) - MAX_SCHEMA_PROBLEMS} more schema errors"))
        return None, out
    except (ValueError, RecursionError) as exc:
        return None, [Problem(label, "-", f"not acceptable JSON: {str(exc)[:200]}")]


def load_submission(path: Path, *, max_bytes: int = MAX_BYTES) -> Submission:
    """Read and schema-check one submission file; raise :class:`SubmissionError` (one line)."""
    sub, problems = _load(Path(path), max_bytes)
    if sub is None:
        first = problems[0]
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SubmissionError(f"{first}{more}")
    return sub


def _text_problems(sub: Submission) -> list[Problem]:
    out = []
    dev = sub.result.device
    for name in ("vendor", "model", "firmware", "interface_speed"):
        value = getattr(dev, name)
        if value is None:
            continue
        if len(value) > _MAX_NAME:
            out.append(Problem("", f"result.device.{name}", f"longer than {_MAX_NAME} characters"))
        elif not _SAFE.match(value):
            out.append(
                Problem(
                    "",
                    f"result.device.{name}",
                    'holds markup, control, bidirectional or invisible characters (< > & " \\, U+202E and the like)',
                )
            )
    out += _plp_fact_problems(dev)
    return out


def _plp_fact_problems(dev) -> list[Problem]:
    """Power-loss facts must be ones diskq's parser writes (known fields, claims that follow from
    the raw value) and plain text: a hand-edited fact would otherwise turn into evidence."""
    from diskq.probe.plp import fact_problem

    out = []
    for i, fact in enumerate(dev.plp_facts):
        where = f"result.device.plp_facts[{i}]"
        texts = (fact.source, fact.field, fact.raw, fact.meaning)
        if any(len(t) > 300 for t in texts):
            out.append(Problem("", where, "longer than 300 characters"))
        elif not all(_SAFE.match(t) for t in texts):
            out.append(Problem("", where, 'holds markup or control characters (< > & " \\)'))
        else:
            why = fact_problem(fact)
            if why:
                out.append(Problem("", where, why))
    return out


def _path_problems(sub: Submission, path: Path, root: Path | None) -> list[Problem]:
    out = []
    if path.name != f"{sub.id}.json":
        out.append(Problem("", "id", f"file name must be {sub.id}.json"))
    root = root if root is not None else paths.find_root(path)
    if root is not None:
        expected = paths.relative_path(sub.result.device, sub.id)
        try:
            actual = PurePosixPath(*Path(path).absolute().relative_to(Path(root).absolute()).parts)
        except ValueError:
            actual = None
        if actual != expected:
            out.append(Problem("", "-", f"file belongs at {paths.SUBMISSIONS_DIR}/{expected}"))
    return out


def _memory_backed_problems(result) -> list[Problem]:
    """A bench of a RAM disk, zram or a file on tmpfs measures memory, not a drive: it has no
    place in the device database (diskq bench marks such documents with a note, and fio's own
    output shows it when the note is gone: :mod:`diskq.analyse.rawtarget`)."""
    from diskq.analyse.memorybacked import MEMORY_BACKED
    from diskq.analyse.rawtarget import memory_evidence

    out = [
        Problem("", f"result.notes[{i}]", "measured a memory-backed target, not a drive: not a submission")
        for i, note in enumerate(result.notes)
        if isinstance(note, str) and note.startswith(MEMORY_BACKED)
    ]
    if not out:  # the note can be deleted; fio's own output stays (``[memory_backed]`` in criteria.toml)
        evidence = memory_evidence(result)
        if evidence:
            out.append(
                Problem(
                    "", "result.runs", f"measured a memory-backed target, not a drive ({evidence}): not a submission"
                )
            )
    return out


def _raw_data_problems(result: ResultDocument) -> list[Problem]:
    out = []
    for r, run in enumerate(result.runs):
        for i, p in enumerate(run.points):
            if p.fio is None:
                out.append(Problem("", f"result.runs[{r}].points[{i}].fio", "raw fio output is missing"))
        if run.nosync is not None and run.nosync.fio is None:
            out.append(Problem("", f"result.runs[{r}].nosync.fio", "raw fio output is missing"))
        for i, p in enumerate(run.sizes.points if run.sizes is not None else []):
            if p.fio is None:
                out.append(Problem("", f"result.runs[{r}].sizes.points[{i}].fio", "raw fio output is missing"))
    return out


def validate_file(
    path: Path,
    *,
    root: Path | None = None,
    allowed_signers: Path | None = None,
    require_signature: bool = True,
    seen_ids: set[str] | None = None,
    allow_legacy: bool = True,
    data: bytes | None = None,
    contribution: bool = False,
) -> tuple[Submission | None, list[Problem]]:
    """Check one submission file. Returns the submission (None if unreadable) and its problems.

    ``root`` is the ``submissions/`` directory the file should sit in (found from the path when
    None); ``allowed_signers`` restricts who may have signed; ``seen_ids`` collects ids across
    calls and reports repeats; ``allow_legacy=False`` refuses legacy files (contributors cannot
    add unsigned data); ``data`` is the file's content when the caller has read it already;
    ``contribution`` also refuses a result a pull request may not contribute (one that measures
    the host, or names no model: :mod:`diskq.submission.contributable`).
    """
    path = Path(path)
    label = str(path)
    try:
        sub, problems = _load(path, MAX_BYTES, data)
        if sub is None:
            return None, problems
        problems = _check(
            sub,
            path,
            root=root,
            allowed_signers=allowed_signers,
            require_signature=require_signature,
            seen_ids=seen_ids,
            allow_legacy=allow_legacy,
        )
        if contribution:
            from diskq.submission.contributable import not_contributable

            why = not_contributable(sub.result)
            if why:
                problems.append(Problem("", "result.device", f"not a contribution: {why}"))
        return sub, [Problem(label, p.field, p.message) for p in problems]
    except (DiskqError, CanonicalError, ValueError, TypeError, RecursionError, OverflowError) as exc:
        # A defect, not the file's fault: still one line, never a traceback.
        return None, [Problem(label, "-", f"internal error while validating: {type(exc).__name__}: {exc}")]


def _check(
    sub: Submission,
    path: Path,
    *,
    root: Path | None,
    allowed_signers: Path | None,
    require_signature: bool,
    seen_ids: set[str] | None,
    allow_legacy: bool,
) -> list[Problem]:
    out: list[Problem] = []
    method = sub.result.method
    spec = methods.lookup(method.id, method.version)
    if spec is None:
        out.append(Problem("", "result.method", f"unknown method {method.id[:80]!r} version {method.version}"))
    try:
        payload, expected_id = payload_and_id(sub)
    except SignatureError as exc:
        return out + [Problem("", "-", exc.message)]
    if sub.id != expected_id:
        out.append(Problem("", "id", f"is not derived from the result (expected {expected_id})"))
    out += _path_problems(sub, path, root)
    if seen_ids is not None:
        if sub.id in seen_ids:
            out.append(Problem("", "id", "duplicate: another submission has the same id (same result)"))
        seen_ids.add(sub.id)
    out += _text_problems(sub)

    if sub.legacy:
        if not allow_legacy:
            out.append(Problem("", "legacy", "legacy submissions are imported by maintainers only"))
        if sub.provenance is None:
            out.append(Problem("", "provenance", "legacy submissions must name their source"))
        if (method.id, method.version) not in methods.LEGACY_METHODS:
            out.append(
                Problem(
                    "",
                    "result.method",
                    "legacy submissions use a community method ("
                    + ", ".join(sorted(m for m, _ in methods.LEGACY_METHODS))
                    + ")",
                )
            )
        if sub.signature is not None:
            # Legacy rows are unsigned by definition: a signature would make a re-signed copy of
            # the published table look like a contributor's verified measurement.
            out.append(
                Problem(
                    "",
                    "signature",
                    "a legacy submission is unsigned by definition: "
                    "remove the signature, or submit a measurement that is not legacy",
                )
            )
    else:
        out += _raw_data_problems(sub.result)
        out += analysis_problems(sub.result)
        out += _memory_backed_problems(sub.result)
        out += incomplete_problems(sub.result)
        out += replay_problems(sub.result)

    if sub.signature is None:
        if require_signature and not sub.legacy:
            out.append(Problem("", "signature", "missing: sign the file with `diskq sign`"))
    else:
        try:
            verify_payload(sub, payload, allowed_signers=allowed_signers)
        except SignatureError as exc:
            out.append(Problem("", "signature", exc.message))
        mismatch = attribution_problem(sub)
        if mismatch:
            out.append(Problem("", "contributor.github", mismatch))

    out += check_figures(sub.result)
    out += sustained_problems(sub.result)
    return out
