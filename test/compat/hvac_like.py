#!/usr/bin/env python3
"""hvac's wire behaviour, without hvac (PyPI is not reachable here).

Each helper below sends what the named hvac call sends -- method, path, headers, JSON body (None
values included where hvac includes them) -- and reads the response the way hvac does. Sources read
(hvac/hvac on GitHub):

  hvac/adapters.py                         RawAdapter/JSONAdapter: one requests.Session (keep-alive),
                                           X-Vault-Request: true, X-Vault-Token, "//" collapsed, every
                                           URL part stripped of slashes and joined, LIST sent as the
                                           LIST verb, errors parsed only when Content-Type is exactly
                                           application/json, 200 -> response.json(), else the Response
  hvac/utils.py, hvac/exceptions.py        status -> exception class (VaultError.from_status)
  hvac/v1/__init__.py                      Client.read/list(GET ?list=True)/write/delete,
                                           is_authenticated, lookup_token
  hvac/api/secrets_engines/transit.py      create_key ... trim_key
  hvac/api/secrets_engines/kv_v2.py        configure ... delete_metadata_and_all_versions
  hvac/api/system_backend/{seal,init,health,mount,policy,policies,capabilities}.py
  hvac/api/system_backend/auth.py          list/enable/disable_auth_method, read_auth_method_tuning, tune_auth_method
  tests/integration_tests/api/system_backend/test_mount.py, test_auth.py: their steps, in order
  hvac/api/auth_methods/token.py           create, lookup, lookup_self, renew_self, revoke_self

Usage: hvac_like.py ADDR TOKEN [main|init|unseal KEYS_JSON]
Prints "ok <check>" or "FAIL <check>: <why>" per check, then "summary passed=N failed=M";
exit status 0 only when every check passed. In "init" mode the last line is
"init-result <json>" with the root token and keys.
"""
import base64
import json
import sys
import urllib.parse

import requests


# ---------------------------------------------------------------------------- errors (hvac/exceptions.py)
class VaultError(Exception):
    def __init__(self, message=None, errors=None, method=None, url=None, text=None, json=None):
        self.errors = errors
        self.method = method
        self.url = url
        self.text = text
        self.json = json
        super().__init__(message if message is not None else ", ".join(errors or []))


class InvalidRequest(VaultError): pass          # 400
class Unauthorized(VaultError): pass            # 401
class Forbidden(VaultError): pass               # 403
class InvalidPath(VaultError): pass             # 404
class UnsupportedOperation(VaultError): pass    # 405
class PreconditionFailed(VaultError): pass      # 412
class RateLimitExceeded(VaultError): pass       # 429
class InternalServerError(VaultError): pass     # 500
class VaultNotInitialized(VaultError): pass     # 501
class BadGateway(VaultError): pass              # 502
class VaultDown(VaultError): pass               # 503
class UnexpectedError(VaultError): pass

STATUS_EXC = {400: InvalidRequest, 401: Unauthorized, 403: Forbidden, 404: InvalidPath,
              405: UnsupportedOperation, 412: PreconditionFailed, 429: RateLimitExceeded,
              500: InternalServerError, 501: VaultNotInitialized, 502: BadGateway, 503: VaultDown}


def format_url(fmt, **kwargs):
    """hvac.utils.format_url: every argument URL-quoted (slashes kept)."""
    return fmt.format(**{k: urllib.parse.quote(str(v).encode("utf-8")) for k, v in kwargs.items()})


def remove_nones(d):
    return {k: v for k, v in d.items() if v is not None}


# ---------------------------------------------------------------------------- adapter (hvac/adapters.py)
class Adapter:
    """JSONAdapter over RawAdapter, as hvac.Client builds by default."""

    def __init__(self, base_uri, token=None, strict_http=False):
        self.base_uri = base_uri
        self.token = token
        self.strict_http = strict_http
        self.session = requests.Session()
        self.kwargs = {"timeout": 30}

    @staticmethod
    def urljoin(*args):
        return "/".join(str(a).strip("/") for a in args)

    def raw_request(self, method, url, headers=None, raise_exception=True, **kwargs):
        while "//" in url:
            url = url.replace("//", "/")
        url = self.urljoin(self.base_uri, url)
        headers = dict(headers or {})
        headers["X-Vault-Request"] = "true"
        if self.token:
            headers["X-Vault-Token"] = self.token
        wrap_ttl = kwargs.pop("wrap_ttl", None)
        if wrap_ttl:
            headers["X-Vault-Wrap-TTL"] = str(wrap_ttl)
        kw = dict(self.kwargs)
        kw.update(kwargs)
        if self.strict_http and method.lower() == "list":
            method = "get"
            params = kw.get("params", {})
            params["list"] = "true"
            kw["params"] = params
        response = self.session.request(method=method, url=url, headers=headers, allow_redirects=True, **kw)
        if not response.ok and raise_exception:
            errors = body = None
            if response.headers.get("Content-Type") == "application/json":
                try:
                    body = response.json()
                except ValueError:
                    pass
                else:
                    errors = body.get("errors")
            message = None if errors is not None else response.text
            exc = STATUS_EXC.get(response.status_code, UnexpectedError)
            raise exc(message, errors=errors, method=method, url=url, text=response.text, json=body)
        return response

    def request(self, method, url, **kwargs):
        response = self.raw_request(method, url, **kwargs)
        if response.status_code == 200:
            try:
                return response.json()
            except ValueError:
                pass
        return response

    def get(self, url, **kw): return self.request("get", url, **kw)
    def post(self, url, **kw): return self.request("post", url, **kw)
    def put(self, url, **kw): return self.request("put", url, **kw)
    def delete(self, url, **kw): return self.request("delete", url, **kw)
    def list(self, url, **kw): return self.request("list", url, **kw)
    def head(self, url, **kw): return self.request("head", url, **kw)


