#!/usr/bin/env python3
"""hvac's people-login calls, without hvac (PyPI is not reachable here), replayed on the adapter of
hvac_like.py (same session, headers and error mapping). What each call sends follows hvac's sources
(hvac/hvac on GitHub), and the checks follow hvac's own tests:

  hvac/api/system_backend/auth.py          enable_auth_method / disable_auth_method / list_auth_methods
  hvac/api/auth_methods/userpass.py        create_or_update_user, list_user, read_user, delete_user,
                                           update_password_on_user, login
  hvac/api/auth_methods/github.py          configure, read_configuration, map_team, read_team_mapping,
                                           map_user, read_user_mapping, login
  hvac/api/auth_methods/cert.py            create_ca_certificate_role, read_ca_certificate_role,
                                           list_certificate_roles, delete_certificate_role,
                                           configure_tls_certificate, login (requests' cert=(cert, key))
  tests/integration_tests/v1/test_integration.py          test_userpass_auth, test_create_userpass
  tests/integration_tests/api/auth_methods/test_github.py  (against hvac's mock GitHub behaviour)
  tests/integration_tests/api/auth_methods/test_cert.py

Usage: hvac_people.py HTTPS_ADDR ROOT_TOKEN CA_PEM CLIENT_CERT CLIENT_KEY MOCK_GITHUB_URL
Prints "ok <check>" / "FAIL <check>: <why>" and "summary passed=N failed=M"; exit 0 when all passed.
"""
import sys

import hvac_like as h
from hvac_like import Adapter, InvalidRequest, check, expect, format_url, RESULTS


class Client:
    def __init__(self, url, token, verify):
        self.adapter = Adapter(url, token)
        self.adapter.kwargs["verify"] = verify

    @property
    def token(self):
        return self.adapter.token

    @token.setter
    def token(self, v):
        self.adapter.token = v

    def login(self, url, use_token=True, **kwargs):
        """hvac/adapters.py Adapter.login: the answer's auth.client_token becomes the client's token."""
        response = self.adapter.post(url, **kwargs)
        if use_token:
            self.token = response["auth"]["client_token"]
        return response

    def write(self, path, **kwargs):
        return self.adapter.post(f"/v1/{path}", json=kwargs)

    def is_authenticated(self):
        try:
            self.adapter.get("/v1/auth/token/lookup-self")
            return True
        except (h.Forbidden, h.InvalidPath, h.InvalidRequest):
            return False

    # sys/auth (hvac/api/system_backend/auth.py)
    def enable_auth_method(self, method_type, path=None):
        params = {"type": method_type, "description": None, "config": None, "plugin_name": None, "local": False, "seal_wrap": False}
        return self.adapter.post(format_url("/v1/sys/auth/{path}", path=path or method_type), json=params)

    def disable_auth_method(self, path):
        return self.adapter.delete(format_url("/v1/sys/auth/{path}", path=path))

    def list_auth_methods(self):
        return self.adapter.get("/v1/sys/auth")


