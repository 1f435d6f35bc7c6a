"""The text of a product line in ``diskq lookup``: how the query named it, its datasheet facts,
its public figures, the candidates of a query that names several models, and the entries of
``--json``."""

from __future__ import annotations


def _identity_text(ident: dict) -> str:
    """``identified by part number as Samsung PM883, 7.68 TB (pattern (source))``."""
    cap = (
        f", {ident['capacity_bytes'] / 1e12:g} TB"
        if (ident.get("capacity_bytes") or 0) >= 10**12
        else (f", {ident['capacity_bytes'] / 1e9:g} GB" if ident.get("capacity_bytes") else "")
    )
    sure = {
        "sure": "",
        "shared": " (one part number of several lines)",
        "uncertain": " (its source hedges)",
        "candidate": " (one of several candidates)",
        "typo": " (after a typo)",
    }.get(ident["sure"], "")
    return f"identified by {ident['how']} as {ident['line']}{cap}{sure}: {ident['evidence']}"


def _facts_lines(line: dict) -> list[str]:
    """The datasheet facts of a line, each as its source states it."""
    what = ", ".join(
        x
        for x in (
            line.get("segment")
            and f"{line['segment']} line"
            + (f" ({line['segment_basis']})" if line.get("segment_basis") == "naming only" else ""),
            line.get("interface_detail") or line.get("interface"),
        )
        if x
    )
    out = [f"  datasheet: {what or 'segment and interface not stated by its sources'}"]
    if line.get("capacities_note"):
        out.append(f"  capacities: {line['capacities_note']}")
    if line.get("plp"):
        quote = (
            f': "{line["plp_quote"]}" ({line.get("plp_evidence") or "source"}, {line.get("plp_source")})'
            if line.get("plp_quote")
            else ""
        )
        out.append(f"  power-loss protection per its sources: {line['plp']}{quote}")
    if line.get("dwpd") is not None:
        note = f" ({line['dwpd_note']})" if line.get("dwpd_note") else ""
        out.append(f"  endurance: {line['dwpd']:g} drive writes per day{note}")
    elif line.get("dwpd_note"):
        out.append(f"  endurance, drive writes per day: {line['dwpd_note']}")
    if line.get("tbw_note"):
        out.append(f"  rated writes: {line['tbw_note']}")
    out.append(f"  sources: {'; '.join(line.get('sources') or [])}")
    return out


def _unmeasured_lines(la) -> list[str]:
    """A line the query names with nothing measured: what the drive is, its public figures if
    any, and what to run."""
    from diskq.database.answers import lines as answer_lines

    line = la.line
    out = [f"{line['title']}  (not measured with diskq yet)", f"  {_identity_text(la.identity)}"]
    out += [f"  {text}" for text in answer_lines(la.verdicts)]
    out += _facts_lines(line)
    out.append(
        "  to measure one: diskq bench /dev/DEVICE -o result.json (as root; see `diskq bench --help`), "
        "then add the result to the database (CONTRIBUTING.md)"
    )
    out += _public_lines(_models(la.public), heading="public figures of this line (not measured with diskq)")
    return out


def _hard_disk_lines(disk: dict) -> list[str]:
    """A hard disk drive the query names: what it is and on what evidence, its answer per use, and
    what to use instead."""
    from diskq.database.answers import lines as answer_lines

    out = [f"{disk['model']}: {disk['text']}", f"  evidence: {disk['evidence']}"]
    out += [f"  {text}" for text in answer_lines(disk["verdicts"])]
    out += [f"  {r}" for r in disk["verdicts"]["ceph_waldb"]["reasons"][1:]]
    out.append(
        "  a hard disk holds the data; its flushed writes go to a WAL/DB, SLOG or log device: a solid-state "
        "drive with power-loss protection (`diskq lookup` answers for one)"
    )
    return out


def _hard_disk_entries(ans, found) -> list[dict]:
    """The ``--json`` of a hard disk drive: one entry, ``"match": "hard disk"``."""
    disk = {k: v for k, v in ans.hard_disk.items() if k != "verdicts"}
    return [
        {
            "match": "hard disk",
            "hard_disk": disk,
            "line": None,
            "identity": {"how": disk["how"], "sure": "sure", "evidence": disk["evidence"], "kind": disk["kind"]},
            "measured": False,
            "verdicts": ans.hard_disk["verdicts"],
            "database": found.to_dict(),
        }
    ]


def _candidate_lines(ans) -> list[str]:
    if len(ans.lines) == 1:
        out = [f"{ans.query!r} may name this model, but its identification is not sure:"]
    else:
        out = [f"{ans.query!r} names no single model; candidates:"]
    if not ans.lines:  # no product line fits: the devices whose model strings hold the words
        for m in ans.matches:
            if m.kind == "candidate":
                out.append(
                    f"  {m.device['model']} {m.device['firmware']}".rstrip()
                    + f": measured device{(', line ' + m.line['title']) if m.line else ''}"
                )
    for la in ans.lines:
        measured = (
            f"{len(la.devices)} measured device(s)"
            if la.devices
            else (f"public figures of {len(la.public)} model(s)" if la.public else "datasheet facts only")
        )
        out.append(f"  {la.line['title']}: {measured}; {_identity_text(la.identity)}")
    return out


def _json_entries(ans, found) -> list[dict]:
    """Every device match, then every line the query names that no device match stands for:
    ``match`` is ``exact``/``typo``/``closest``/``candidate`` for a device, ``public`` (public
    figures only) or ``datasheet`` (nothing measured) or ``candidate`` for a line."""
    db = found.to_dict()
    out = [{**m.to_dict(), "database": db} for m in ans.matches]
    shown = {m.line["key"] for m in ans.matches if m.line}
    for la in ans.lines:
        if la.line["key"] in shown:
            continue
        kind = "candidate" if ans.ambiguous else ("public" if la.public else "datasheet")
        out.append(
            {
                "match": kind,
                "line": la.line,
                "identity": la.identity,
                "measured": False,
                "public_models": la.public,
                "public_model": la.public[0] if la.public else None,
                "verdicts": la.verdicts,
                "database": db,
            }
        )
    return out


def _models(dicts: list[dict]) -> list:
    from diskq.database.evidence import PublicModel

    return [
        PublicModel(d["id"], d["name"], d["family_key"], d["capacity_bytes"], d["classes"], d["figures"]) for d in dicts
    ]


def _public_lines(models: list, *, heading: str, verdicts: dict | None = None) -> list[str]:
    """Each public model: its answer per use (when given), one line per method class, then each
    figure with its source and quote."""
    from diskq.database.answers import lines as answer_lines
    from diskq.database.evidence import class_summary

    if not models:
        return []
    lines = [f"{heading}:"]
    for m in models:
        lines.append(f"  {m.name}")
        lines += [f"    {line}" for line in answer_lines((verdicts or {}).get(m.id))]
        lines += [f"    {line}" for line in class_summary(m)]
        for f in m.figures:
            cache = f"cache {f['write_cache']}"
            how = f", {f['derived']}" if f["derived"] else ""
            how += f", weak: {f['weak']}" if f.get("weak") else ""
            lines.append(
                f"      {f['source_id']}: {f['iops']:,.0f} IOPS at {f['numjobs']} job(s), {f['method_id']}, "
                f'{cache}{how}: "{f["quote"]}" ({f["url"]}; {f["attribution"] or f["source_author"]}, '
                f"{f['licence']})"
            )
    return lines
