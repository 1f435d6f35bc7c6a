"""The public-figures catalogue: sources, methods and per-drive figures published elsewhere.

The catalogue lives in the top-level ``sources/`` directory of the repository:

- ``sources.toml``: one table per source id (``[S01_shan2014]``) with ``title``, ``url``,
  ``author``, ``date``, ``licence``, ``attribution`` (the text its licence asks a reuser to
  show; empty when it asks for none), ``method_ids`` (the methods its figures were made with) and ``notes``;
- ``methods.toml``: one table per method id (``[M_SYNC_SEQ_PSYNC]``) with the exact
  ``command`` and what it sends: ``sync`` (``fdatasync`` | ``fsync`` | ``o_sync`` | ``o_dsync``
  | ``o_sync+fsync`` | ``flush``), ``pattern`` (``write`` | ``randwrite``), ``engine``,
  ``iodepth``, ``direct``, ``target`` (``raw`` | ``file``), ``runtime_s`` (optional),
  ``writes`` (writes per job of a run bounded by size, optional: with the IOPS it gives the
  run's length), ``platform`` (``linux`` unless given: ``freebsd`` | ``illumos`` | ``windows``
  | ``unknown``), ``block_size`` and ``notes``;
- ``figures/<source_id>.csv``, one row per figure::

    source_id,model,vendor,family,capacity,interface,firmware,method_id,numjobs,iodepth,iops,write_cache,derived,quote,url,checked
    S07_freebsd_diskinfo,Samsung 950 PRO,Samsung,950 PRO,,NVMe,,M_DISKINFO_SLOGBENCH,1,1,478,unknown,1e6 / 2090.7 usec per I/O,4 kbytes: 2090.7 usec/IO = 1.9 Mbytes/s,https://freshbsd.org/commit/freebsd/src/321928,2026-11-26

  ``interface`` is ``SATA`` | ``SAS`` | ``NVMe`` | ``PCIe`` | ``other``; ``write_cache`` is
  ``on`` | ``off`` | ``unknown``; ``derived`` says how the IOPS were computed from what the
  source printed, empty when the source gives them directly.

:func:`load` reads and checks all of it. Any problem raises :class:`~diskq.errors.SourcesError`
with one line naming the file, the line and the field; nothing is half loaded. A missing or
empty directory is an empty catalogue (no public figures).
"""

from __future__ import annotations

import csv
import io
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from diskq.analyse.methodclass import block_bytes
from diskq.errors import SourcesError

COLUMNS = (
    "source_id",
    "model",
    "vendor",
    "family",
    "capacity",
    "interface",
    "firmware",
    "method_id",
    "numjobs",
    "iodepth",
    "iops",
    "write_cache",
    "derived",
    "quote",
    "url",
    "checked",
)
#: The largest catalogue file read (a figures CSV of a few thousand rows is a few hundred KiB).
MAX_BYTES = 8 * 1024 * 1024
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_URL = re.compile(r"^https?://\S+$")
#: interface as a source writes it -> the protocol names the rest of diskq uses
PROTOCOLS = {"SATA": "ata", "SAS": "scsi", "NVMe": "nvme", "PCIe": "pcie", "other": "unknown"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


def _text(v: str) -> str:
    if any(ord(c) < 32 and c not in "\t" for c in v):
        raise ValueError("holds a control character")
    return v


class Source(_Strict):
    id: str
    title: str = Field(min_length=1)
    url: str
    author: str = Field(min_length=1)
    date: str
    licence: str = Field(min_length=1)
    attribution: str = ""  # empty where the licence asks for none (CC0, no licence stated)
    method_ids: list[str] = Field(min_length=1)
    notes: str = ""

    _checked = field_validator("title", "author", "licence", "attribution", "notes")(_text)

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not _URL.match(v):
            raise ValueError("must be an http(s) address")
        return v

    @field_validator("date")
    @classmethod
    def _date(cls, v: str) -> str:
        if not re.match(r"^\d{4}(-\d{2}(-\d{2})?)?$", v):
            raise ValueError("must be YYYY, YYYY-MM or YYYY-MM-DD")
        return v


class PublicMethod(_Strict):
    id: str
    command: str = Field(min_length=1)
    sync: Literal["fdatasync", "fsync", "o_sync", "o_dsync", "o_sync+fsync", "flush"]
    pattern: Literal["write", "randwrite"]
    engine: str = Field(min_length=1)
    iodepth: int = Field(ge=1, le=65536, strict=True)
    direct: bool = Field(strict=True)
    target: Literal["raw", "file"]
    runtime_s: int | None = Field(default=None, ge=1, strict=True)
    writes: int | None = Field(default=None, ge=1, strict=True)
    platform: Literal["linux", "freebsd", "illumos", "windows", "unknown"] = "linux"
    block_size: str = Field(min_length=1, pattern=r"^\d+[kKmM]?$")
    notes: str = ""

    _checked = field_validator("command", "engine", "notes")(_text)

    @property
    def block_bytes(self) -> int:
        return block_bytes(self.block_size)


class PublicFigure(_Strict):
    source_id: str
    model: str = Field(min_length=1, max_length=200)
    vendor: str = ""
    family: str = ""
    capacity: str = ""
    interface: Literal["SATA", "SAS", "NVMe", "PCIe", "other"]
    firmware: str = ""
    method_id: str
    numjobs: int = Field(ge=1, le=4096)
    iodepth: int = Field(ge=1, le=65536)
    iops: float = Field(gt=0, lt=1e9, allow_inf_nan=False)
    write_cache: Literal["on", "off", "unknown"]
    derived: str = ""
    quote: str = Field(min_length=1)
    url: str
    checked: str = ""
    #: where the row is: ``figures/S01.csv:12``
    where: str = ""

    _checked = field_validator("model", "vendor", "family", "capacity", "firmware", "derived", "quote")(_text)

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not _URL.match(v.split(" ", 1)[0]):
            raise ValueError("must start with an http(s) address")
        return v

    @property
    def protocol(self) -> str:
        return PROTOCOLS[self.interface]


@dataclass
class Catalogue:
    sources: dict[str, Source] = field(default_factory=dict)
    methods: dict[str, PublicMethod] = field(default_factory=dict)
    figures: list[PublicFigure] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.sources or self.methods or self.figures)


