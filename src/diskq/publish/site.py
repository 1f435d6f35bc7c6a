"""``diskq site build``: devices.db -> a static site with no external requests.

Pages (templates in ``templates/`` beside this module, every value autoescaped):

* ``index.html``: the WAL/DB suitability table in devices.db's rank order (1-job sync IOPS at
  the best safe cache setting), complete without JavaScript; ``static/table.js`` adds sorting,
  filters and search;
* ``devices/<id>.html``: one per device, an inline SVG curve per cache state with the same
  figures as a table, verdicts with their reasons, the sustained-write cliff (a chart of
  throughput against the amount written per variant and cache setting,
  :mod:`diskq.publish.sustained_chart`) where there are sustained writes, every submission with
  a raw-data link;
* ``methodology.html``: the method, the verdict criteria from the analysis' data file, how to
  contribute;
* ``devices.json`` and ``devices.db``: the machine-readable exports, ``metadata.json`` for
  Datasette beside the database (:mod:`diskq.publish.datasette`), and ``devices.db.sha256``, the
  digest ``diskq db update`` checks the database against.

The output directory is built next to the target and swapped in; an existing directory is only
replaced when it is empty or was written by this command (it holds ``.diskq-site``). Its
temporary directories (``.<out>.<pid>.<random>.tmp``) that a killed build left behind are removed
by the next build once their process is gone, as ``diskq db build`` does with its files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from diskq.database.files import TMP_SUFFIX, remove_stale_temporaries, temporary_prefix
from diskq.errors import SiteError, SitePathError
from diskq.publish.environment import environment, site_dir
from diskq.publish.methodology import criteria, known_methods, plan_rules
from diskq.publish.names import inside, raw_path, write_page

MARKER = ".diskq-site"
TIERS = ("excellent", "good", "marginal", "unsuitable")
PLP_VERDICTS = ("confirmed", "likely", "unknown", "unlikely", "degraded", "not-applicable")
EXPORT_CURVE = ("numjobs", "iops", "iops_min", "iops_max", "n", "lat_p99_us", "sync_p99_us")


@dataclass
class SiteReport:
    out: Path
    devices: int = 0
    files: int = 0
    bytes: int = 0


def _loads(text):
    return json.loads(text) if text else None


def _temporary_dir(out: Path) -> Path:
    """A new empty directory ``.<out>.<pid>.<random>.tmp`` beside ``out``: the site being
    written, or the previous site on its way out. One left by a build that was killed is removed
    by the next build once that process is gone."""
    return Path(tempfile.mkdtemp(prefix=temporary_prefix(out), suffix=TMP_SUFFIX, dir=out.parent))


def _prepare_out(out: Path) -> Path:
    out = Path(out)
    if out.exists():
        if not out.is_dir():
            raise SitePathError(f"{out} exists and is not a directory")
        if any(out.iterdir()) and not (out / MARKER).exists():
            raise SitePathError(
                f"{out} is not empty and was not written by `diskq site build`; refusing to replace it",
                hint="choose another --out or empty the directory",
            )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(out, directories=True)
        return _temporary_dir(out)
    except OSError as exc:
        raise SitePathError(
            f"cannot write {out}: {exc.strerror or exc}",
            hint="the site is built next to its final place: that directory must be writable",
        ) from None


def publish_raw(src: Path, dst: Path) -> None:
    """Put the submission file ``src`` at ``dst`` in the site: a hard link where both are on one
    filesystem (creating a file costs far more than a link: 100 000 copies took longer than the
    rest of the site), a copy otherwise. Only a regular file is published: if ``src`` turned into
    a symbolic link since it was checked, nothing is left at ``dst``."""
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copyfile(src, dst, follow_symlinks=False)
    if not stat.S_ISREG(os.lstat(dst).st_mode):
        os.unlink(dst)


def _rows(cursor) -> list[SimpleNamespace]:
    """Rows as objects with the columns as attributes: templates read them the way they read
    attributes, without a failed attribute lookup per cell as on a dict."""
    return [SimpleNamespace(**dict(r)) for r in cursor]


def source_url() -> str | None:
    """The source repository's address: ``[project.urls]`` ``Repository`` (or ``Source``) of the
    installed package's metadata; None when it names none."""
    from diskq.package import project_url

    url = project_url("Repository") or project_url("Source")
    return url if isinstance(url, str) and url.startswith("https://") else None


def several_firmwares(devices: list[dict]) -> set[str]:
    """The model keys that have rows for more than one firmware: those rows show their firmware
    beside the name, or they would read as one device listed twice."""
    from collections import Counter

    counts = Counter(d["model_key"] for d in devices)
    return {key for key, n in counts.items() if n > 1}