def run_userpass(c, root):
    def userpass_auth():
        if "userpass/" in c.list_auth_methods()["data"]:
            c.disable_auth_method("userpass")
        c.enable_auth_method("userpass")
        c.write("auth/userpass/users/testuser", password="testpass", policies="not_root")
        result = c.login("/v1/auth/userpass/login/testuser", json={"password": "testpass"})
        expect(c.token == result["auth"]["client_token"], "login sets the token")
        expect(c.is_authenticated(), "authenticated")
        c.token = root
        c.disable_auth_method("userpass")
    check("v1 test_userpass_auth", userpass_auth)

    def create_userpass():
        if "userpass/" not in c.list_auth_methods()["data"]:
            c.enable_auth_method("userpass")
        c.adapter.post("/v1/auth/userpass/users/testcreateuser", json={"password": "testcreateuserpass", "policies": "not_root"})
        result = c.login("/v1/auth/userpass/login/testcreateuser", json={"password": "testcreateuserpass"})
        expect(c.token == result["auth"]["client_token"], "login sets the token")
        expect(c.is_authenticated(), "authenticated")
        c.token = root
        c.adapter.post("/v1/auth/userpass/users/testcreateuser", json={"password": "testcreateuserpass", "policies": "not_root", "ttl": "10s"})
        c.token = result["auth"]["client_token"]
        result = c.login("/v1/auth/userpass/login/testcreateuser", json={"password": "testcreateuserpass"})
        expect(result["auth"]["lease_duration"] == 10, result["auth"])
        c.token = root
        c.disable_auth_method("userpass")
    check("v1 test_create_userpass", create_userpass)

    def userpass_api():
        c.enable_auth_method("userpass")
        c.adapter.post("/v1/auth/userpass/users/apiuser", json={"password": "pw1"})
        expect(c.adapter.list("/v1/auth/userpass/users")["data"]["keys"] == ["apiuser"], "list_user")
        expect("token_policies" in c.adapter.get("/v1/auth/userpass/users/apiuser")["data"], "read_user")
        c.adapter.post("/v1/auth/userpass/users/apiuser/password", json={"password": "pw2"})
        c.login("/v1/auth/userpass/login/apiuser", use_token=False, json={"password": "pw2"})
        try:
            c.login("/v1/auth/userpass/login/apiuser", use_token=False, json={"password": "pw1"})
            raise AssertionError("the old password still logs in")
        except InvalidRequest as e:
            expect("invalid username or password" in str(e), str(e))
        c.adapter.delete("/v1/auth/userpass/users/apiuser")
        c.disable_auth_method("userpass")
    check("userpass.create/list/read/update_password/login/delete", userpass_api)


def run_github(c, root, mock_url):
    mount = "test-github"

    def setup():
        if f"{mount}/" in c.list_auth_methods()["data"]:
            c.disable_auth_method(mount)
        c.enable_auth_method("github", path=mount)

    def configure():
        setup()
        r = c.adapter.post(f"/v1/auth/{mount}/config", json={"organization": "some-test-org", "base_url": "", "ttl": 0, "max_ttl": 0})
        expect(bool(r), "configure answered")
    check("github test_configure", configure)

    cases = [("just organization", "/", "", "", 0, 0), ("different base url", "https://cathub.example/", "", "", 0, 0),
             ("custom ttl seconds", "/", "500s", "", 500, 0), ("custom ttl minutes", "/", "500m", "", 30000, 0),
             ("custom ttl hours", "/", "500h", "", 1800000, 0), ("custom max ttl", "/", "", "500s", 0, 500)]
    for label, base_url, ttl, max_ttl, want_ttl, want_max in cases:
        def configure_and_read(base_url=base_url, ttl=ttl, max_ttl=max_ttl, want_ttl=want_ttl, want_max=want_max):
            setup()
            r = c.adapter.post(f"/v1/auth/{mount}/config", json={"organization": "some-test-org", "base_url": base_url, "ttl": ttl, "max_ttl": max_ttl})
            expect(r.status_code == 204, r.status_code)
            data = c.adapter.get(f"/v1/auth/{mount}/config")["data"]
            expect(data["organization"] == "some-test-org" and data["base_url"] == base_url, data)
            expect(data["ttl"] == want_ttl and data["max_ttl"] == want_max, data)
        check(f"github test_configure_and_read_configuration ({label})", configure_and_read)

    for kind, name in (("teams", "hvac"), ("users", "hvac")):
        for policies in (None, ["default"], ["default", "root"]):
            def map_and_read(kind=kind, name=name, policies=policies):
                setup()
                value = ",".join(policies or [])
                r = c.adapter.post(f"/v1/auth/{mount}/map/{kind}/{name}", json={"value": value})
                expect(bool(r), "map answered")
                data = c.adapter.get(f"/v1/auth/{mount}/map/{kind}/{name}")["data"]
                expect(data == {"key": name, "value": value}, data)
            check(f"github map_{kind[:-1]} and read ({policies})", map_and_read)
        def read_unmapped(kind=kind):
            setup()
            expect("data" in c.adapter.get(f"/v1/auth/{mount}/map/{kind}/hvac"), "data in the answer")
        check(f"github test_read_{kind[:-1]}_mapping", read_unmapped)

    def login_valid():
        setup()
        c.adapter.post(f"/v1/auth/{mount}/config", json={"organization": "hvac", "base_url": mock_url})
        c.login(f"/v1/auth/{mount}/login", json={"token": "valid-token"})
        c.token = root
    check("github test_login (valid token)", login_valid)

    def login_invalid():
        setup()
        c.adapter.post(f"/v1/auth/{mount}/config", json={"organization": "hvac", "base_url": mock_url})
        try:
            c.login(f"/v1/auth/{mount}/login", json={"token": "invalid-token"})
            raise AssertionError("an outsider logged in")
        except InvalidRequest as e:
            expect("user is not part of required org" in str(e), str(e))
        c.token = root
        c.disable_auth_method(mount)
    check("github test_login (invalid token not in org)", login_invalid)


