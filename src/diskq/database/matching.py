"""How well a query names a device model: a score and a kind of match, for ``diskq lookup``
(:mod:`diskq.database.lookup`) and the public figures (:mod:`diskq.database.evidence`).

Queries are NFKC-normalised. The score says how well the query matches the model:

1. the query (letters and digits only) is a substring of the model: best, shorter models first;
2. otherwise the share of the query's trigrams found in the model, blended with the best
   edit-distance ratio of the query against any same-length window of the model (so ``S4150`` finds
   ``INTEL SSD S4510``).

Matches under :data:`MIN_SCORE` are dropped. Above the score, a candidate is one of three kinds
(:func:`match_kind`), and kinds rank before scores:

* ``exact``: every word of the query (a run of letters or digits) is part of a word of the
  model, or the query without separators is part of the model without them (``samsung 860``
  and ``860pro`` are exact for ``Samsung SSD 860 PRO``);
* ``typo``: the same, once two neighbouring characters of a query word of four or more are
  swapped (``s4150`` for ``S4510``, ``samsnug`` for ``Samsung``);
* ``closest``: anything else, however similar: ``samsung 980 pro`` is not ``Samsung 983 DCT``,
  a different digit is a different model. The command line says "no exact match; closest: ..."
  and exits 1 then.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

from diskq.database.keys import compact

MIN_SCORE = 0.5
#: Weights of the trigram share and of the edit-distance ratio in :func:`similarity`. A model
#: sharing no trigram with the query scores at most ``EDIT_WEIGHT``.
SHARED_WEIGHT, EDIT_WEIGHT = 0.3, 0.7

#: The kinds of candidate, best first (see the module docstring).
EXACT, TYPO, CLOSEST = "exact", "typo", "closest"
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """Runs of letters and digits, NFKC-normalised and case folded: ``'Micron_5300_MTFDDAK'`` ->
    ``['micron', '5300', 'mtfddak']``."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _swaps(word: str):
    for i in range(len(word) - 1):
        if word[i] != word[i + 1]:
            yield word[:i] + word[i + 1] + word[i] + word[i + 2:]


def match_kind(query: str, model: str) -> str:
    """``exact``, ``typo`` or ``closest``: how ``query`` names ``model`` (module docstring).

    >>> match_kind("samsung 860", "Samsung SSD 860 PRO"), match_kind("samsung 860", "Samsung PM883")
    ('exact', 'closest')
    >>> match_kind("s4150", "INTEL SSD S4510"), match_kind("samsung 980 pro", "Samsung 983DCT")
    ('typo', 'closest')
    """
    q, m = compact(query), compact(model)
    if q and q in m:
        return EXACT
    mine = words(model)
    kind = EXACT
    for w in words(query):
        if any(w in x for x in mine):
            continue
        if len(w) >= 4 and any(s in x for s in _swaps(w) for x in mine):
            kind = TYPO
            continue
        return CLOSEST
    return kind


def trigrams(text: str) -> set[str]:
    t = compact(text)
    return {t[i : i + 3] for i in range(len(t) - 2)} if len(t) >= 3 else ({t} if t else set())


def similarity(query: str, model: str) -> float:
    """How well ``query`` names ``model``, 0..1 (1: the query is a contiguous part of it).

    >>> similarity("860 pro", "Samsung SSD 860 PRO") == 1.0
    True
    >>> similarity("S4150", "INTEL SSD S4510") > MIN_SCORE
    True
    """
    q, m = compact(query), compact(model)
    if not q or not m:
        return 0.0
    if q in m:
        return 1.0
    tq, tm = trigrams(q), trigrams(m)
    shared = len(tq & tm) / len(tq) if tq else 0.0
    width = len(q)
    windows = [m[i : i + width] for i in range(max(1, len(m) - width + 1))]
    edit = max(SequenceMatcher(None, q, w, autojunk=False).ratio() for w in windows)
    return SHARED_WEIGHT * shared + EDIT_WEIGHT * edit
