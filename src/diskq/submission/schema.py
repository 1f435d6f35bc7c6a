"""JSON Schemas (2020-12) of the submission, the result document and the datasheet list, generated
from the models.

The pydantic models are the one source of truth; ``schema/*.schema.json`` are these functions'
output, committed so that other tools can validate files without diskq, and a test fails
whenever the two drift apart (``diskq schema`` rewrites them, ``diskq schema --check`` compares).
The package ships the same files (``schemas/`` beside this module, read with importlib.resources:
``diskq schema --show NAME``), so an installed diskq hands them out without a checkout; in a
checkout's root ``diskq schema`` writes and checks both copies.
"""

from __future__ import annotations

import json
from pathlib import Path

from diskq.errors import InvalidInput

DIALECT = "https://json-schema.org/draft/2020-12/schema"
FILES = {
    "submission": "submission.schema.json",
    "result": "result.schema.json",
    "plp-datasheets": "plp-datasheets.schema.json",
}


def schemas() -> dict[str, dict]:
    """``{"submission": {...}, "result": {...}, "plp-datasheets": {...}}``, each a complete 2020-12
    schema (the datasheet list's checks beyond its shape are in :func:`diskq.analyse.datasheets.validate`)."""
    from diskq.analyse.datasheets import DatasheetList
    from diskq.result import ResultDocument
    from diskq.submission.model import Submission

    out = {}
    for name, model in (("submission", Submission), ("result", ResultDocument), ("plp-datasheets", DatasheetList)):
        body = model.model_json_schema(mode="validation")
        out[name] = {"$schema": DIALECT, **body}
    return out


#: The shipped copy, relative to a checkout's root.
PACKAGED = Path("src") / "diskq" / "submission" / "schemas"


def default_directories() -> list[Path]:
    """In a checkout's root (where the package's copy is): ``schema/`` and that copy. Anywhere
    else there is no default: nothing is written where it was not asked for."""
    if not PACKAGED.is_dir():
        raise InvalidInput(
            f"{Path.cwd()} is not a diskq checkout's root: no default place for the schema files",
            hint="give --dir DIR to write (or --check) them there, or --show NAME to print one shipped with diskq",
        )
    return [Path("schema"), PACKAGED]


def shipped(name: str) -> str:
    """The schema file shipped inside the package, as text."""
    from importlib import resources

    if name not in FILES:
        raise InvalidInput(f"no schema named {name!r}", hint=f"one of: {', '.join(FILES)}")
    return resources.files("diskq.submission").joinpath("schemas", FILES[name]).read_text(encoding="utf-8")


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def stale(directory: Path) -> list[str]:
    """Schema files in ``directory`` that are missing or differ from the models."""
    out = []
    for name, schema in schemas().items():
        path = Path(directory) / FILES[name]
        if not path.exists() or path.read_text(encoding="utf-8") != render(schema):
            out.append(str(path))
    return out


def write(directory: Path) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in schemas().items():
        path = directory / FILES[name]
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written
