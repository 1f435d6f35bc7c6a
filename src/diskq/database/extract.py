"""One submission file -> the compact record the database build needs.

This is the per-file work of ``diskq db build`` and runs in worker processes, so it stays lean:
read the bytes once, validate with the current submission code, and keep only what the tables
hold. Point rows go straight to the ``points`` table; the aggregation keeps a packed copy of each
run's curve (:class:`~diskq.database.record.RunSummary`) so that no table row ever needs all points re-read.
"""

from __future__ import annotations

import functools
import hashlib
import math
import stat
from array import array
from pathlib import Path

from diskq import files
from diskq.analyse.noise import iops_spread
from diskq.database import sustained
from diskq.database.file_checks import conflicts_of, flush_ok, legacy_sources, not_a_drive
from diskq.database.keys import device_id, firmware_key, model_key
from diskq.database.record import NAN, RunSummary, Skipped, SubmissionRecord, all_finite, pack_sizes
from diskq.database.vendor import row_vendor
from diskq.errors import DatabaseError
from diskq.submission import sign
from diskq.submission.duplicates import figures_digest

#: Larger files are refused before they are parsed (a submission with raw fio JSON for a
#: 64-step sweep at two cache states is well under 4 MiB).
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_MODEL_CHARS = 200


@functools.cache
def _validator():
    """The submission package's ``validate_file``, or None where it is not installed."""
    try:
        from diskq.submission.validate import validate_file
    except ImportError:
        return None
    return validate_file


#: Signature status of an accepted submission (``submissions.signature``):
#: ``verified``  intact, and the key is listed for its principal in the allowed-signers file the
#:               build was given;
#: ``intact``    intact (nothing changed since the embedded key signed it), signer not checked:
#:               the build had no allowed-signers file (or could not consult it);
#: ``unlisted``  intact, but the key is not listed for that principal in the allowed-signers file;
#: ``unchecked`` signed, but the validator is not available to check anything;
#: ``unsigned``  no signature (legacy imports, unsigned files).
SIGNATURE_STATUSES = ("verified", "intact", "unlisted", "unchecked", "unsigned")


def _validate(path: Path, data: bytes, root: Path | None, allowed_signers: Path | None):
    """(submission or None, problems, signature status) with the current submission code."""
    validate_file = _validator()
    if validate_file is not None:
        # The signature is checked for integrity only: a key missing from allowed_signers does
        # not make the file invalid, only not verified (its status says so).
        sub, problems = validate_file(path, root=root, allowed_signers=None, require_signature=False, data=data)
        problems = [
            Skipped(str(getattr(p, "path", path)), str(getattr(p, "field", "")), str(getattr(p, "message", p)))
            for p in problems
        ]
        if sub is None or problems:
            return None, problems or [Skipped(str(path), "", "rejected by the validator")], "unsigned"
        return sub, [], sign.signature_status(sub, allowed_signers)

    from pydantic import ValidationError

    from diskq.submission.model import Submission

    try:
        sub = Submission.model_validate_json(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err.get("loc", ()))
        return (
            None,
            [Skipped(str(path), field, f"{err.get('msg', 'invalid')} ({exc.error_count()} problem(s))")],
            "unsigned",
        )
    except (ValueError, RecursionError) as exc:
        return None, [Skipped(str(path), "", f"not a JSON submission: {type(exc).__name__}")], "unsigned"
    return sub, [], "unsigned" if sub.signature is None else "unchecked"


def read_file(path: Path) -> bytes:
    """A submission file's bytes: a regular file only (a FIFO or a device is refused, never
    read), no symbolic link followed. Raises :class:`DatabaseError` saying why not."""
    try:
        return files.read_regular(path, MAX_FILE_BYTES)
    except files.NotRegularFile as exc:
        if stat.S_ISLNK(exc.mode):
            raise DatabaseError("symbolic links are not followed") from None
        raise DatabaseError(exc.message) from None
    except files.UnreadableFile as exc:
        raise DatabaseError(exc.message) from None


