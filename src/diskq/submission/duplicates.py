"""The same measurement in two files: which one counts, and which are refused.

A measurement is its figures (:func:`figures_digest`): the same fio output signed again, by
someone else, under another model name or with another date, is the same measurement and
counts once. Which file stands for it does not depend on where the files sit (path order would
let a copy filed under a name that sorts first push out the original): the strongest claim
stays (:func:`claim_key`):

1. the signature: verified (the key is listed for its principal) before intact (signed, signer
   not checked) before unlisted (a key the allowed-signers file does not list for it) before
   unchecked before unsigned;
2. a measurement before a legacy row (an import of a published table);
3. the file that entered the repository first, where there is a history
   (:mod:`diskq.submission.history`: the order of the branch's first-parent commits, which cannot
   be back-dated); a file in the history before one that is not (an uncommitted file);
4. the earliest measured (the result's ``created`` time): only where the history does not
   decide, since the signer writes that date;
5. the path, so that equal claims still give one answer.

Every other file of the group is reported by name with the keeper's name and why it lost.
Both ``db build`` (which keeps the strongest) and ``diskq validate`` (which refuses a file whose
figures duplicate a file already in its tree) use this module.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from diskq.submission.problems import Problem

#: Signature status, strongest first (``diskq.submission.sign.signature_status`` gives them).
SIGNATURE_ORDER = ("verified", "intact", "unlisted", "unchecked", "unsigned")
_LATEST = "9999-12-31T23:59:59+00:00"


def figures_digest(doc) -> str:
    """SHA-256 over every run's cache state and measured figures (job count, IOPS, bandwidth, I/Os,
    runtime, latencies) and the no-fdatasync step: a result signed again with another ``created``
    time has the same digest. Figures are checked against their raw fio output by validation, so
    the same output gives the same figures."""
    h = hashlib.sha256(b"diskq-figures 1\n")
    for run in doc.runs:
        h.update(f"run {run.write_cache} {run.cache_mechanism}\n".encode())
        for p in [*run.points, *([run.nosync] if run.nosync is not None else [])]:
            sync = p.sync_lat_us
            h.update(
                repr(
                    (
                        p.numjobs,
                        p.iops,
                        p.bw_bytes,
                        p.total_ios,
                        p.runtime_ms,
                        p.lat_us.mean,
                        p.lat_us.p99,
                        sync.mean if sync else None,
                        sync.p99 if sync else None,
                    )
                ).encode()
                + b"\n"
            )
    return h.hexdigest()


def _utc(created: str | None) -> str:
    if not created:
        return _LATEST
    try:
        return datetime.fromisoformat(created).astimezone(UTC).isoformat()
    except (ValueError, OverflowError):
        return _LATEST


@dataclass(frozen=True, slots=True)
class Claim:
    """What one file claims for a measurement: its signature status, whether it is a legacy row,
    when it was measured (None for a legacy row: not known), and where it lies."""

    path: str
    signature: str
    legacy: bool
    created: str | None
    #: (position in the repository's history, "commit abc of DATE") of the commit that added the
    #: file; None where there is no history or the file is not in it
    entered: tuple[int, str] | None = None

    def key(self) -> tuple:
        return claim_key(self)


def claim_key(claim: Claim) -> tuple:
    """Sort key of a claim, strongest first (see the module's rule)."""
    rank = SIGNATURE_ORDER.index(claim.signature) if claim.signature in SIGNATURE_ORDER else len(SIGNATURE_ORDER)
    entered = (0, claim.entered[0]) if claim.entered is not None else (1, 0)
    return (rank, claim.legacy, entered, _utc(None if claim.legacy else claim.created), claim.path)


def why_kept(keeper: Claim, other: Claim) -> str:
    """Why ``keeper`` stands for the measurement rather than ``other``, in words."""
    if keeper.signature != other.signature:
        return f"its signature is {keeper.signature}, this file's is {other.signature}"
    if keeper.legacy != other.legacy:
        return "it is a measurement, this file a legacy row"
    if keeper.entered != other.entered and keeper.entered is not None:
        there = other.entered[1] if other.entered is not None else "is not in the repository's history"
        if other.entered is not None:
            there = f"entered with {there}"
        return f"it entered the repository first, with {keeper.entered[1]} (this file {there})"
    a, b = _utc(None if keeper.legacy else keeper.created), _utc(None if other.legacy else other.created)
    if a != b:
        return f"it was measured earlier ({keeper.created}, this file {other.created})"
    return "equal claims (same signature status, same time): the first path is kept"


def duplicate_message(keeper: Claim, other: Claim) -> str:
    """The problem reported for ``other``, which duplicates ``keeper``'s measurement."""
    return (
        f"duplicate of {keeper.path}: the same measured figures (the same fio output, signed again, "
        f"under another name or with another date) count once, and that file has the stronger claim "
        f"({why_kept(keeper, other)})"
    )


def resolve(claims: list[Claim]) -> tuple[Claim, list[Claim]]:
    """(the claim that stays, the others strongest first) of one group of duplicates."""
    ordered = sorted(claims, key=claim_key)
    return ordered[0], ordered[1:]


def signature_claim(sub, allowed_signers: Path | None) -> str:
    """The signature status of a submission for :class:`Claim` (the statuses of the database's
    ``submissions.signature``): verified or unlisted against ``allowed_signers``, intact without
    one, unsigned without a signature; a signature that does not verify at all claims nothing."""
    from diskq.errors import DiskqError
    from diskq.submission.sign import signature_status, verify_payload

    if sub.signature is None:
        return "unsigned"
    try:
        verify_payload(sub, None, allowed_signers=None)
    except DiskqError:
        return "unsigned"
    return signature_status(sub, allowed_signers)


def _claim(path: Path, sub, allowed_signers: Path | None, entered: tuple[int, str] | None = None) -> Claim:
    created = sub.result.created.isoformat() if sub.result.created and not sub.legacy else None
    return Claim(str(path), signature_claim(sub, allowed_signers), sub.legacy, created, entered)


def entered_of(path: Path, root: Path, history: dict | None) -> tuple[int, str] | None:
    """(position, words) of the commit that added ``path`` (under ``root``), from
    :func:`diskq.submission.history.entries`; None when it is not in the history."""
    if not history:
        return None
    try:
        entry = history.get(path.absolute().relative_to(root.absolute()).as_posix())
    except ValueError:
        return None
    return None if entry is None else (entry.position, entry.describe())


def tree_problems(
    named: dict[Path, object], roots: dict[Path, Path], *, allowed_signers: Path | None = None
) -> list[Problem]:
    """Duplicates among the files ``diskq validate`` was given (``named``: path -> submission)
    and the trees they sit in (``roots``: path -> its ``submissions/`` directory).

    A named file whose figures another file of its tree already holds, a file not named, is
    refused: what the tree holds was there first (the pull-request check names only the files a
    pull request adds or changes), and the file named is the one that entered the repository
    first where there is a history. Among named files with the same figures, all but the
    strongest claim are refused."""
    from diskq.errors import DiskqError
    from diskq.submission import history as history_mod
    from diskq.submission import paths
    from diskq.submission.validate import load_submission

    histories: dict[Path, dict | None] = {}

    def history(root: Path) -> dict | None:  # read only where a duplicate needs it
        if root not in histories:
            histories[root] = history_mod.entries(root)
        return histories[root]

    digests = {p.absolute(): figures_digest(sub.result) for p, sub in named.items()}
    wanted = set(digests.values())
    existing: dict[str, list[Path]] = {}
    root_of: dict[Path, Path] = {}
    for root in sorted(set(roots.values())):
        for q in paths.find_files(root)[0]:
            if q.absolute() in digests:
                continue
            try:
                other = load_submission(q)
            except DiskqError:
                continue  # its own validation reports it
            digest = figures_digest(other.result)
            if digest in wanted:
                existing.setdefault(digest, []).append(q)
                root_of[q] = root
    for found in existing.values():  # the earliest to enter the repository first, then by path
        found.sort(key=lambda q: (entered_of(q, root_of[q], history(root_of[q])) or (float("inf"), ""), str(q)))
    out: list[Problem] = []
    groups: dict[str, list[Path]] = {}
    for path in named:
        digest = digests[path.absolute()]
        if digest in existing:
            first = existing[digest][0]
            entry = entered_of(first, root_of[first], history(root_of[first]))
            where = f"already in the repository since {entry[1]}" if entry else "already in the tree"
            out.append(
                Problem(
                    str(path),
                    "result.runs",
                    (
                        f"duplicates the measured figures of {first}, {where}: the same "
                        "measurement (the same fio output, signed again, under another name or with another date) "
                        "counts once"
                    ),
                )
            )
        else:
            groups.setdefault(digest, []).append(path)
    for group in groups.values():
        if len(group) < 2:
            continue
        keeper, others = resolve(
            [_claim(p, named[p], allowed_signers, entered_of(p, roots[p], history(roots[p]))) for p in group]
        )
        out += [Problem(c.path, "result.runs", duplicate_message(keeper, c)) for c in others]
    return out