# ---------------------------------------------------------------------------- API classes
class Client:
    """hvac/v1/__init__.py (generic calls) plus the api categories used below."""

    def __init__(self, url, token=None, strict_http=False):
        self.adapter = Adapter(url, token, strict_http)
        self.transit = Transit(self.adapter)
        self.kv = KvV2(self.adapter)
        self.sys = Sys(self.adapter)
        self.token_auth = TokenAuth(self.adapter)

    @property
    def token(self):
        return self.adapter.token

    @token.setter
    def token(self, value):
        self.adapter.token = value

    def read(self, path, wrap_ttl=None):
        try:
            return self.adapter.get(f"/v1/{path}", wrap_ttl=wrap_ttl)
        except InvalidPath:
            return None

    def list(self, path):
        try:
            return self.adapter.get(f"/v1/{path}", params={"list": True})
        except InvalidPath:
            return None

    def write(self, path, wrap_ttl=None, **kwargs):
        return self.adapter.post(f"/v1/{path}", json=kwargs, wrap_ttl=wrap_ttl)

    def delete(self, path):
        self.adapter.delete(f"/v1/{path}")

    def lookup_token(self, token=None):
        if token:
            return self.adapter.post("/v1/auth/token/lookup", json={"token": token})
        return self.adapter.get("/v1/auth/token/lookup-self")

    def is_authenticated(self):
        if not self.token:
            return False
        try:
            self.lookup_token()
            return True
        except (Forbidden, InvalidPath, InvalidRequest):
            return False


class Transit:
    """hvac/api/secrets_engines/transit.py"""

    def __init__(self, a, mount_point="transit"):
        self.a, self.mp = a, mount_point

    def create_key(self, name, convergent_encryption=None, derived=None, exportable=None,
                   allow_plaintext_backup=None, key_type=None, auto_rotate_period=None):
        params = remove_nones({"convergent_encryption": convergent_encryption, "derived": derived,
                               "exportable": exportable, "allow_plaintext_backup": allow_plaintext_backup,
                               "type": key_type, "auto_rotate_period": auto_rotate_period})
        return self.a.post(format_url("/v1/{mp}/keys/{name}", mp=self.mp, name=name), json=params)

    def read_key(self, name):
        return self.a.get(format_url("/v1/{mp}/keys/{name}", mp=self.mp, name=name))

    def list_keys(self):
        return self.a.list(format_url("/v1/{mp}/keys", mp=self.mp))

    def delete_key(self, name):
        return self.a.delete(format_url("/v1/{mp}/keys/{name}", mp=self.mp, name=name))

    def update_key_configuration(self, name, min_decryption_version=None, min_encryption_version=None,
                                 deletion_allowed=None, exportable=None, allow_plaintext_backup=None,
                                 auto_rotate_period=None):
        params = remove_nones({"min_decryption_version": min_decryption_version,
                               "min_encryption_version": min_encryption_version,
                               "deletion_allowed": deletion_allowed, "exportable": exportable,
                               "allow_plaintext_backup": allow_plaintext_backup,
                               "auto_rotate_period": auto_rotate_period})
        return self.a.post(format_url("/v1/{mp}/keys/{name}/config", mp=self.mp, name=name), json=params)

    def rotate_key(self, name):
        return self.a.post(format_url("/v1/{mp}/keys/{name}/rotate", mp=self.mp, name=name))

    def export_key(self, name, key_type, version=None):
        path = format_url("/v1/{mp}/export/{kt}/{name}", mp=self.mp, kt=key_type, name=name)
        if version is not None:
            path = self.a.urljoin(path, version)
        return self.a.get(path)

    def encrypt_data(self, name, plaintext, context=None, key_version=None, nonce=None, batch_input=None,
                     type=None, convergent_encryption=None):
        params = {"plaintext": plaintext}
        params.update(remove_nones({"context": context, "key_version": key_version, "nonce": nonce,
                                    "batch_input": batch_input, "type": type,
                                    "convergent_encryption": convergent_encryption}))
        return self.a.post(format_url("/v1/{mp}/encrypt/{name}", mp=self.mp, name=name), json=params)

    def decrypt_data(self, name, ciphertext, context=None, nonce=None, batch_input=None):
        params = {"ciphertext": ciphertext}
        params.update(remove_nones({"context": context, "nonce": nonce, "batch_input": batch_input}))
        return self.a.post(format_url("/v1/{mp}/decrypt/{name}", mp=self.mp, name=name), json=params)

    def rewrap_data(self, name, ciphertext, context=None, key_version=None, nonce=None, batch_input=None):
        params = {"ciphertext": ciphertext}
        params.update(remove_nones({"context": context, "key_version": key_version, "nonce": nonce,
                                    "batch_input": batch_input}))
        return self.a.post(format_url("/v1/{mp}/rewrap/{name}", mp=self.mp, name=name), json=params)

    def generate_data_key(self, name, key_type, context=None, nonce=None, bits=None):
        params = remove_nones({"context": context, "nonce": nonce, "bits": bits})
        return self.a.post(format_url("/v1/{mp}/datakey/{kt}/{name}", mp=self.mp, kt=key_type, name=name),
                           json=params)

    def generate_random_bytes(self, n_bytes=None, output_format=None):
        params = remove_nones({"bytes": n_bytes, "format": output_format})
        return self.a.post(format_url("/v1/{mp}/random", mp=self.mp), json=params)

    def hash_data(self, hash_input, algorithm=None, output_format=None):
        params = {"input": hash_input}
        params.update(remove_nones({"algorithm": algorithm, "format": output_format}))
        return self.a.post(format_url("/v1/{mp}/hash", mp=self.mp), json=params)

    def generate_hmac(self, name, hash_input, key_version=None, algorithm=None):
        params = {"input": hash_input}
        params.update(remove_nones({"key_version": key_version, "algorithm": algorithm}))
        return self.a.post(format_url("/v1/{mp}/hmac/{name}", mp=self.mp, name=name), json=params)

    def sign_data(self, name, hash_input=None, key_version=None, hash_algorithm=None, context=None,
                  prehashed=None, signature_algorithm=None, marshaling_algorithm=None, salt_length=None,
                  batch_input=None):
        # hvac always sends "input", even as null next to batch_input.
        params = {"input": hash_input}
        params.update(remove_nones({"key_version": key_version, "hash_algorithm": hash_algorithm,
                                    "context": context, "prehashed": prehashed,
                                    "signature_algorithm": signature_algorithm,
                                    "marshaling_algorithm": marshaling_algorithm, "salt_length": salt_length,
                                    "batch_input": batch_input}))
        return self.a.post(format_url("/v1/{mp}/sign/{name}", mp=self.mp, name=name), json=params)

    def verify_signed_data(self, name, hash_input, signature=None, hmac=None, hash_algorithm=None,
                           context=None, prehashed=None, signature_algorithm=None, salt_length=None,
                           marshaling_algorithm=None):
        # hvac repeats the key name in the body.
        params = {"name": name, "input": hash_input}
        params.update(remove_nones({"hash_algorithm": hash_algorithm, "signature": signature, "hmac": hmac,
                                    "context": context, "prehashed": prehashed,
                                    "signature_algorithm": signature_algorithm,
                                    "marshaling_algorithm": marshaling_algorithm, "salt_length": salt_length}))
        return self.a.post(format_url("/v1/{mp}/verify/{name}", mp=self.mp, name=name), json=params)

    def backup_key(self, name):
        return self.a.get(format_url("/v1/{mp}/backup/{name}", mp=self.mp, name=name))

    def restore_key(self, backup, name=None, force=None):
        params = {"backup": backup}
        params.update(remove_nones({"force": force}))
        path = format_url("/v1/{mp}/restore", mp=self.mp)
        if name is not None:
            path = self.a.urljoin(path, name)
        return self.a.post(path, json=params)

    def trim_key(self, name, min_version):
        return self.a.post(format_url("/v1/{mp}/keys/{name}/trim", mp=self.mp, name=name),
                           json={"min_available_version": min_version})


