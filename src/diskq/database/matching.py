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
  model (a word with a digit is a model number: the whole word, or the start of a long part
  number, so ``510`` is never ``S4510`` and ``PM863`` never ``PM863a``), or the query without
  separators is whole words of the model run together (``samsung 860`` and ``860pro`` are exact
  for ``Samsung SSD 860 PRO``);
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
            yield word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _word_hit(w: str, x: str) -> bool:
    """Does query word ``w`` name model word ``x``? A word with a digit is a model number: it
    must be the whole word, or the start of a part number of eight or more characters
    (``ssdsc2kb480`` of ``ssdsc2kb480g8``), never its middle (``510`` is not ``s4510``) nor a
    shorter start (``pm863`` is not ``pm863a``). A word of letters may be any part of a word."""
    if any(ch.isdigit() for ch in w):
        return w == x or (len(w) >= 8 and x.startswith(w))
    return w in x


def _bounded_in(q: str, mine: list[str]) -> bool:
    """Is ``q`` (letters and digits only) a run of whole words of the model run together
    (``860pro`` of ``Samsung SSD 860 PRO``), or a part-number start as :func:`_word_hit` allows?"""
    for i in range(len(mine)):
        run = ""
        for x in mine[i:]:
            run += x
            if run == q:
                return True
            if len(run) >= len(q):
                break
        if len(mine[i]) < len(q) and run.startswith(q) and _word_hit(q, run):
            return True
    return False


def match_kind(query: str, model: str) -> str:
    """``exact``, ``typo`` or ``closest``: how ``query`` names ``model`` (module docstring).

    >>> match_kind("samsung 860", "Samsung SSD 860 PRO"), match_kind("samsung 860", "Samsung PM883")
    ('exact', 'closest')
    >>> match_kind("s4150", "INTEL SSD S4510"), match_kind("samsung 980 pro", "Samsung 983DCT")
    ('typo', 'closest')
    >>> match_kind("510", "INTEL SSD S4510"), match_kind("pm863", "Samsung PM863a"), match_kind("860pro", "Samsung SSD 860 PRO")
    ('closest', 'closest', 'exact')
    """
    q = compact(query)
    mine = words(model)
    if q and _bounded_in(q, mine):
        return EXACT
    kind = EXACT
    for w in words(query):
        if any(_word_hit(w, x) for x in mine):
            continue
        if len(w) >= 4 and any(_word_hit(s, x) for s in _swaps(w) for x in mine):
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