def run_cert(c, root, cert_file, key_file):
    mount = "cert-test"
    with open(cert_file) as f:
        certificate = f.read()

    def role(name):
        params = {"name": name, "certificate": certificate, "allowed_common_names": "", "allowed_dns_sans": "",
                  "allowed_email_sans": "", "allowed_uri_sans": "", "allowed_organizational_units": "",
                  "required_extensions": "", "display_name": "", "token_ttl": 0, "token_max_ttl": 0,
                  "token_policies": [], "token_bound_cidrs": [], "token_explicit_max_ttl": 0,
                  "token_no_default_policy": False, "token_num_uses": 0, "token_period": 0, "token_type": ""}
        return c.adapter.post(f"/v1/auth/{mount}/certs/{name}", json=params)

    def setup():
        if f"{mount}/" not in c.list_auth_methods()["data"]:
            c.enable_auth_method("cert", path=mount)
        role("testrole")

    def create():
        setup()
        expect(role("testrole2").status_code == 204, "204")
        c.adapter.delete(f"/v1/auth/{mount}/certs/testrole2")
    check("cert test_create_ca_certificate_role", create)

    def read():
        setup()
        r = c.adapter.get(f"/v1/auth/{mount}/certs/testrole", json={"name": "testrole"})
        expect(r["data"]["display_name"] == "testrole", r["data"])
    check("cert test_read_ca_certificate_role", read)

    def list_roles():
        setup()
        expect(c.adapter.list(f"/v1/auth/{mount}/certs")["data"]["keys"] == ["testrole"], "keys")
    check("cert test_list_certificate_roles", list_roles)

    def delete():
        setup()
        role("testrole2")
        expect(c.adapter.delete(f"/v1/auth/{mount}/certs/testrole2").status_code == 204, "204")
    check("cert test_delete_certificate_role", delete)

    def configure():
        setup()
        expect(c.adapter.post(f"/v1/auth/{mount}/config", json={"disable_binding": False}).status_code == 204, "204")
    check("cert test_configure_tls_certificate", configure)

    for name in ("testrole", ""):
        def login(name=name):
            setup()
            params = {"use_token": True}
            if name:
                params["name"] = name
            r = c.adapter.post(f"/v1/auth/{mount}/login", json=params, cert=(cert_file, key_file))
            expect(isinstance(r, dict) and r["auth"]["client_token"], r)
        check(f"cert test_login (name={name!r})", login)

    def login_unknown_role():
        setup()
        try:
            c.adapter.post(f"/v1/auth/{mount}/login", json={"use_token": True, "name": "testrole2"}, cert=(cert_file, key_file))
            raise AssertionError("an unknown role logged in")
        except InvalidRequest:
            pass
    check("cert test_login (unknown role -> InvalidRequest)", login_unknown_role)


def main(argv):
    addr, root, ca, cert_file, key_file, mock_url = argv[1:7]
    c = Client(addr, root, ca)
    run_userpass(c, root)
    run_github(c, root, mock_url)
    run_cert(c, root, cert_file, key_file)
    print(f"summary passed={RESULTS['passed']} failed={RESULTS['failed']}", flush=True)
    return 0 if RESULTS["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