class KvV2:
    """hvac/api/secrets_engines/kv_v2.py"""

    def __init__(self, a, mount_point="secret"):
        self.a, self.mp = a, mount_point

    def _p(self, kind, path):
        return format_url("/v1/{mp}/" + kind + "/{path}", mp=self.mp, path=path)

    def configure(self, max_versions=10, cas_required=None, delete_version_after="0s"):
        params = {"max_versions": max_versions, "delete_version_after": delete_version_after}
        if cas_required is not None:
            params["cas_required"] = cas_required
        return self.a.post(format_url("/v1/{mp}/config", mp=self.mp), json=params)

    def read_configuration(self):
        return self.a.get(format_url("/v1/{mp}/config", mp=self.mp))

    def read_secret_version(self, path, version=None, raise_on_deleted_version=None):
        params = {}
        if version is not None:
            params["version"] = version
        try:
            return self.a.get(self._p("data", path), params=params)
        except InvalidPath as e:
            # hvac >= 1.0 returns the 404 body of a soft-deleted version unless asked to raise.
            if not raise_on_deleted_version and e.json and (e.json.get("data") or {}).get("metadata", {}).get("deletion_time", "") != "":
                return e.json
            raise

    def create_or_update_secret(self, path, secret, cas=None):
        params = {"options": {}, "data": secret}
        if cas is not None:
            params["options"]["cas"] = cas
        return self.a.post(self._p("data", path), json=params)

    def patch(self, path, secret):
        current = self.read_secret_version(path, raise_on_deleted_version=True)
        patched = current["data"]["data"]
        patched.update(secret)
        return self.create_or_update_secret(path, patched, cas=current["data"]["metadata"]["version"])

    def delete_latest_version_of_secret(self, path):
        return self.a.delete(self._p("data", path))

    def delete_secret_versions(self, path, versions):
        return self.a.post(self._p("delete", path), json={"versions": versions})

    def undelete_secret_versions(self, path, versions):
        return self.a.post(self._p("undelete", path), json={"versions": versions})

    def destroy_secret_versions(self, path, versions):
        return self.a.post(self._p("destroy", path), json={"versions": versions})

    def list_secrets(self, path):
        return self.a.list(self._p("metadata", path))

    def read_secret_metadata(self, path):
        return self.a.get(self._p("metadata", path))

    def update_metadata(self, path, max_versions=None, cas_required=None, delete_version_after="0s",
                        custom_metadata=None):
        params = {"delete_version_after": delete_version_after}
        if max_versions is not None:
            params["max_versions"] = max_versions
        if cas_required is not None:
            params["cas_required"] = cas_required
        if custom_metadata is not None:
            params["custom_metadata"] = custom_metadata
        return self.a.post(self._p("metadata", path), json=params)

    def delete_metadata_and_all_versions(self, path):
        return self.a.delete(self._p("metadata", path))