def build_site(
    db: Path, out: Path, *, submissions: Path | None = None, base_url: str | None = None, repository: str | None = None
) -> SiteReport:
    """Write the whole site for ``db`` into ``out`` (replaced as a whole). ``repository`` is the
    source repository's address linked from every page (default: :func:`source_url`)."""
    from diskq.database.details import (
        conflict_points,
        excluded_submissions,
        osds_rate_text,
        osds_text,
        size_profiles,
        sustained_writes,
    )
    from diskq.database.locate import open_db
    from diskq.database.settings import setting_label, setting_slug
    from diskq.database.sustained import block_text
    from diskq.publish import public_pages
    from diskq.publish.chart import scaling_chart, size_chart
    from diskq.publish.sustained_chart import sustained_chart

    db, out = Path(db), Path(out)
    con = open_db(db)
    try:
        env = environment()
        device_key, public_key = env.filters["device_page"], env.filters["public_page"]
        tmp = _prepare_out(out)
    except BaseException:
        con.close()
        raise
    report = SiteReport(out=out)
    try:
        meta = {r["key"]: r["value"] for r in con.execute("SELECT key, value FROM meta")}
        # drives in rank order, then hosts and virtual devices (no rank: never in the drive table)
        devices = [dict(r) for r in con.execute("SELECT * FROM devices ORDER BY rank IS NULL, rank, model_key, id")]
        common = {
            "meta": meta,
            "generated_from": meta.get("content_digest", "")[:12],
            "base_url": base_url,
            "repository": repository or source_url(),
        }
        firmware_shown = several_firmwares(devices)
        for dev in devices:
            dev["show_firmware"] = dev["model_key"] in firmware_shown

        (tmp / "devices").mkdir()
        export = []
        device_page = env.get_template("device.html.j2")
        for dev in devices:
            dev["class_label"] = public_pages.methodclass.label(dev["method_class"])
            dev["class_named"] = public_pages.class_named(dev)
            dev["class_call"] = public_pages.class_call(dev)
            dev["class_badge"] = public_pages.class_badge(dev["method_class"])
            dev["sources"] = public_pages.device_sources(con, dev)
            dev["known_as"] = public_pages.known_as(con, dev)
            dev["patterns"] = [p for k in public_pages.family_keys(dev) for p in public_pages.js_patterns(k)]
            dev["public"] = public_pages.family_public(con, dev)
            dev["public_sources"] = public_pages.sources_of(dev["public"])
            dev["verdicts"] = _loads(dev["verdicts"])
            dev["answers"] = _loads(dev.get("answers"))  # the answer per use (database.answers)
            dev["plp_evidence"] = _loads(dev.get("plp_evidence"))
            dev["osds_limited_by_sweep"] = (
                None if dev["osds_limited_by_sweep"] is None else bool(dev["osds_limited_by_sweep"])
            )
            dev["osds_per_device_text"] = osds_text(dev["osds_per_device"], dev["osds_limited_by_sweep"])
            dev["osds_rate_text"] = osds_rate_text(dev["osds_per_osd_iops"], dev["osds_demand_iops"])
            dev["conflicts"] = conflict_points(con, dev["id"])
            dev["excluded"] = excluded_submissions(con, dev["id"])
            dev["notes"] = _loads(dev["notes"]) or []
            dev["cache_label"] = setting_label(dev["cache"], dev["cache_knob"]) if dev["cache"] else None
            caches = [
                dict(r)
                for r in con.execute(
                    "SELECT * FROM device_cache WHERE device_id = ? ORDER BY write_cache, knob", (dev["id"],)
                )
            ]
            curves: dict[str, list[dict]] = {}
            for r in con.execute(
                "SELECT * FROM curve WHERE device_id = ? ORDER BY write_cache, knob, numjobs", (dev["id"],)
            ):
                curves.setdefault(setting_slug(r["write_cache"], r["knob"]), []).append(dict(r))
            top = max((p["iops_max"] for pts in curves.values() for p in pts), default=None)
            sizes = size_profiles(con, dev["id"])
            for c in caches:
                c["scaling_json"] = _loads(c["scaling_json"])
                c["slug"] = setting_slug(c["write_cache"], c["knob"])
                c["label"] = setting_label(c["write_cache"], c["knob"])
                c["curve"] = curves.get(c["slug"], [])
                c["sweep"] = c["legacy"] < c["submissions"]  # legacy figures are a 1-job point and a peak
                c["chart"] = scaling_chart(
                    c["curve"], top=top, sweep=c["sweep"], named=public_pages.methodclass.short(dev["method_class"])
                )
                c["sizes"] = sizes.get(c["slug"], [])
                c["size_chart"] = size_chart(c["sizes"])
            long_writes, left_out = sustained_writes(con, dev["id"])
            for f in long_writes:
                f["label"] = setting_label(f["write_cache"], f["knob"])
                f["block_text"] = block_text(f["block_size"])
                f["chart"] = sustained_chart(f["writes"])
            subs = _rows(
                con.execute("SELECT * FROM submissions WHERE device_id = ? ORDER BY created DESC, id", (dev["id"],))
            )
            for s in subs:  # a raw link only to a file that is published (see below)
                rel = raw_path(s.path) if submissions is not None else None
                s.raw_href = str(rel) if rel is not None and inside(submissions, rel) else None
            html = device_page.render(
                dev=dev,
                caches=caches,
                submissions=subs,
                sustained=long_writes,
                sustained_left_out=left_out,
                raw=submissions is not None,
                root="../",
                **common,
            )
            write_page(tmp, "devices", device_key(dev["id"]), html)
            export.append(
                {
                    **{k: v for k, v in dev.items() if k not in ("show_firmware", "public", "public_sources")},
                    "public_figures": [m.to_dict() for m in dev["public"]],
                    "caches": [
                        {
                            k: v
                            for k, v in c.items()
                            if k not in ("chart", "curve", "label", "sweep", "sizes", "size_chart")
                        }
                        for c in caches
                    ],
                    "curves": {s: [{k: p[k] for k in EXPORT_CURVE} for p in pts] for s, pts in curves.items()},
                    "sizes": sizes,
                    # the figures and their summary; each write's samples are in devices.db and its submission
                    "sustained": [
                        {k: v for k, v in f.items() if k not in ("chart", "writes", "label", "block_text")}
                        for f in long_writes
                    ],
                }
            )

        # a device whose every submission is held back (far from its model's evidence) has its page, no row
        drives = [d for d in devices if d["not_drive"] is None and d["rank"] is not None]
        hosts = [d for d in devices if d["not_drive"] is not None]
        facets = {
            "protocols": sorted({d["protocol"] for d in drives}),
            "media": sorted({d["media"] for d in drives}),
            "tiers": [t for t in TIERS if any(d["ceph_waldb"] == t for d in drives)],
            "plp": [p for p in PLP_VERDICTS if any(d.get("power_loss_protection") == p for d in drives)],
        }
        public = public_pages.public_rows(con, {k for d in drives for k in public_pages.family_keys(d)})
        facets.update(public_pages.facets(con, drives, public))
        (tmp / "public").mkdir()
        public_page = env.get_template("public.html.j2")
        from diskq.database.answers import public_verdicts

        for model in public_pages.public_models(con):
            write_page(
                tmp,
                "public",
                public_key(model.id),
                public_page.render(
                    model=model,
                    sources=public_pages.sources_of([model]),
                    answers=public_verdicts(con, model.id),
                    devices=[d for d in drives if model.family_key in public_pages.family_keys(d)],
                    root="../",
                    **common,
                ),
            )
        (tmp / "index.html").write_text(
            env.get_template("index.html.j2").render(
                devices=drives,
                hosts=hosts,
                facets=facets,
                public=public,
                root="",
                vendors=public_pages.js_vendors(),
                main_class=public_pages.methodclass.MAIN,
                main_label=public_pages.methodclass.label(public_pages.methodclass.MAIN),
                main_short=public_pages.methodclass.short(public_pages.methodclass.MAIN),
                **common,
            )
        )
        (tmp / "methodology.html").write_text(
            env.get_template("methodology.html.j2").render(
                criteria=criteria(),
                plan_rules=plan_rules(),
                methods=known_methods(),
                root="",
                class_rules=public_pages.methodclass.rules(),
                **common,
            )
        )

        doc = {
            "format": "diskq-devices",
            "format_version": 1,
            "content_digest": meta.get("content_digest"),
            "data_as_of": meta.get("data_as_of") or None,
            "devices": export,
        }
        (tmp / "devices.json").write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")
        shutil.copyfile(db, tmp / "devices.db")
        # the digest `diskq db update` checks a download against, as `sha256sum devices.db` writes it
        digest = hashlib.sha256((tmp / "devices.db").read_bytes()).hexdigest()
        (tmp / "devices.db.sha256").write_text(f"{digest}  devices.db\n")
        from diskq.publish.datasette import metadata

        datasette = metadata(repository=common["repository"], data_as_of=meta.get("data_as_of") or None)
        (tmp / "metadata.json").write_text(json.dumps(datasette, indent=2, sort_keys=True) + "\n")
        shutil.copytree(site_dir() / "static", tmp / "static")
        if submissions is not None:
            made: set[Path] = set()
            for row in con.execute("SELECT path FROM submissions ORDER BY path"):
                rel = raw_path(row["path"])  # a plain relative path, or nothing is published
                src = None if rel is None else inside(Path(submissions), rel)
                dst = tmp / "submissions" / (rel or "")
                if src is not None:
                    if dst.parent not in made:
                        dst.parent.mkdir(parents=True, exist_ok=True)
                        made.add(dst.parent)
                    publish_raw(src, dst)
        (tmp / MARKER).write_text("written by diskq site build; the whole directory is replaced on rebuild\n")
        (tmp / ".nojekyll").write_text("")
        report.devices = len(devices)
        for dirpath, _, files in os.walk(tmp):
            report.files += len(files)
            report.bytes += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files)
        os.chmod(tmp, 0o755)
        if out.exists():
            old = _temporary_dir(out)
            os.replace(out, old / "site")
            os.replace(tmp, out)
            shutil.rmtree(old)
        else:
            os.replace(tmp, out)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            raise SiteError(f"cannot write the site to {out}: {exc.strerror or exc}") from None
        raise
    finally:
        con.close()
    return report