def read_submission(
    path: Path, root: Path, allowed_signers: Path | None = None, *, data: bytes | None = None
) -> tuple[SubmissionRecord | None, list[Skipped]]:
    """Validate one file and reduce it to a :class:`SubmissionRecord`, or say why not. ``data``
    is the file's content when the caller has read it already (with :func:`read_file`)."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = str(path)

    def skip(field: str, message: str):
        return None, [Skipped(rel, field, message)]

    if data is None:
        try:
            data = read_file(path)
        except DatabaseError as exc:
            return skip("", exc.message)
    try:
        sub, problems, status = _validate(path, data, root, allowed_signers)
        verified = status == "verified"
    except RecursionError:
        return skip("", "JSON nested too deeply")
    except Exception as exc:  # noqa: BLE001 - one odd file must not stop the build; it is reported
        return skip("", f"internal error while validating: {type(exc).__name__}: {str(exc)[:200]}")
    if sub is None:
        return None, [Skipped(rel, p.field, p.message) for p in problems]

    doc = sub.result
    dev = doc.device
    model = " ".join((dev.model or "").split())
    if not model:
        return skip("result.device.model", "no device model: the submission cannot be grouped")
    if len(model) > MAX_MODEL_CHARS:
        return skip("result.device.model", f"model name longer than {MAX_MODEL_CHARS} characters")
    mkey, fkey = model_key(model), firmware_key(dev.firmware)
    did = device_id(mkey, fkey)

    run_rows, point_rows, runs, size_rows = [], [], [], []
    sources = legacy_sources(sub)
    for r_index, run in enumerate(doc.runs):
        curve, held = array("d"), array("d")
        left_out, paired = conflicts_of(run, dev.filesystem)
        final_if_kept, words = sources.get(r_index, (False, None))
        peak_final = final_if_kept and not left_out
        best_1, best_max, best_jobs, p99_1 = None, None, None, None
        for seq, pt in enumerate(run.points):
            sync = pt.sync_lat_us
            values = (
                pt.iops,
                pt.bw_bytes,
                pt.lat_us.mean,
                pt.lat_us.p99,
                sync.mean if sync else None,
                sync.p99 if sync else None,
            )
            if not all_finite(values):
                return skip(f"result.runs.{r_index}.points.{seq}", "a figure is not a finite number")
            why = None if pt.interrupted else left_out.get(pt.numjobs)
            pair = None if pt.interrupted else paired.get(pt.numjobs)
            point_rows.append(
                (sub.id, r_index, seq, pt.numjobs, *values, int(pt.interrupted), why or pair, int(why is not None))
            )
            if pt.interrupted:
                continue
            lat_mean, lat_p99, sync_mean, sync_p99 = values[2:]
            (curve if why is None else held).extend(
                (
                    pt.numjobs,
                    pt.iops,
                    NAN if lat_mean is None else lat_mean,
                    NAN if sync_mean is None else sync_mean,
                    NAN if sync_p99 is None else sync_p99,
                    NAN if lat_p99 is None else lat_p99,
                )
            )
            if why is not None:
                continue
            if pt.numjobs == 1 and (best_1 is None or pt.iops > best_1):
                best_1, p99_1 = pt.iops, values[5]
            if best_max is None or pt.iops > best_max or (pt.iops == best_max and pt.numjobs < best_jobs):
                best_max, best_jobs = pt.iops, pt.numjobs
        sized, why = _size_rows(sub.id, r_index, run.sizes)
        if why is not None:
            return skip(f"result.runs.{r_index}.sizes.points.{why}", "a figure is not a finite number")
        size_rows += sized
        ok = flush_ok(run, dev.volatile_write_cache)
        run_rows.append(
            (
                sub.id,
                r_index,
                run.write_cache,
                run.cache_mechanism,
                int(run.cache_changed),
                None if ok is None else int(ok),
                best_1,
                best_max,
                best_jobs,
                p99_1,
                int(peak_final),
                words,
            )
        )
        nosync = run.nosync.iops if run.nosync is not None and math.isfinite(run.nosync.iops) else None
        solo = next((pt for pt in run.points if pt.numjobs == 1 and not pt.interrupted), None)
        spread = iops_spread(solo.fio) if solo is not None else None
        runs.append(
            RunSummary(
                r_index,
                run.write_cache,
                ok,
                nosync,
                curve,
                run.cache_mechanism,
                run.cache_changed,
                peak_final=peak_final,
                source_words=words,
                solo_spread=spread,
                sizes=pack_sizes([r for r in sized if r[1] == r_index]),
                held=held,
                peak_final_if_kept=final_if_kept,
            )
        )

    try:
        sustained_rows = sustained.rows(sub.id, doc)
    except sustained.NotFinite as exc:
        return skip(f"result.{exc.args[0]}", "a figure is not a finite number")

    # a legacy row's document is dated when it was imported: its measurement date is not known
    created = doc.created.isoformat() if doc.created and not sub.legacy else None
    vendor = row_vendor(model, dev.vendor)
    contributor = None
    if sub.contributor:
        contributor = contributor_text(sub.contributor.name, sub.contributor.github)
    row = (
        sub.id,
        did,
        rel,
        hashlib.sha256(data).hexdigest(),
        created,
        int(sub.legacy),
        int(verified),
        sub.signature.principal if sub.signature else None,
        contributor,
        sub.provenance.source if sub.provenance else None,
        model,
        vendor,
        dev.firmware,
        dev.capacity_bytes,
        dev.protocol,
        dev.media,
        doc.method.id,
        doc.method.version,
        doc.method.fio_version,
        doc.method.kernel,
        doc.method.diskq_version,
        None if dev.volatile_write_cache is None else int(dev.volatile_write_cache),
        status,
        figures_digest(doc),
        not_a_drive(doc),
    )
    return SubmissionRecord(
        id=sub.id,
        device_id=did,
        model_key=mkey,
        firmware_key=fkey,
        row=row,
        run_rows=run_rows,
        point_rows=point_rows,
        runs=runs,
        model=model,
        vendor=vendor,
        firmware=dev.firmware,
        capacity_bytes=dev.capacity_bytes,
        protocol=dev.protocol,
        media=dev.media,
        legacy=sub.legacy,
        verified=verified,
        method=(doc.method.id, doc.method.version),
        created=created,
        volatile_write_cache=dev.volatile_write_cache,
        signature=status,
        plp_facts=[f.model_dump(mode="json") for f in dev.plp_facts],
        figures_digest=row[23],
        not_drive=row[24],
        size_rows=size_rows,
        sustained_rows=sustained_rows,
        sustained=[sustained.Measurement.of(r) for r in sustained_rows],
    ), []


def _size_rows(sid: str, r_index: int, profile) -> tuple[list[tuple], int | None]:
    """The ``size_points`` rows of one run's block-size profile, and the index of the first step
    with a figure that is not a finite number (None when every figure is)."""
    if profile is None:
        return [], None
    rows = []
    for seq, p in enumerate(profile.points):
        lat, sync = p.lat_us, p.sync_lat_us
        values = (p.iops, p.bw_bytes, lat.p50, lat.p99, sync.p50 if sync else None, sync.p99 if sync else None)
        if not all_finite(values):
            return [], seq
        rows.append(
            (sid, r_index, seq, p.block_size, *values, int(p.interrupted), profile.method.id, profile.method.version)
        )
    return rows, None


def contributor_text(name: str | None, github: str | None) -> str | None:
    """How a submission's contributor is shown: ``Jane Doe (@octocat)`` when the file gives both
    a name and a GitHub login, else whichever it gives.

    >>> contributor_text("Jane Doe", "octocat"), contributor_text(None, "octocat"), contributor_text("Jane", None)
    ('Jane Doe (@octocat)', 'octocat', 'Jane')
    """
    if name and github:
        return f"{name} (@{github})"
    return github or name or None