class Sys:
    """hvac/api/system_backend/: seal.py, init.py, health.py, mount.py, policy.py, policies.py, capabilities.py"""

    def __init__(self, a):
        self.a = a

    def read_seal_status(self):
        return self.a.get("/v1/sys/seal-status")

    def is_sealed(self):
        return self.read_seal_status()["sealed"]

    def submit_unseal_key(self, key=None, reset=False, migrate=False):
        params = {"migrate": migrate}
        if not reset and key is not None:
            params["key"] = key
        elif reset:
            params["reset"] = reset
        return self.a.put("/v1/sys/unseal", json=params)

    def submit_unseal_keys(self, keys, migrate=False):
        result = None
        for key in keys:
            result = self.submit_unseal_key(key=key, migrate=migrate)
            if not result["sealed"]:
                break
        return result

    def read_init_status(self):
        return self.a.get("/v1/sys/init")

    def is_initialized(self):
        return self.read_init_status()["initialized"]

    def initialize(self, secret_shares=5, secret_threshold=3, pgp_keys=None, root_token_pgp_key=None):
        params = {"secret_shares": secret_shares, "secret_threshold": secret_threshold,
                  "root_token_pgp_key": root_token_pgp_key}
        if pgp_keys is not None:
            params["pgp_keys"] = pgp_keys
        return self.a.put("/v1/sys/init", json=params)

    def read_health_status(self, standby_ok=False, active_code=200, standby_code=429, dr_secondary_code=472,
                           performance_standby_code=473, sealed_code=503, uninit_code=501, method="HEAD"):
        params = {"standby_ok": standby_ok, "active_code": active_code, "standby_code": standby_code,
                  "dr_secondary_code": dr_secondary_code, "performance_standby_code": performance_standby_code,
                  "sealed_code": sealed_code, "uninit_code": uninit_code}
        if method == "HEAD":
            return self.a.head("/v1/sys/health")
        # hvac sends the parameters as a JSON body on the GET.
        return self.a.get("/v1/sys/health", json=params)

    def list_mounted_secrets_engines(self):
        return self.a.get("/v1/sys/mounts")

    def retrieve_mount_option(self, mount_point, option_name, default_value=None):
        engines = self.list_mounted_secrets_engines()["data"]
        options = engines[f"{mount_point}/"].get("options")
        if options is None:
            return default_value
        return options.get(option_name, default_value)

    def enable_secrets_engine(self, backend_type, path=None, description=None, config=None, plugin_name=None,
                              options=None, local=False, seal_wrap=False, **kwargs):
        if path is None:
            path = backend_type
        params = {"type": backend_type, "description": description, "config": config, "options": options,
                  "plugin_name": plugin_name, "local": local, "seal_wrap": seal_wrap}
        params.update(kwargs)
        return self.a.post(format_url("/v1/sys/mounts/{path}", path=path), json=params)

    def disable_secrets_engine(self, path):
        return self.a.delete(format_url("/v1/sys/mounts/{path}", path=path))

    def read_mount_configuration(self, path):
        return self.a.get(format_url("/v1/sys/mounts/{path}/tune", path=path))

    def tune_mount_configuration(self, path, **params):
        return self.a.post(format_url("/v1/sys/mounts/{path}/tune", path=path),
                           json={k: v for k, v in params.items() if v is not None})

    def move_backend(self, from_path, to_path):
        return self.a.post("/v1/sys/remount", json={"from": from_path, "to": to_path})

    def list_auth_methods(self):
        return self.a.get("/v1/sys/auth")

    def enable_auth_method(self, method_type, description=None, config=None, plugin_name=None, local=False,
                           path=None, **kwargs):
        if path is None:
            path = method_type
        params = {"type": method_type, "description": description, "config": config, "plugin_name": plugin_name,
                  "local": local}
        params.update(kwargs)
        return self.a.post(format_url("/v1/sys/auth/{path}", path=path), json=params)

    def disable_auth_method(self, path):
        return self.a.delete(format_url("/v1/sys/auth/{path}", path=path))

    def read_auth_method_tuning(self, path):
        return self.a.get(format_url("/v1/sys/auth/{path}/tune", path=path))

    def tune_auth_method(self, path, default_lease_ttl=None, max_lease_ttl=None, description=None,
                         audit_non_hmac_request_keys=None, audit_non_hmac_response_keys=None,
                         listing_visibility=None, passthrough_request_headers=None, **kwargs):
        params = {"default_lease_ttl": default_lease_ttl, "max_lease_ttl": max_lease_ttl,
                  "description": description, "audit_non_hmac_request_keys": audit_non_hmac_request_keys,
                  "audit_non_hmac_response_keys": audit_non_hmac_response_keys,
                  "listing_visibility": listing_visibility,
                  "passthrough_request_headers": passthrough_request_headers}
        params.update(kwargs)
        return self.a.post(format_url("/v1/sys/auth/{path}/tune", path=path), json=remove_nones(params))

    def list_policies(self):
        return self.a.get("/v1/sys/policy")

    def read_policy(self, name):
        return self.a.get(format_url("/v1/sys/policy/{name}", name=name))

    def create_or_update_policy(self, name, policy, pretty_print=True):
        if isinstance(policy, dict):
            policy = json.dumps(policy, indent=4, sort_keys=True) if pretty_print else json.dumps(policy)
        return self.a.put(format_url("/v1/sys/policy/{name}", name=name), json={"policy": policy})

    def delete_policy(self, name):
        return self.a.delete(format_url("/v1/sys/policy/{name}", name=name))

    def list_acl_policies(self):
        return self.a.list("/v1/sys/policies/acl")

    def read_acl_policy(self, name):
        return self.a.get(format_url("/v1/sys/policies/acl/{name}", name=name))

    def create_or_update_acl_policy(self, name, policy, pretty_print=True):
        if isinstance(policy, dict):
            policy = json.dumps(policy, indent=4, sort_keys=True) if pretty_print else json.dumps(policy)
        return self.a.put(format_url("/v1/sys/policies/acl/{name}", name=name), json={"policy": policy})

    def delete_acl_policy(self, name):
        return self.a.delete(format_url("/v1/sys/policies/acl/{name}", name=name))

    def get_capabilities(self, paths):
        return self.a.post("/v1/sys/capabilities-self", json={"paths": paths})


