"""What the methodology page states besides its prose: the verdict criteria of the analysis'
data file, the plan's rules and the known measuring methods; each None (or empty) where its
package is absent."""

from __future__ import annotations


def criteria() -> dict | None:
    try:
        from diskq.analyse.verdicts import load_criteria
    except ImportError:
        return None
    return load_criteria()


def plan_rules() -> dict | None:
    try:
        from diskq.plan.rules import load
    except ImportError:
        return None
    return load()


def known_methods() -> list[dict]:
    try:
        from diskq.submission import methods
    except ImportError:
        return []
    out = []
    for (mid, version), spec in sorted(methods.KNOWN_METHODS.items()):
        out.append(
            {
                "id": mid,
                "version": version,
                "title": spec.title,
                "options": {k: sorted(v or "(absent)" for v in vals) for k, vals in sorted(spec.required.items())},
            }
        )
    return out
