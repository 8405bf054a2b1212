"""hvac's system-backend key tests, run with the real hvac library against a keyhold daemon.

The test file this follows is hvac's tests/integration_tests/api/system_backend/test_key.py (hvac/hvac
on GitHub): five tests, run here in unittest's order (alphabetical) and with the same assertions,
with the key holder's state (root token, unseal keys) carried from one to the next as hvac's test
manager does. hvac decodes the generated root token with `vault operator generate-root -decode
-otp`; here `keyhold operator generate-root -decode -otp` does it (the same encoding).

Usage: hvac_test_key.py ADDR ROOT_TOKEN KEYS_JSON KEYHOLD_BIN
Prints "ok NAME" or "FAIL NAME: why" per test and "summary passed=N failed=M" last.
"""
import json
import subprocess
import sys

import hvac
from hvac import exceptions

ADDR, ROOT, KEYS, BIN = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
# hvac's utils.get_generate_root_otp() for Vault >= 1.10.
OTP = "BMjzW3wAsEzINXCM05Wbas3u9zSl"


class Manager:
    root_token = ROOT
    keys = KEYS


manager = Manager()


def client():
    return hvac.Client(url=ADDR, token=manager.root_token)


def decode(encoded, otp):
    out = subprocess.run(
        ["node", BIN, "operator", "generate-root", "-decode=" + encoded, "-otp=" + otp],
        capture_output=True, text=True, check=True,
    )
    return out.stdout.strip()


def test_get_backed_up_keys():
    c = client()
    try:
        c.sys.read_backup_keys()
    except exceptions.InvalidRequest as e:
        assert "no backed-up keys found" in str(e), str(e)
        return
    raise AssertionError("read_backup_keys did not raise InvalidRequest")


def test_rekey_multi():
    c = client()
    assert not c.rekey_status["started"]
    c.sys.start_rekey()
    assert c.rekey_status["started"]
    c.sys.cancel_rekey()
    assert not c.rekey_status["started"]
    result = c.sys.start_rekey()
    result = c.sys.rekey_multi(manager.keys, nonce=result["nonce"])
    assert result["complete"], result
    manager.keys = result["keys"]
    # The new keys unseal (hvac's manager.unseal()): they must open the daemon after a seal.
    c.sys.seal()
    status = c.sys.submit_unseal_keys(manager.keys)
    assert status["sealed"] is False, status


def test_rotate():
    c = client()
    status = c.key_status
    c.sys.rotate_encryption_key()
    assert c.key_status["term"] > status["term"], (c.key_status, status)


def test_start_generate_root_then_cancel():
    c = client()
    assert not c.sys.read_root_generation_progress()["started"]
    c.sys.start_root_token_generation(otp=OTP)
    assert c.sys.read_root_generation_progress()["started"]
    c.sys.cancel_root_generation()
    assert not c.sys.read_root_generation_progress()["started"]


def test_start_generate_root_with_completion():
    c = client()
    assert not c.sys.read_root_generation_progress()["started"]
    start = c.sys.start_root_token_generation(otp=OTP)
    assert c.sys.read_root_generation_progress()["started"]
    nonce = start["nonce"]
    last = {}
    for key in manager.keys[0:3]:
        last = c.sys.generate_root(key=key, nonce=nonce)
    assert not c.sys.read_root_generation_progress()["started"]
    new_root = decode(last["encoded_root_token"], OTP)
    c.lookup_token(token=new_root)
    c.token = new_root
    assert c.is_authenticated(), "the new root token does not authenticate"
    manager.root_token = new_root


passed = failed = 0
for name in sorted(n for n in dir() if n.startswith("test_")):
    try:
        globals()[name]()
        print("ok " + name)
        passed += 1
    except Exception as e:  # noqa: BLE001 - every failure is reported, the run goes on
        print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
        failed += 1
print("summary passed=%d failed=%d" % (passed, failed))
sys.exit(1 if failed else 0)