class TokenAuth:
    """hvac/api/auth_methods/token.py"""

    def __init__(self, a):
        self.a = a

    def create(self, id=None, policies=None, meta=None, no_parent=False, no_default_policy=False, renewable=True,
               ttl=None, type=None, explicit_max_ttl=None, display_name="token", num_uses=0, period=None,
               entity_alias=None):
        params = remove_nones({"id": id, "policies": policies, "meta": meta, "no_parent": no_parent,
                               "no_default_policy": no_default_policy, "renewable": renewable, "ttl": ttl,
                               "type": type, "explicit_max_ttl": explicit_max_ttl, "display_name": display_name,
                               "num_uses": num_uses, "period": period, "entity_alias": entity_alias})
        return self.a.post("/v1/auth/token/create", json=params)

    def lookup(self, token):
        return self.a.post("/v1/auth/token/lookup", json={"token": token})

    def lookup_self(self):
        return self.a.get("/v1/auth/token/lookup-self")

    def renew_self(self, increment=None):
        return self.a.post("/v1/auth/token/renew-self", json=remove_nones({"increment": increment}))

    def revoke_self(self):
        return self.a.post("/v1/auth/token/revoke-self")


# ---------------------------------------------------------------------------- checks
RESULTS = {"passed": 0, "failed": 0}


