"""``diskq validate`` over many files, as one judgement: each file alone
(:func:`diskq.submission.validate.validate_file`), then against its ``submissions/`` tree (an id
or measured figures another file already holds). The command, the pull-request check and
``diskq contribute`` (which validates before anything leaves the machine) all call
:func:`validate_files`, so they cannot judge a file differently.
"""

from __future__ import annotations

from pathlib import Path

from diskq.submission import duplicates, paths
from diskq.submission.problems import Problem
from diskq.submission.validate import validate_file


def validate_files(
    files: list[Path], *, allowed_signers: Path | None = None, no_legacy: bool = False, contribution: bool = False
) -> tuple[list[tuple[Path, object, list[Problem]]], list[str]]:
    """(file, submission or None, problems) for each of ``files``, and the notes for stderr
    (a file that is not a contribution, when ``contribution`` is not asked for)."""
    seen: set[str] = set()
    results = []
    notes: list[str] = []
    tree_ids: dict[Path, dict[str, list[Path]]] = {}
    named: dict = {}
    roots: dict[Path, Path] = {}
    for f in files:
        sub, problems = validate_file(
            f,
            allowed_signers=allowed_signers,
            seen_ids=seen,
            allow_legacy=not (no_legacy or contribution),
            contribution=contribution,
        )
        if sub is not None and not contribution and not sub.legacy:
            from diskq.submission.contributable import not_contributable

            why = not_contributable(sub.result)
            if why:
                notes.append(f"note: {f}: {why}: a pull request cannot contribute it (validate --contribution)")
        root = paths.find_root(f)
        if sub is not None and root is not None:
            if root not in tree_ids:
                index: dict[str, list[Path]] = {}
                for q in paths.find_files(root)[0]:
                    index.setdefault(q.stem, []).append(q.absolute())
                tree_ids[root] = index
            others = [q for q in tree_ids[root].get(sub.id, []) if q != f.absolute()]
            if others:
                problems.append(Problem(str(f), "id", f"duplicate of {others[0]}"))
        results.append((f, sub, problems))
        if sub is not None and root is not None:
            named[f] = sub
            roots[f] = root
    for p in duplicates.tree_problems(named, roots, allowed_signers=allowed_signers):
        for f, _, problems in results:
            if str(f) == p.path:
                problems.append(p)
                break
    return results, notes
