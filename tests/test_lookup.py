"""diskq lookup: fragments, typos, JSON output, clear errors."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.database.build import build
from diskq.database.lookup import lookup
from diskq.database.matching import MIN_SCORE, similarity
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.errors import DatabaseError, DatabasePathError, InvalidInput
from tests.cli_support import cli

MODELS = {
    "Samsung SSD 860 PRO 512GB": {"off": {1: 1033, 2: 2000, 4: 3800, 8: 5200, 16: 5915}},
    "Samsung SSD 860 EVO 1TB": {"off": {1: 490, 2: 950, 4: 1500, 8: 1700, 14: 1728}},
    "INTEL SSDSC2KB480G8": {"off": {1: 1600, 2: 3200, 4: 6300, 8: 12500, 15: 48409}},
    "Micron_5300_MTFDDAK3T8TDS": {"off": {1: 9000, 2: 17000, 4: 30000}},
}


@pytest.fixture(scope="module", params=["trigram", "none"])
def db(request, tmp_path_factory):
    """The same devices with the search index and, as SQLite without the trigram tokenizer builds
    it, without: every lookup must give the same answers."""
    from diskq.database import build as build_mod

    root = tmp_path_factory.mktemp("lookup")
    for model, curves in MODELS.items():
        write_submission(root / "submissions", submission(result_document(model, curves)))
    path = root / "devices.db"
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "none":
            patch.setattr(build_mod, "trigram_supported", lambda: False)
        assert build(root / "submissions", path).fts == request.param
    return path


@pytest.mark.parametrize(
    "query, expected",
    [
        ("860 pro", "Samsung SSD 860 PRO 512GB"),
        ("samsung 860 evo", "Samsung SSD 860 EVO 1TB"),
        ("SSDSC2KB480", "INTEL SSDSC2KB480G8"),
        ("ssdsc2kb408g8", "INTEL SSDSC2KB480G8"),  # transposed digits
        ("micron 5300", "Micron_5300_MTFDDAK3T8TDS"),  # separators differ
        ("mtfddak3t8tsd", "Micron_5300_MTFDDAK3T8TDS"),  # typo at the end
        ("Samsnug 860 PRO", "Samsung SSD 860 PRO 512GB"),  # letters swapped
    ],
)
def test_fragments_and_typos_find_the_device(db, query, expected):
    matches = lookup(db, query)
    assert matches and matches[0].device["model"] == expected
    assert matches[0].curves["off"][0]["numjobs"] == 1


def test_unrelated_query_finds_nothing(db):
    assert lookup(db, "qqqqzzzz") == []


def test_empty_query_is_an_input_error(db):
    with pytest.raises(InvalidInput):
        lookup(db, " -- ")


def test_missing_database_is_a_clear_error(tmp_path):
    with pytest.raises(DatabaseError, match="does not exist"):
        lookup(tmp_path / "nope.db", "860")


def test_json_output_is_alone_on_stdout(db, capsys):
    assert cli("lookup", "860 pro", "--db", str(db), "--json") == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert data[0]["device"]["model"] == "Samsung SSD 860 PRO 512GB"
    assert [p["numjobs"] for p in data[0]["curves"]["off"]] == [1, 2, 4, 8, 16]
    assert data[0]["device"]["iops_1job"] == 1033


def test_text_output_shows_row_verdicts_and_curve(db, capsys):
    assert cli("lookup", "860 pro", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "Samsung SSD 860 PRO 512GB" in out and "Ceph WAL/DB:" in out and "marginal" in out
    assert "   16 jobs |" in out and "5,915 IOPS" in out


def test_no_match_is_one_line_error(db, capsys):
    assert cli("lookup", "qqqqzzzz", "--db", str(db)) == DatabaseError.exit_code
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == "diskq: error: no device matches 'qqqqzzzz'"


def test_no_match_in_json_prints_an_empty_list_and_fails_like_text(db, capsys):
    assert cli("lookup", "qqqqzzzz", "--db", str(db), "--json") == DatabaseError.exit_code
    captured = capsys.readouterr()
    assert json.loads(captured.out) == []
    assert captured.err.strip().splitlines()[0] == "diskq: error: no device matches 'qqqqzzzz'"


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 ", min_size=3, max_size=30))
def test_any_part_of_a_model_is_a_perfect_match(model):
    if not model.strip():
        return
    start = len(model) // 3
    part = model[start : start + max(1, len(model) // 2)]
    if part.strip():
        assert similarity(part, model) == 1.0
    assert 0.0 <= similarity("x" + model, model) <= 1.0


def test_threshold_separates_typos_from_strangers():
    assert similarity("S4150", "INTEL SSD S4510") >= MIN_SCORE
    assert similarity("PM883", "Sandisk Ultra II") < MIN_SCORE


def test_db_that_is_a_directory_says_so(tmp_path, capsys):
    assert cli("lookup", "860", "--db", str(tmp_path)) == DatabasePathError.exit_code
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == f"diskq: error: {tmp_path} is a directory, not a devices.db"


def test_text_output_labels_the_kernel_knob_and_says_why_a_setting_is_unsafe(tmp_path, capsys):
    subs = tmp_path / "submissions"
    loop = {"off": {1: 32212, 2: 52000, 4: 61000}, "on": {1: 3100, 2: 5900, 4: 9800}}
    write_submission(
        subs,
        submission(
            result_document(
                "Linux Loop Device", loop, protocol="unknown", cache_mechanism="sysfs", volatile_write_cache=None
            )
        ),
    )
    db = tmp_path / "devices.db"
    build(subs, db)
    assert cli("lookup", "loop device", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "1-job IOPS 3,100 at cache on (kernel knob)" in out and "Ceph WAL/DB: marginal" in out
    assert "cache off (kernel knob): " in out and "(unsafe: was set with the kernel's write_cache knob" in out
    assert "  write cache off (kernel knob):" in out
    assert cli("lookup", "loop device", "--db", str(db), "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(data[0]["curves"]) == ["off-kernel", "on-kernel"]
    assert {(c["write_cache"], c["knob"], c["safe"]) for c in data[0]["caches"]} == {
        ("off", "kernel", 0),
        ("on", "kernel", 1),
    }


def test_osds_per_device_limited_by_the_sweep_reads_at_least_n(db, capsys):
    # the Micron's three points all keep more than half the solo rate per job: "at least 4"
    assert cli("lookup", "micron 5300", "--db", str(db)) == 0
    assert "OSDs per device: \u2265 4 (" in capsys.readouterr().out
    assert cli("lookup", "micron 5300", "--db", str(db), "--json") == 0
    device = json.loads(capsys.readouterr().out)[0]["device"]
    assert (device["osds_per_device"], device["osds_limited_by_sweep"], device["osds_per_device_text"]) == (
        4,
        True,
        "\u2265 4",
    )
    assert cli("lookup", "860 evo", "--db", str(db)) == 0  # 14 jobs measured, fewer pass
    out = capsys.readouterr().out
    assert "OSDs per device: " in out and "OSDs per device: \u2265" not in out


@pytest.mark.parametrize("trigram", [True, False])
def test_a_typo_sharing_no_trigram_with_the_model_still_finds_it(tmp_path, monkeypatch, trigram):
    from diskq.database import build as build_mod
    from diskq.database.matching import trigrams

    subs = tmp_path / "submissions"
    for one, model in enumerate(("Intel SSD S4510", "Intel SSD S4610", "Samsung PM883", "Crucial BX150")):
        write_submission(subs, submission(result_document(model, {"off": {1: 1600 - one, 2: 3000}})))
    db = tmp_path / "devices.db"
    if not trigram:
        monkeypatch.setattr(build_mod, "trigram_supported", lambda: False)
    build(subs, db)
    assert not trigrams("s4150") & trigrams("INTEL SSD S4510")  # the index alone cannot propose it
    matches = lookup(db, "s4150")
    assert matches and matches[0].device["model"] == "Intel SSD S4510"
    # Crucial BX150 shares "150" and passes the threshold, but a model outside the index's
    # proposals can score higher: with one match asked for, the scan still runs
    assert [m.device["model"] for m in lookup(db, "s4150", limit=1)] == ["Intel SSD S4510"]


def test_the_committed_database_forgives_typos_and_full_width_queries(capsys):
    from diskq.database.build import repo_root

    committed = repo_root() / "devices.db"
    assert cli("lookup", "s4150", "--db", str(committed)) == 0
    assert capsys.readouterr().out.startswith("Intel SSD S4510 ")
    assert cli("lookup", "\uff50\uff4d\uff18\uff18\uff13", "--db", str(committed)) == 0  # "ｐｍ８８３"
    assert capsys.readouterr().out.startswith("Samsung PM883 ")


@given(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 _-", max_size=14),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 _-", min_size=1, max_size=30),
)
def test_the_scan_prefilter_never_drops_a_match(query, model):
    from diskq.database.name_search import _could_reach

    if similarity(query, model) >= MIN_SCORE:
        assert _could_reach(query, model, MIN_SCORE)


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_a_signature_not_checked_against_allowed_signers_is_labelled_so(tmp_path, capsys):
    from diskq.submission.sign import sign_submission

    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "x", "-f", str(key)], check=True)
    subs = tmp_path / "submissions"
    sub = submission(result_document("Samsung PM1643a", {"off": {1: 18545, 16: 93229}}, protocol="scsi"))
    write_submission(subs, sign_submission(sub, key, principal="torvalds"))
    db = tmp_path / "devices.db"
    build(subs, db)
    assert cli("lookup", "pm1643a", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "1 submission, 0 verified, 1 signature intact (signer not checked), 0 legacy" in out
    assert "torvalds" not in out
    assert cli("lookup", "pm1643a", "--db", str(db), "--json") == 0
    device = json.loads(capsys.readouterr().out)[0]["device"]
    assert (device["verified"], device["unchecked"]) == (0, 1)


def test_the_committed_database_never_answers_a_different_model(capsys):
    # "samsung 860" named Samsung PM883 as the answer, "samsung 980 pro" the 983DCT (both exit 0)
    from diskq.database.build import repo_root
    from diskq.errors import AmbiguousModel

    committed = repo_root() / "devices.db"
    assert cli("lookup", "samsung 860", "--db", str(committed)) == AmbiguousModel.exit_code
    captured = capsys.readouterr()
    assert captured.out.startswith("'samsung 860' names no single model; candidates:")
    assert {"Samsung 860 EVO", "Samsung 860 PRO", "Samsung 860 QVO"} <= {
        x.strip().split(":")[0] for x in captured.out.splitlines()[1:]
    }
    assert "PM883" not in captured.out and "names 3 models; none is chosen" in captured.err

    assert cli("lookup", "samsung 980 pro", "--db", str(committed)) == 0  # the line, with nothing measured
    out = capsys.readouterr().out
    assert out.startswith("Samsung 980 PRO  (not measured with diskq yet)") and "983" not in out
    assert "diskq bench /dev/DEVICE" in out

    assert cli("lookup", "samsung 980 pro", "--db", str(committed), "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert [m["match"] for m in data] == ["datasheet"] and data[0]["line"]["line"] == "980 PRO"
    assert data[0]["line"]["segment"] == "client" and data[0]["measured"] is False


@pytest.mark.parametrize(
    "query, model, kind",
    [
        ("samsung 860", "Samsung SSD 860 PRO", "exact"),
        ("860pro", "Samsung SSD 860 PRO", "exact"),
        ("micron 5300", "Micron_5300_MTFDDAK3T8TDS", "exact"),
        ("ssdsc2kb408g8", "INTEL SSDSC2KB480G8", "typo"),
        ("Samsnug 860 PRO", "Samsung SSD 860 PRO 512GB", "typo"),
        ("samsung 860", "Samsung PM883", "closest"),
        ("samsung 980 pro", "Samsung 983DCT", "closest"),
        ("970 evo", "Samsung SSD 970 PRO", "closest"),
    ],
)
def test_match_kind_tells_a_name_from_a_similar_one(query, model, kind):
    from diskq.database.matching import match_kind

    assert match_kind(query, model) == kind


def test_matches_rank_before_closer_scoring_strangers(db):
    matches = lookup(db, "samsung 860")  # the 860 EVO, PRO and QVO: candidates, none the answer
    assert [m.kind for m in matches][:2] == ["candidate", "candidate"]
    assert not any(m.is_match for m in matches)
    assert {m.device["model"] for m in matches[:2]} == {"Samsung SSD 860 PRO 512GB", "Samsung SSD 860 EVO 1TB"}
    assert all(m.to_dict()["match"] == m.kind for m in matches)
    best = lookup(db, "samsung 860 pro")  # whole words of one line: the answer
    assert [m.device["model"] for m in best] == ["Samsung SSD 860 PRO 512GB"] and best[0].kind == "exact"


def test_a_lookup_reads_decided_conflicts_by_the_prefix_the_rule_writes():
    from diskq.analyse import plausibility
    from diskq.database import details

    assert details.DECIDED == plausibility.DECIDED


def test_one_line_whose_source_hedges_is_named_but_not_chosen(capsys):
    # a part number only one line's pattern takes, but whose source says the attribution is inferred
    from diskq.database.build import repo_root
    from diskq.errors import AmbiguousModel

    committed = repo_root() / "devices.db"
    assert cli("lookup", "INTEL SSDPF2KX038TZ", "--db", str(committed)) == AmbiguousModel.exit_code
    captured = capsys.readouterr()
    assert captured.out.startswith("'INTEL SSDPF2KX038TZ' may name this model, but its identification is not sure:")
    assert "Solidigm D7-P5520" in captured.out and "its source hedges" in captured.out
    assert "may name Solidigm D7-P5520, not surely" in captured.err and "names 1 models" not in captured.err
