"""``diskq import-fio``: results people already have, made by hand with the community command.

Input is one fio JSON output (``--output-format=json``) per numjobs step of::

    fio --filename /dev/X --direct=1 --fdatasync=1 --iodepth=1 --runtime=20 --time_based \
        --rw=write --bs=4k --group_reporting --name=ceph-iops --numjobs=N --output-format=json

and optionally the drive's ``smartctl --json -x`` output for its identity. The output is a
result document under the method ``community-fio-ceph-iops`` v1, ready for ``diskq sign``.
The raw fio JSON is kept in every point, so validation recomputes every figure from it.

Each point is read by the same parser as ``diskq bench`` (:func:`diskq.bench.fiojson.point_from_json`,
fdatasync percentiles included), after the validator's own reader has checked that the run is the
community command; the document then goes through the same analysis as a bench result (scaling
class, verdicts). fio's JSON is read leniently where fio itself is at fault: some fio 3.x
versions print the same percentile key twice (``"0.00"``), and the last one is kept
(:func:`diskq.submission.strictjson.parse_fio_json`).
"""

from __future__ import annotations

import platform
from pathlib import Path

from diskq import __version__
from diskq.analyse import annotate
from diskq.analyse.knob import DECLARED
from diskq.errors import InvalidInput
from diskq.result import CacheState, Device, Method, Peak, Point, ResultDocument, Run
from diskq.submission import methods
from diskq.submission.fiojson import read_fio
from diskq.submission.strictjson import parse_fio_json, parse_json

_NOT_PARAMS = {"filename", "numjobs", "output-format", "output"}


def point_from_fio(data: dict, *, where: str = "fio JSON") -> Point:
    """One point from one fio JSON document made with the community command."""
    from diskq.bench import fiojson
    from diskq.errors import DiskqError

    fig, why = read_fio(data)
    if fig is None:
        raise InvalidInput(f"{where}: {why}")
    if fig.errors:
        raise InvalidInput(f"{where}: {fig.errors[0]}")
    issues = methods.option_problems(fig.options, methods.KNOWN_METHODS[methods.COMMUNITY])
    if issues:
        raise InvalidInput(
            f"{where}: not the community command: {', '.join(issues)}",
            hint=f"import-fio accepts runs of: {methods.COMMUNITY_COMMAND}",
        )
    nj = fig.options.get("numjobs", "1")
    if not nj.isdigit() or not 1 <= int(nj) <= 4096:
        raise InvalidInput(f"{where}: numjobs {nj!r} is not a whole number from 1 to 4096")
    numjobs = int(nj)
    if fig.entries > 1 and fig.entries != numjobs:
        raise InvalidInput(f"{where}: {fig.entries} job entries for numjobs={numjobs}")
    try:
        return fiojson.point_from_json(data, numjobs)
    except DiskqError as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None


def import_fio(
    fio_docs: list[tuple[str, dict]],
    *,
    device: Device | None = None,
    write_cache: CacheState = "unknown",
    cache_mechanism: str = "unknown",
) -> ResultDocument:
    """A result document from ``(name, fio_json)`` pairs, one per numjobs step.

    ``cache_mechanism`` is the knob the importer says set ``write_cache``: ``drive``, ``kernel``
    or ``unknown`` (recorded as ``drive``, ``sysfs``, ``unknown``: :mod:`diskq.analyse.knob`).
    An "off" by the kernel's knob or an unknown one counts as unsafe, as in ``diskq bench``."""
    if not fio_docs:
        raise InvalidInput("no fio JSON files given")
    if cache_mechanism not in DECLARED:
        raise InvalidInput(f"cache mechanism must be drive, kernel or unknown, not {cache_mechanism!r}")
    points: dict[int, Point] = {}
    versions = set()
    params: dict[str, str] = {}
    for name, data in fio_docs:
        point = point_from_fio(data, where=name)
        if point.numjobs in points:
            raise InvalidInput(f"{name}: a second run with numjobs={point.numjobs}")
        points[point.numjobs] = point
        fig, _ = read_fio(data)
        versions.add(fig.version if fig else None)
        params = {k: v for k, v in (fig.options if fig else {}).items() if k not in _NOT_PARAMS}
    if len(versions) > 1:
        raise InvalidInput(f"runs were made with different fio versions: {', '.join(sorted(map(str, versions)))}")
    ordered = [points[k] for k in sorted(points)]
    best = max(ordered, key=lambda p: p.iops)
    runtime = params.get("runtime", "").rstrip("s")
    device = device or Device()
    doc = ResultDocument(
        device=device.model_copy(update={"write_cache": write_cache}) if write_cache != "unknown" else device,
        method=Method(
            id=methods.COMMUNITY[0],
            version=methods.COMMUNITY[1],
            fio_version=versions.pop(),
            fio_params=params,
            search="manual",
            runtime_s=float(runtime) if runtime.replace(".", "", 1).isdigit() else None,
            kernel=None,
            diskq_version=__version__,
        ),
        runs=[
            Run(
                write_cache=write_cache,
                cache_mechanism=DECLARED[cache_mechanism],
                points=ordered,
                peak=Peak(numjobs=best.numjobs, iops=best.iops),
                notes=["imported from fio runs made by hand with the community command"],
            )
        ],
        notes=[f"imported with diskq import-fio on {platform.system()}"],
    )
    return annotate(doc)


def read_json_file(path: Path, *, what: str, lenient: bool = False) -> dict:
    """A JSON object from a file, with fio's possible leading notes skipped. ``lenient`` keeps
    the last of repeated keys (fio's own output), otherwise the strict submission parser reads it."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {what} {path}: {exc.strerror}") from None
    start = raw.find(b"{")
    if start < 0:
        raise InvalidInput(f"{path} holds no JSON object")
    try:
        data = (parse_fio_json if lenient else parse_json)(raw[start:])
    except Exception as exc:  # SubmissionError: reword for this input
        raise InvalidInput(f"{path}: {getattr(exc, 'message', exc)}") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: not a JSON object")
    return data


def device_from_smartctl(path: Path) -> Device:
    """The drive identity from a saved ``smartctl --json`` output (serial hashed, never kept)."""
    from diskq.probe.smartctl import identity_from_smartctl_json

    data = read_json_file(path, what="smartctl JSON")
    device = identity_from_smartctl_json(data)
    return device.model_copy(update={"path": None, "sources": [*device.sources, "smartctl JSON (imported)"]})
