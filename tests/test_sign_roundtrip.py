"""Round trip: fio result -> submission -> SSH signature -> validation, cross-checked with ssh-keygen."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from diskq.errors import InvalidInput, SignatureError
from diskq.submission import sshsig
from diskq.submission.legacy import dump
from diskq.submission.model import Contributor
from diskq.submission.paths import relative_path
from diskq.submission.sign import NAMESPACE, make_submission, sign_submission, signed_payload, verify_signature
from diskq.submission.validate import validate_file
from tests.test_submission_support import (
    HAVE_FIO,
    HAVE_SSH_KEYGEN,
    allowed_signers,
    fio_runs,
    keygen,
    result_from,
)

pytestmark = [
    pytest.mark.skipif(not HAVE_FIO, reason="needs fio"),
    pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="needs ssh-keygen"),
]


def _signed(tmp_path: Path, kind: str = "ed25519", principal: str = "octocat"):
    key = keygen(tmp_path, kind)
    sub = make_submission(result_from(fio_runs()), contributor=Contributor(github=principal, name="Test Person"))
    return key, sign_submission(sub, key, principal=principal)


def _write(root: Path, sub) -> Path:
    path = root / "submissions" / relative_path(sub.result.device, sub.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(sub))
    return path


def _ssh_keygen_verify(sub, allowed: Path, principal: str, tmp_path: Path) -> subprocess.CompletedProcess:
    sig = tmp_path / "sig"
    sig.write_text(sub.signature.signature + "\n")
    return subprocess.run(
        ["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", principal, "-n", NAMESPACE, "-s", str(sig)],
        input=signed_payload(sub),
        capture_output=True,
    )


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa", "rsa"])
def test_round_trip_verifies_in_process_and_with_ssh_keygen(tmp_path, kind):
    key, sub = _signed(tmp_path, kind)
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)
    verify_signature(sub)
    verify_signature(sub, allowed_signers=allowed)
    assert _ssh_keygen_verify(sub, allowed, "octocat", tmp_path).returncode == 0
    path = _write(tmp_path, sub)
    loaded, problems = validate_file(path, allowed_signers=allowed)
    assert problems == []
    assert loaded.signature.principal == "octocat"
    assert loaded.signature.public_key.split()[1] == (tmp_path / f"id_{kind}.pub").read_text().split()[1]


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa", "rsa"])
def test_in_process_verdict_agrees_with_ssh_keygen_on_a_tampered_document(tmp_path, kind):
    key, sub = _signed(tmp_path, kind)
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)
    run0 = sub.result.runs[0]
    tampered = sub.model_copy(deep=True)
    tampered.result.runs[0].points[0].iops = run0.points[0].iops + 1
    with pytest.raises(SignatureError, match="does not match"):
        verify_signature(tampered, allowed_signers=allowed)
    assert _ssh_keygen_verify(tampered, allowed, "octocat", tmp_path).returncode != 0


def test_principal_and_key_must_be_allowed(tmp_path):
    key, sub = _signed(tmp_path)
    other = keygen(tmp_path, "ed25519", name="other")
    with pytest.raises(SignatureError, match="not an allowed key of principal 'octocat'"):
        verify_signature(sub, allowed_signers=allowed_signers(tmp_path / "a1", "mallory", key))
    with pytest.raises(SignatureError, match="not an allowed key"):
        verify_signature(sub, allowed_signers=allowed_signers(tmp_path / "a2", "octocat", other))
    with pytest.raises(SignatureError, match="namespace"):
        verify_signature(sub, allowed_signers=allowed_signers(tmp_path / "a3", "octocat", key, 'namespaces="git"'))
    verify_signature(
        sub, allowed_signers=allowed_signers(tmp_path / "a4", "octo*,!mallory", key, f'namespaces="git,{NAMESPACE}"')
    )


def test_swapped_public_key_is_detected(tmp_path):
    _, sub = _signed(tmp_path)
    other = keygen(tmp_path, "ed25519", name="other")
    line = " ".join((tmp_path / "other.pub").read_text().split()[:2])
    forged = sub.model_copy(update={"signature": sub.signature.model_copy(update={"public_key": line})})
    with pytest.raises(SignatureError, match="not the key that made the signature"):
        verify_signature(forged)
    assert other.exists()


def test_signature_from_another_document_is_rejected(tmp_path):
    key, sub = _signed(tmp_path)
    runs = fio_runs()
    del runs[2]
    other = sign_submission(make_submission(result_from(runs)), key, principal="octocat")
    grafted = other.model_copy(update={"signature": sub.signature})
    with pytest.raises(SignatureError):
        verify_signature(grafted)


def test_signing_through_ssh_agent_with_only_the_public_key(tmp_path):
    key = keygen(tmp_path)
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if sock.exists():
                break
            subprocess.run(["sleep", "0.05"])
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(key)], check=True, env=env, capture_output=True)
        key.unlink()  # only the agent holds the private key now
        os.environ["SSH_AUTH_SOCK"] = str(sock)
        try:
            sub = sign_submission(make_submission(result_from(fio_runs())), Path(f"{key}.pub"), principal="octocat")
        finally:
            os.environ.pop("SSH_AUTH_SOCK")
        verify_signature(sub, allowed_signers=allowed_signers(tmp_path / "allowed", "octocat", key))
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=10)


def test_sign_with_missing_key_or_bad_principal_is_a_clear_error(tmp_path):
    sub = make_submission(result_from(fio_runs()))
    with pytest.raises(InvalidInput, match="does not exist"):
        sign_submission(sub, tmp_path / "nope", principal="octocat")
    key = keygen(tmp_path)
    with pytest.raises(InvalidInput, match="principal"):
        sign_submission(sub, key, principal="two words")


def test_armored_signature_layout(tmp_path):
    _, sub = _signed(tmp_path)
    sig = sshsig.parse_armored(sub.signature.signature)
    assert sig.namespace == NAMESPACE
    assert sig.hash_algorithm == "sha512"
    assert sig.key_type == "ssh-ed25519" and sig.sig_format == "ssh-ed25519"
    garbage = sub.signature.signature.replace("U1NIU0lH", "U1NIU0lI", 1)
    with pytest.raises(SignatureError):
        sshsig.parse_armored(garbage)
    with pytest.raises(SignatureError):
        sshsig.parse_armored("-----BEGIN SSH SIGNATURE-----\n!!!\n-----END SSH SIGNATURE-----")


def test_cli_sign_then_validate(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from diskq.cli import app

    key = keygen(tmp_path)
    result = tmp_path / "result.json"
    result.write_text(result_from(fio_runs(), method_id="diskq-fdatasync-sweep").to_json())
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    out = runner.invoke(app, ["sign", str(result), "-f", str(key), "--github", "octocat"])
    assert out.exit_code == 0, out.output
    written = Path(out.stdout.strip().splitlines()[-1])
    assert written.parts[:3] == ("submissions", "samsung", "samsung-ssd-860-pro-512gb")
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)
    ok = runner.invoke(app, ["validate", "submissions", "--allowed-signers", str(allowed), "--json"])
    assert ok.exit_code == 0, ok.output
    # (click before 8.2, the lowest typer allows, mixes stderr's summary in after the JSON document)
    assert json.JSONDecoder().raw_decode(ok.stdout)[0] == {"files": 1, "ok": 1, "problems": []}
    data = json.loads(written.read_text())
    data["result"]["device"]["firmware"] = "EDITED"
    written.write_text(json.dumps(data))
    bad = runner.invoke(app, ["validate", str(written)])
    assert bad.exit_code == 1
    assert f"{written}: signature: signature does not match the document" in bad.stdout


def test_key_types_left_to_ssh_keygen_are_verified_by_it(tmp_path, monkeypatch):
    # Security keys (sk-*) cannot be made here; force the ssh-keygen path for an ed25519 key.
    key, sub = _signed(tmp_path)
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)

    def unsupported(sig, message):
        raise NotImplementedError(sig.key_type)

    monkeypatch.setattr(sshsig, "verify", unsupported)
    verify_signature(sub)
    verify_signature(sub, allowed_signers=allowed)
    tampered = sub.model_copy(update={"id": "0" * 20})
    with pytest.raises(SignatureError, match="does not verify"):
        verify_signature(tampered)
    with pytest.raises(SignatureError, match="does not verify"):
        verify_signature(tampered, allowed_signers=allowed)


def test_cert_authority_lines_are_left_to_ssh_keygen(tmp_path):
    key, sub = _signed(tmp_path)
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key, "cert-authority")
    # ssh-keygen refuses a plain key where a certificate authority is listed
    with pytest.raises(SignatureError, match="does not verify"):
        verify_signature(sub, allowed_signers=allowed)


def test_cli_validate_reports_a_duplicate_elsewhere_in_the_tree(tmp_path):
    from typer.testing import CliRunner

    from diskq.cli import app

    _, sub = _signed(tmp_path)
    path = _write(tmp_path, sub)
    copy = tmp_path / "submissions" / "other" / "place" / path.name
    copy.parent.mkdir(parents=True)
    copy.write_text(path.read_text())
    out = CliRunner().invoke(app, ["validate", str(path)])
    assert out.exit_code == 1
    assert f"{path}: id: duplicate of {copy}" in out.stdout
    both = CliRunner().invoke(app, ["validate", str(tmp_path / "submissions")])
    assert "file belongs at submissions/samsung/samsung-ssd-860-pro-512gb/" in both.stdout
    assert "duplicate: another submission has the same id" in both.stdout


def _sign_by_hand(sub, key: Path, principal: str, tmp_path: Path):
    """What an older diskq or a hand-made file could do: sign whatever the contributor says."""
    from diskq.submission.model import Signature

    unsigned = sub.model_copy(update={"signature": None})
    msg = tmp_path / "payload"
    msg.write_bytes(signed_payload(unsigned))
    subprocess.run(["ssh-keygen", "-q", "-Y", "sign", "-n", NAMESPACE, "-f", str(key), str(msg)], check=True)
    armored = Path(f"{msg}.sig").read_text()
    Path(f"{msg}.sig").unlink()
    line = " ".join(Path(f"{key}.pub").read_text().split()[:2])
    return unsigned.model_copy(
        update={
            "signature": Signature(namespace=NAMESPACE, principal=principal, public_key=line, signature=armored.strip())
        }
    )


def test_a_file_attributed_to_someone_else_than_its_signer_is_rejected(tmp_path):
    key = keygen(tmp_path)
    allowed = allowed_signers(tmp_path / "allowed", "alice", key)
    sub = make_submission(result_from(fio_runs()), contributor=Contributor(github="torvalds"))
    forged = _sign_by_hand(sub, key, "alice", tmp_path)
    verify_signature(forged, allowed_signers=allowed)  # the signature itself is fine ...
    path = _write(tmp_path, forged)
    lines = [str(p) for p in validate_file(path, allowed_signers=allowed)[1]]
    assert lines == [
        f"{path}: contributor.github: is 'torvalds' but the signature's principal is 'alice': "
        "a file is signed by its contributor"
    ]  # ... the attribution is not
    with pytest.raises(SignatureError, match="contributor.github is 'torvalds'"):
        sign_submission(sub, key, principal="alice")


def test_github_logins_compare_without_case(tmp_path):
    key = keygen(tmp_path)
    sub = make_submission(result_from(fio_runs()), contributor=Contributor(github="OctoCat"))
    signed = sign_submission(sub, key, principal="octocat")
    path = _write(tmp_path, signed)
    assert validate_file(path, allowed_signers=allowed_signers(tmp_path / "allowed", "octocat", key))[1] == []


def test_cli_sign_refuses_to_sign_for_another_contributor(tmp_path, monkeypatch, capsys):
    from diskq.cli import main

    key = keygen(tmp_path)
    sub = make_submission(result_from(fio_runs()), contributor=Contributor(github="torvalds"))
    src = tmp_path / "theirs.json"
    src.write_text(dump(sub))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["sign", str(src), "-f", str(key), "--principal", "alice"])
    assert info.value.code != 0
    err = capsys.readouterr().err
    assert "diskq: error: contributor.github is 'torvalds' but the signature's principal is 'alice'" in err
    assert "Traceback" not in err and not (tmp_path / "submissions").exists()


def test_an_integer_a_signature_cannot_hold_is_refused_when_signing_and_validating(tmp_path, capsys, monkeypatch):
    key = keygen(tmp_path)
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)
    doc = result_from(fio_runs())
    doc.device.data_written_bytes = 2**60
    sub = make_submission(doc, contributor=Contributor(github="octocat"))
    with pytest.raises(
        SignatureError,
        match=r"cannot sign: result\.device\.data_written_bytes: integer "
        r"1152921504606846976 is beyond \+-\(2\^53-1\)",
    ):
        sign_submission(sub, key, principal="octocat")
    # signed anyway (by hand), then changed: 2^60 and 2^60 + 1 have the same canonical form
    signed = _sign_by_hand(sub, key, "octocat", tmp_path)
    path = _write(tmp_path, signed)
    path.write_text(path.read_text().replace("1152921504606846976", "1152921504606846977"))
    lines = [str(p) for p in validate_file(path, allowed_signers=allowed)[1]]
    assert lines == [
        f"{path}: result.device.data_written_bytes: not acceptable JSON: integer 1152921504606846977 "
        "is beyond +-(2^53-1): a signature over RFC 8785 JSON holds numbers as IEEE doubles, which "
        "cannot tell it from its neighbours"
    ]
    # diskq sign refuses the result document, with the member named
    from diskq.cli import main

    result = tmp_path / "result.json"
    result.write_text(doc.to_json())
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["sign", str(result), "-f", str(key), "--github", "octocat"])
    assert info.value.code != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == (
        f"diskq: error: cannot sign {result}: device.data_written_bytes: integer 1152921504606846976 "
        "is beyond +-(2^53-1): a signature over RFC 8785 JSON holds numbers as IEEE doubles, which "
        "cannot tell it from its neighbours"
    )


def test_signing_an_edited_submission_again_derives_its_id_afresh(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from diskq.cli import app
    from diskq.submission.sign import submission_id

    key, sub = _signed(tmp_path)
    data = json.loads(dump(sub))
    data["result"]["device"]["firmware"] = "EDITED"  # the contributor corrects a field, then signs again
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    out = runner.invoke(app, ["sign", str(edited), "-f", str(key), "--github", "octocat"])
    assert out.exit_code == 0, out.output
    written = Path(out.stdout.strip().splitlines()[-1])
    again = json.loads(written.read_text())
    assert again["id"] != sub.id and again["result"]["device"]["firmware"] == "EDITED"
    from diskq.submission.model import Submission

    assert again["id"] == submission_id(Submission.model_validate(again).result)
    assert written.name == f"{again['id']}.json"
    ok = runner.invoke(
        app, ["validate", str(written), "--allowed-signers", str(allowed_signers(tmp_path / "allowed", "octocat", key))]
    )
    assert ok.exit_code == 0, ok.output


def test_sign_refuses_a_principal_other_than_the_github_login(tmp_path, monkeypatch, capsys):
    from diskq.cli import main

    key = keygen(tmp_path)
    result = tmp_path / "result.json"
    result.write_text(result_from(fio_runs(), method_id="diskq-fdatasync-sweep").to_json())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    with pytest.raises(SystemExit) as info:
        main(["sign", str(result), "-f", str(key), "--github", "octocat", "--principal", "alice"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--github 'octocat' and --principal 'alice' name different signers" in err and "Traceback" not in err
    assert not (tmp_path / "submissions").exists()
    with pytest.raises(SystemExit) as same:
        main(["sign", str(result), "-f", str(key), "--github", "octocat", "--principal", "OctoCat", "-o", "out"])
    assert same.value.code == 0 and len(list((tmp_path / "out").glob("*.json"))) == 1