def _read(path: Path, root: Path) -> str:
    name = path.relative_to(root.parent).as_posix() if root.parent in path.parents else path.name
    if path.is_symlink() or not path.is_file():
        raise SourcesError(f"{name}: not a regular file")
    if path.stat().st_size > MAX_BYTES:
        raise SourcesError(f"{name}: larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourcesError(f"{name}: not UTF-8 (byte {exc.start})") from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "row"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{where}: {msg}"


def _line_of(text: str, table: str) -> int:
    """The line of ``[table]`` in a TOML text (1 when it cannot be found)."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith(f"[{table}]"):
            return n
    return 1


def _tables(path: Path, root: Path, model: type[_Strict]) -> dict:
    name = f"{root.name}/{path.name}"
    text = _read(path, root)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SourcesError(f"{name}: not valid TOML: {exc}") from None
    out = {}
    for key, value in data.items():
        line = _line_of(text, key)
        if not _ID.match(key):
            raise SourcesError(f"{name}:{line}: [{key[:40]}]: an id is letters, digits and _ (at most 64)")
        if not isinstance(value, dict):
            raise SourcesError(f"{name}:{line}: {key}: must be a table ([{key}])")
        try:
            out[key] = model(id=key, **value)
        except ValidationError as exc:
            raise SourcesError(f"{name}:{line}: [{key}] {_first_error(exc)}") from None
        except TypeError:  # an 'id' key inside the table
            raise SourcesError(f"{name}:{line}: [{key}] id: given by the table name, not a key") from None
    return out


def _figures(path: Path, root: Path, catalogue: Catalogue) -> list[PublicFigure]:
    name = f"{root.name}/figures/{path.name}"
    source_id = path.stem
    if source_id not in catalogue.sources:
        raise SourcesError(f"{name}: {source_id} is not a source declared in sources.toml")
    source = catalogue.sources[source_id]
    reader = csv.reader(io.StringIO(_read(path, root), newline=""))
    try:
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != COLUMNS:
            raise SourcesError(f"{name}:1: header must be: {','.join(COLUMNS)}")
        out = []
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(COLUMNS):
                raise SourcesError(f"{name}:{line}: {len(row)} columns, the header has {len(COLUMNS)}")
            values = dict(zip(COLUMNS, row, strict=False))
            try:
                fig = PublicFigure(**values, where=f"figures/{path.name}:{line}")
            except ValidationError as exc:
                raise SourcesError(f"{name}:{line}: {_first_error(exc)}") from None
            if fig.source_id != source_id:
                raise SourcesError(f"{name}:{line}: source_id: {fig.source_id!r} in the file of {source_id}")
            if fig.method_id not in catalogue.methods:
                raise SourcesError(f"{name}:{line}: method_id: {fig.method_id!r} is not declared in methods.toml")
            if fig.method_id not in source.method_ids:
                raise SourcesError(
                    f"{name}:{line}: method_id: {fig.method_id!r} is not among {source_id}'s method_ids in sources.toml"
                )
            out.append(fig)
    except csv.Error as exc:
        raise SourcesError(f"{name}:{reader.line_num}: not valid CSV: {exc}") from None
    return out


def load(root: Path) -> Catalogue:
    """The catalogue under ``root`` (the ``sources/`` directory); empty when it does not exist
    or holds nothing. Raises :class:`SourcesError` naming the file, line and field of the first
    problem."""
    root = Path(root)
    catalogue = Catalogue()
    if not root.exists():
        return catalogue
    if not root.is_dir():
        raise SourcesError(f"{root.name}: not a directory")
    if (root / "methods.toml").exists():
        catalogue.methods = _tables(root / "methods.toml", root, PublicMethod)
    if (root / "sources.toml").exists():
        catalogue.sources = _tables(root / "sources.toml", root, Source)
    for source in catalogue.sources.values():
        for mid in source.method_ids:
            if mid not in catalogue.methods:
                line = _line_of(_read(root / "sources.toml", root), source.id)
                raise SourcesError(
                    f"{root.name}/sources.toml:{line}: [{source.id}] method_ids: {mid!r} is not "
                    "declared in methods.toml"
                )
    figures_dir = root / "figures"
    if figures_dir.is_dir():
        for path in sorted(figures_dir.glob("*.csv")):
            catalogue.figures += _figures(path, root, catalogue)
    return catalogue