def check(name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - report every failure, keep going
        RESULTS["failed"] += 1
        print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
    else:
        RESULTS["passed"] += 1
        print(f"ok {name}", flush=True)


def expect(cond, why):
    if not cond:
        raise AssertionError(why)


def raises(exc_type, fn):
    try:
        fn()
    except exc_type as e:
        return e
    raise AssertionError(f"expected {exc_type.__name__}")


def b64(s):
    return base64.b64encode(s.encode()).decode()


def envelope_ok(r):
    expect(isinstance(r, dict), f"expected a JSON dict, got {type(r).__name__}")
    for k in ("request_id", "lease_id", "renewable", "lease_duration", "data", "wrap_info", "warnings", "auth"):
        expect(k in r, f"envelope lacks {k}: {sorted(r)}")


def run_main(addr, token):
    c = Client(addr, token)
    a = c.adapter

    def seal_and_init():
        st = c.sys.read_seal_status()
        expect(st["sealed"] is False and st["initialized"] is True, st)
        expect(isinstance(st["t"], int) and isinstance(st["n"], int) and isinstance(st["version"], str), st)
        expect(c.sys.is_sealed() is False, "is_sealed")
        expect(c.sys.is_initialized() is True, "is_initialized")
    check("sys.read_seal_status/is_sealed/is_initialized", seal_and_init)

    def health():
        h = c.sys.read_health_status()  # HEAD: the Response comes back (no JSON body)
        expect(isinstance(h, requests.Response) and h.status_code == 200 and h.content == b"", f"HEAD: {h}")
        g = c.sys.read_health_status(method="GET")
        expect(g["initialized"] is True and g["sealed"] is False and g["standby"] is False, g)
        expect(isinstance(g["server_time_utc"], int), g)
    check("sys.read_health_status HEAD and GET", health)

    def authenticated():
        expect(c.is_authenticated() is True, "root token not authenticated")
        bad = Client(addr, "not-a-token")
        expect(bad.is_authenticated() is False, "bogus token authenticated")
        e = raises(Forbidden, lambda: bad.lookup_token())
        expect(e.errors == ["permission denied"], e.errors)
    check("Client.is_authenticated (200 vs 403 Forbidden)", authenticated)

    state = {}

    def transit_keys():
        created = c.transit.create_key("hv-aes")
        envelope_ok(created)
        expect(created["data"]["type"] == "aes256-gcm96", created)
        r = c.transit.read_key("hv-aes")
        expect(r["data"]["latest_version"] == 1 and list(r["data"]["keys"]) == ["1"], r["data"])
        c.transit.create_key("hv-ed", key_type="ed25519")
        c.transit.create_key("hv-ec", key_type="ecdsa-p256")
        lst = c.transit.list_keys()
        expect(lst["data"]["keys"] == ["hv-aes", "hv-ec", "hv-ed"], lst["data"])
    check("transit.create_key/read_key/list_keys (LIST verb)", transit_keys)

    def transit_crypt():
        e = c.transit.encrypt_data("hv-aes", b64("hvac plaintext"))
        ct = e["data"]["ciphertext"]
        expect(ct.startswith("vault:v1:"), ct)
        d = c.transit.decrypt_data("hv-aes", ct)
        expect(base64.b64decode(d["data"]["plaintext"]).decode() == "hvac plaintext", d)
        rot = c.transit.rotate_key("hv-aes")  # POST without a body
        expect(isinstance(rot, dict) or rot.status_code == 204, rot)
        rw = c.transit.rewrap_data("hv-aes", ct)
        expect(rw["data"]["ciphertext"].startswith("vault:v2:"), rw)
        batch = c.transit.encrypt_data("hv-aes", None, batch_input=[{"plaintext": b64("a")}, {"plaintext": b64("b")}])
        items = batch["data"]["batch_results"]
        expect(len(items) == 2 and all(i["ciphertext"].startswith("vault:v2:") for i in items), items)
        dk = c.transit.generate_data_key("hv-aes", "plaintext", bits=128)
        expect(len(base64.b64decode(dk["data"]["plaintext"])) == 16, dk)
        state["ct"] = ct
    check("transit.encrypt/decrypt/rotate/rewrap/batch/datakey", transit_crypt)

    def transit_hmac_sign():
        h = c.transit.generate_hmac("hv-aes", b64("m"))["data"]["hmac"]
        v = c.transit.verify_signed_data("hv-aes", b64("m"), hmac=h)
        expect(v["data"]["valid"] is True, v)
        s = c.transit.sign_data("hv-ed", b64("doc"))["data"]["signature"]
        expect(c.transit.verify_signed_data("hv-ed", b64("doc"), signature=s)["data"]["valid"] is True, "ed25519")
        expect(c.transit.verify_signed_data("hv-ed", b64("other"), signature=s)["data"]["valid"] is False, "ed25519 bad")
        # hvac sends "input": null next to batch_input.
        b = c.transit.sign_data("hv-ed", batch_input=[{"input": b64("x")}, {"input": b64("y")}])
        expect([r["signature"][:9] for r in b["data"]["batch_results"]] == ["vault:v1:"] * 2, b)
        j = c.transit.sign_data("hv-ec", b64("jws"), marshaling_algorithm="jws", hash_algorithm="sha2-256")
        sig = j["data"]["signature"]
        expect(c.transit.verify_signed_data("hv-ec", b64("jws"), signature=sig, marshaling_algorithm="jws")["data"]["valid"] is True, sig)
    check("transit.generate_hmac/sign_data (incl. batch)/verify_signed_data", transit_hmac_sign)

    def transit_misc():
        rnd = c.transit.generate_random_bytes(n_bytes=16, output_format="hex")
        expect(len(rnd["data"]["random_bytes"]) == 32, rnd)
        hs = c.transit.hash_data(b64("abc"), algorithm="sha2-256")
        expect(hs["data"]["sum"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hs)
        c.transit.update_key_configuration("hv-aes", exportable=True, allow_plaintext_backup=True, deletion_allowed=True)
        ex = c.transit.export_key("hv-aes", "encryption-key", version="latest")
        expect(list(ex["data"]["keys"]) == ["2"], ex["data"])
        bk = c.transit.backup_key("hv-aes")["data"]["backup"]
        c.transit.restore_key(bk, name="hv-restored")
        d = c.transit.decrypt_data("hv-restored", state["ct"])
        expect(base64.b64decode(d["data"]["plaintext"]).decode() == "hvac plaintext", d)
        c.transit.update_key_configuration("hv-aes", min_decryption_version=2, min_encryption_version=2)
        trimmed = c.transit.trim_key("hv-aes", 2)
        expect(trimmed["data"]["min_available_version"] == 2, trimmed)
        c.transit.delete_key("hv-aes")
        e = raises(InvalidPath, lambda: c.transit.read_key("hv-aes"))
        expect(e.errors == [] and e.json == {"errors": []}, e.json)
    check("transit.random/hash/config/export/backup/restore/trim/delete", transit_misc)

    def transit_errors():
        e = raises(InvalidRequest, lambda: c.transit.decrypt_data("hv-restored", "vault:v1:not-base64!"))
        expect(isinstance(e.errors, list) and len(e.errors) == 1 and e.errors[0], e.errors)
        raises(InvalidRequest, lambda: c.transit.delete_key("hv-ed"))  # deletion_allowed is false
        r = a.raw_request("put", "/v1/transit/keys", raise_exception=False)
        expect(r.status_code == 405 and isinstance(r.json().get("errors"), list), r.text)
    check("transit errors: 400 with one message, 404 {\"errors\":[]}, 405", transit_errors)

    def kv():
        c.kv.configure(max_versions=10, delete_version_after="0s")
        cfg = c.kv.read_configuration()
        expect(cfg["data"]["max_versions"] == 10, cfg)
        w = c.kv.create_or_update_secret("hv/app", {"user": "bob"})
        expect(w["data"]["version"] == 1, w)
        c.kv.patch("hv/app", {"pass": "pw"})
        r = c.kv.read_secret_version("hv/app")
        expect(r["data"]["data"] == {"user": "bob", "pass": "pw"} and r["data"]["metadata"]["version"] == 2, r)
        expect(c.kv.read_secret_version("hv/app", version=1)["data"]["data"] == {"user": "bob"}, "v1")
        raises(InvalidRequest, lambda: c.kv.create_or_update_secret("hv/app", {"x": "y"}, cas=1))
        lst = c.kv.list_secrets("")  # LIST /v1/secret/metadata (hvac strips the trailing slash)
        expect("hv/" in lst["data"]["keys"], lst)
        expect(c.kv.list_secrets("hv")["data"]["keys"] == ["app"], "list hv")
        c.kv.update_metadata("hv/app", max_versions=5, custom_metadata={"team": "ops"})
        md = c.kv.read_secret_metadata("hv/app")
        expect(md["data"]["max_versions"] == 5 and md["data"]["current_version"] == 2, md["data"])
        expect(md["data"]["custom_metadata"] == {"team": "ops"}, md["data"])
    check("kv_v2.configure/create_or_update/patch/read/list/metadata", kv)

    def kv_delete():
        c.kv.delete_latest_version_of_secret("hv/app")
        # hvac returns the 404 body of a soft-deleted version (it reads data.metadata.deletion_time).
        soft = c.kv.read_secret_version("hv/app")
        expect(soft["data"]["data"] is None and soft["data"]["metadata"]["deletion_time"] != "", soft)
        raises(InvalidPath, lambda: c.kv.read_secret_version("hv/app", raise_on_deleted_version=True))
        c.kv.undelete_secret_versions("hv/app", [2])
        expect(c.kv.read_secret_version("hv/app")["data"]["data"]["pass"] == "pw", "undelete")
        c.kv.destroy_secret_versions("hv/app", [1])
        md = c.kv.read_secret_metadata("hv/app")
        expect(md["data"]["versions"]["1"]["destroyed"] is True, md["data"]["versions"])
        c.kv.delete_secret_versions("hv/app", [2])
        c.kv.delete_metadata_and_all_versions("hv/app")
        raises(InvalidPath, lambda: c.kv.read_secret_metadata("hv/app"))
        raises(InvalidPath, lambda: c.kv.list_secrets("hv"))
    check("kv_v2 delete/undelete/destroy/metadata delete and 404 bodies", kv_delete)

    def generic():
        c.write("secret/data/hv/generic", data={"k": "v"})
        r = c.read("secret/data/hv/generic")
        expect(r["data"]["data"] == {"k": "v"}, r)
        expect(c.read("secret/data/hv/absent") is None, "missing read is None")
        lst = c.list("secret/metadata/hv")  # GET ?list=True
        expect(lst["data"]["keys"] == ["generic"], lst)
        expect(c.list("secret/metadata/nothing-here") is None, "empty list is None")
        c.delete("secret/metadata/hv/generic")
        expect(c.read("secret/data/hv/generic") is None, "deleted")
    check("Client.read/list(?list=True)/write/delete", generic)

    def mounts():
        c.sys.enable_secrets_engine("transit", path="hv-transit", description="hvac mount")
        m = c.sys.list_mounted_secrets_engines()
        expect(m["data"]["hv-transit/"]["type"] == "transit", m["data"].get("hv-transit/"))
        expect(m["hv-transit/"]["description"] == "hvac mount", "top-level copy")
        tune = c.sys.read_mount_configuration("hv-transit")
        expect(isinstance(tune["data"]["default_lease_ttl"], int), tune)
        c.sys.tune_mount_configuration("hv-transit", description="tuned")
        expect(c.sys.list_mounted_secrets_engines()["data"]["hv-transit/"]["description"] == "tuned", "tuned")
        c.sys.disable_secrets_engine("hv-transit")
        expect("hv-transit/" not in c.sys.list_mounted_secrets_engines()["data"], "unmounted")
        c.sys.enable_secrets_engine("kv", path="hv-kv", options={"version": "2"})
        expect(c.sys.retrieve_mount_option("hv-kv", "version") == "2", "kv version")
        KvV2(a, "hv-kv").create_or_update_secret("x", {"y": "z"})
        c.sys.disable_secrets_engine("hv-kv")
    check("sys mounts: enable (null fields)/list/tune/disable, kv version option", mounts)

    def test_mount_steps():
        # hvac tests/integration_tests/api/system_backend/test_mount.py, test_secret_backend_manipulation.
        expect("test/" not in c.sys.list_mounted_secrets_engines()["data"], "test/ absent")
        c.sys.enable_secrets_engine(backend_type="generic", path="test")
        expect("test/" in c.sys.list_mounted_secrets_engines()["data"], "test/ mounted")
        t = c.sys.read_mount_configuration(path="test")
        expect(t["data"]["max_lease_ttl"] == 2764800 and t["data"]["default_lease_ttl"] == 2764800, t["data"])
        c.sys.tune_mount_configuration(path="test", default_lease_ttl="3600s", max_lease_ttl="8600s")
        t = c.sys.read_mount_configuration(path="test")
        expect(t["data"]["max_lease_ttl"] == 8600 and t["data"]["default_lease_ttl"] == 3600, t["data"])
        c.sys.move_backend(from_path="test", to_path="foobar")
        m = c.sys.list_mounted_secrets_engines()["data"]
        expect("test/" not in m and "foobar/" in m, sorted(m))
        c.sys.disable_secrets_engine(path="foobar")
        expect("foobar/" not in c.sys.list_mounted_secrets_engines()["data"], "foobar/ unmounted")
        # test_get_secret_backend_tuning on a KV v1 mount.
        c.sys.enable_secrets_engine(backend_type="kv", path="kvv1_mount", options=dict(version=1))
        expect("default_lease_ttl" in c.sys.read_mount_configuration(path="kvv1_mount")["data"], "kv v1 tuning")
        c.sys.disable_secrets_engine(path="kvv1_mount")
    check("hvac test_mount: generic mount, tune TTLs, move_backend (sys/remount), kv v1 tuning", test_mount_steps)

    def test_auth_steps():
        # hvac tests/integration_tests/api/system_backend/test_auth.py (approle for github, which keyhold has not).
        path = "test-approle"
        expect(f"{path}/" not in c.sys.list_auth_methods()["data"], "absent")
        c.sys.enable_auth_method(method_type="approle", path=path)
        expect(f"{path}/" in c.sys.list_auth_methods()["data"], "enabled")
        r = c.sys.tune_auth_method(path=path, description="this is a test auth backend", max_lease_ttl=12345678)
        expect(r.status_code == 204, r.status_code)
        expect(c.sys.read_auth_method_tuning(path=path)["data"]["max_lease_ttl"] == 12345678, "tuned max")
        c.sys.disable_auth_method(path=path)
        expect(f"{path}/" not in c.sys.list_auth_methods()["data"], "disabled")
    check("hvac test_auth: enable, tune (max above the system max), read tuning, disable", test_auth_steps)

    def policies():
        doc = {"path": {"secret/data/hv-pol/*": {"capabilities": ["read", "create", "update"]}}}
        c.sys.create_or_update_policy("hv-legacy", doc)  # pretty-printed JSON policy
        expect("secret/data/hv-pol/*" in c.sys.read_policy("hv-legacy")["data"]["rules"], "rules")
        expect("hv-legacy" in c.sys.list_policies()["data"]["policies"], "listed")
        c.sys.create_or_update_acl_policy("hv-acl", 'path "transit/encrypt/hv-ed" { capabilities = ["update"] }')
        expect('transit/encrypt/hv-ed' in c.sys.read_acl_policy("hv-acl")["data"]["policy"], "acl policy")
        expect("hv-acl" in c.sys.list_acl_policies()["data"]["keys"], "acl listed")
        caps = c.sys.get_capabilities(["secret/data/x"])
        expect(caps["data"]["capabilities"] == ["root"], caps)
        state["policies"] = ["hv-legacy", "hv-acl"]
    check("sys policy (legacy + ACL, JSON and HCL)/capabilities-self", policies)

    def tokens():
        t = c.token_auth.create(policies=["hv-legacy"], ttl="1h", meta={"who": "hvac"})
        envelope_ok(t)
        auth = t["auth"]
        expect(auth["policies"] == ["default", "hv-legacy"] and auth["lease_duration"] == 3600, auth)
        expect(auth["renewable"] is True and auth["metadata"] == {"who": "hvac"}, auth)
        look = c.token_auth.lookup(auth["client_token"])
        expect(look["data"]["id"] == auth["client_token"] and look["data"]["accessor"] == auth["accessor"], look["data"])
        user = Client(addr, auth["client_token"])
        expect(user.is_authenticated() is True, "new token")
        user.kv.create_or_update_secret("hv-pol/mine", {"a": "b"})
        expect(user.kv.read_secret_version("hv-pol/mine")["data"]["data"] == {"a": "b"}, "policy read")
        raises(Forbidden, lambda: user.transit.list_keys())
        renewed = user.token_auth.renew_self()
        expect(renewed["auth"]["client_token"] == auth["client_token"], renewed)
        expect(user.token_auth.lookup_self()["data"]["policies"] == ["default", "hv-legacy"], "lookup_self")
        rv = user.token_auth.revoke_self()
        expect(rv.status_code == 204, rv)
        expect(user.is_authenticated() is False, "revoked token still authenticated")
    check("auth.token create/lookup/renew_self/revoke_self and policy enforcement", tokens)

    def cleanup_policies():
        c.sys.delete_policy("hv-legacy")
        c.sys.delete_acl_policy("hv-acl")
        raises(InvalidPath, lambda: c.sys.read_policy("hv-legacy"))
    check("sys policy delete", cleanup_policies)

    def strict_http():
        s = Client(addr, token, strict_http=True)  # LIST sent as GET ?list=true
        expect(s.transit.list_keys()["data"]["keys"] == ["hv-ec", "hv-ed", "hv-restored"], "strict list")
    check("strict_http adapter (GET ?list=true)", strict_http)

    def keep_alive():
        pm = a.session.get_adapter(addr).poolmanager
        opened = sum(pm.pools[k].num_connections for k in pm.pools.keys())
        expect(len(pm.pools.keys()) == 1 and opened == 1, f"the session opened {opened} connections")
    check("every call above reused one keep-alive connection", keep_alive)


def run_init(addr):
    c = Client(addr)
    out = {}

    # HEAD on an uninitialised server answers 501, which hvac turns into VaultNotInitialized.
    check("sys.read_health_status HEAD on an uninitialised server raises VaultNotInitialized",
          lambda: raises(VaultNotInitialized, lambda: c.sys.read_health_status()))

    def initialize():
        expect(c.sys.is_initialized() is False, "already initialised")
        r = c.sys.initialize()  # hvac's defaults: 5 shares, threshold 3, root_token_pgp_key null
        expect(isinstance(r["root_token"], str) and r["root_token"], r)
        expect(isinstance(r["keys"], list) and len(r["keys"]) >= 1, r)
        expect(isinstance(r["keys_base64"], list) and len(r["keys_base64"]) == len(r["keys"]), r)
        expect(c.sys.is_initialized() is True, "not initialised after initialize()")
        out.update(root_token=r["root_token"], keys=r["keys"])
    check("sys.initialize with hvac defaults", initialize)
    return out


def run_unseal(addr, keys, root):
    c = Client(addr, root)

    def sealed():
        expect(c.sys.is_sealed() is True, "not sealed")
        raises(VaultDown, lambda: c.transit.list_keys())
    check("sealed: is_sealed and 503 VaultDown", sealed)

    def unseal():
        r = c.sys.submit_unseal_keys(keys)
        expect(r["sealed"] is False and r["initialized"] is True, r)
        expect(c.is_authenticated() is True, "root after unseal")
    check("sys.submit_unseal_keys", unseal)


def main(argv):
    addr = argv[1]
    mode = argv[3] if len(argv) > 3 else "main"
    if mode == "main":
        run_main(addr, argv[2])
    elif mode == "init":
        out = run_init(addr)
        print("init-result " + json.dumps(out), flush=True)
    elif mode == "unseal":
        run_unseal(addr, json.loads(argv[4]), argv[2])
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(f"summary passed={RESULTS['passed']} failed={RESULTS['failed']}", flush=True)
    return 0 if RESULTS["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
