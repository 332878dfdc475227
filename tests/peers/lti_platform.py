"""An LMS for the tests built on a platform library no one here wrote:
`lti1p3platform` (PyPI), with a thin HTTP harness around it. The library
makes the launches (its OIDC login initiation, its checks of Margin's
authentication request, its signed ID token), checks Margin's client
assertions against the tool keys the platform's admin entered, signs and
checks its own access tokens, and serves the roster (Names and Role
Provisioning, paged with its own unquoted `Link: <...>; rel=next`) and the
scores (Assignment and Grade Services). The harness only carries HTTP to it
and back, as its Django and FastAPI adapters do.

    python lti_platform.py PORT CLIENT_ID DEPLOYMENT PRIVATE_KEY_PEM

The test steers it: POST /members (the course's roster), POST /trust (the
tool's keys, as the platform's admin enters the tool's JWKS), GET /start
(a launch: the login initiation to send Margin), GET /scores (received),
and posts a Deep Linking answer to /deep-link-return, which the library checks.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlparse

from cryptography.hazmat.primitives import serialization
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.membership import Context
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import RequestBase
from lti1p3platform.response import generate_next_link
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService, UpdateScoreStatus

PORT, CLIENT_ID, DEPLOYMENT, KEY_FILE = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
ISSUER = f"http://127.0.0.1:{PORT}"
TOOL = "http://127.0.0.1:3000"

with open(KEY_FILE, "rb") as f:
    PRIVATE = f.read()
PUBLIC = serialization.load_pem_private_key(PRIVATE, password=None).public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
)

REGISTRATION = (
    Registration()
    .set_iss(ISSUER)
    .set_client_id(CLIENT_ID)
    .set_deployment_id(DEPLOYMENT)
    .set_oidc_login_url(f"{TOOL}/lti/login")
    .set_launch_url(f"{TOOL}/lti/launch")
    .set_deeplink_launch_url(f"{TOOL}/lti/launch")
    .set_platform_public_key(PUBLIC.decode())
    .set_platform_private_key(PRIVATE.decode())
    .set_tool_key_set({"keys": []})
)

LOCK = threading.Lock()
STATE = {"members": [], "scores": [], "launch": None, "token_refusals": [], "content_items": []}


class Platform(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs):
        pass

    def get_registration_by_params(self, **kwargs):
        return REGISTRATION


def platform():
    p = Platform()
    p.get_registration()
    return p


class Req(RequestBase):
    def __init__(self, method, path, query, form, headers, body):
        self.request = {
            "method": method,
            "form_data": form,
            "get_data": query,
            "headers": headers,
            "content_type": headers.get("Content-Type"),
            "path": path,
            "json": body,
        }


class Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs):
        self._lti_message_hint = kwargs.get("hint")

    def get_redirect(self, url):
        return url


class Launch(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data, **kwargs):
        return launch_data


class Roster(NamesRoleProvisioningService):
    def get_member_data_page(self, page=1, limit=None, role=None, since=None, **kwargs):
        members = STATE["members"]
        if limit is None:
            return {"content": members, "has_next": False}
        start = (page - 1) * limit
        return {"content": members[start : start + limit], "has_next": start + limit < len(members)}

    def get_context_by_id(self):
        return Context(id="course-1", label="SCI8", title="Year 8 Science")


class Grades(AssignmentsGradesService):
    def find_lineitems(self, page=1, limit=None):
        return None

    def update_score(self, line_item_id, score):
        STATE["scores"].append({"line_item": line_item_id, **score})
        return UpdateScoreStatus.SUCCESS

    def get_results(self, line_item_id, page=1, limit=None, user_id=None):
        return {"content": [], "has_next": False}

    # Line items are the platform's here; Margin only posts scores.
    def find_lineitem(self, line_item_id):
        return None

    def create_lineitem(self, lineitem):
        raise NotImplementedError

    def update_lineitem(self, line_item_id, lineitem):
        raise NotImplementedError

    def delete_lineitem(self, line_item_id):
        raise NotImplementedError


def numbers(query):
    """The library's paging adds 1 to `page`: numbers as numbers."""
    return {k: int(v) if v.isdigit() else v for k, v in query.items()}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, code, value, content_type="application/json", headers=None):
        body = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def parts(self):
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        form = dict(parse_qsl(raw.decode())) if "form-urlencoded" in (self.headers.get("Content-Type") or "") else {}
        try:
            body = json.loads(raw) if raw and "json" in (self.headers.get("Content-Type") or "") else None
        except ValueError:
            body = None
        return url.path, dict(parse_qsl(url.query)), form, body

    def request_for(self, method):
        path, query, form, body = self.parts()
        # The headers as the frameworks give them: names in any case.
        return path, Req(method, path, numbers(query), form, self.headers, body)

    def do_GET(self):
        path, req = self.request_for("GET")
        q = req.get_data
        with LOCK:
            if path == "/jwks":
                return self.answer(200, platform().get_jwks())
            if path == "/start":
                STATE["launch"] = q
                login = Login(req, platform())
                login.set_lti_message_hint(hint=f"link-{q.get('user')}")
                return self.answer(200, {"url": login.initiate_login(str(q["user"]))})
            if path == "/authorize":
                spec = STATE["launch"] or {}
                launch = Launch(req, platform())
                launch.set_user_data(str(spec["user"]), [spec["role"]], full_name="Test Person", email_address=spec.get("email"))
                launch.set_resource_link_claim("link-1", title="Margin")
                launch.set_launch_context_claim("course-1", context_title="Year 8 Science", context_label="SCI8")
                if spec.get("lesson"):
                    launch.set_custom_parameters_claim({"lesson": spec["lesson"]})
                if spec.get("roster"):
                    launch.set_nrps(f"{ISSUER}/memberships/course-1?limit=2")
                if spec.get("deep_link"):
                    launch.set_dl(f"{ISSUER}/deep-link-return", accept_types={"ltiResourceLink"})
                if spec.get("lineitem"):
                    launch.set_ags(f"{ISSUER}/lineitems", f"{ISSUER}/lineitems/1/lineitem")
                try:
                    return self.answer(200, launch.lti_launch())
                except Exception as e:
                    return self.answer(400, {"error": f"{type(e).__name__}: {e}"})
            if path.startswith("/memberships/"):
                try:
                    resp = Roster(req, platform(), f"{ISSUER}/memberships/course-1").handle_get_members()
                except Exception as e:
                    print(f"roster refused: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
                    return self.answer(getattr(e, "status_code", 401), {"error": str(e)})
                headers = {"Link": generate_next_link(resp.result["next"])} if resp.result.get("next") else {}
                return self.answer(resp.code, resp.result, resp.media_type, headers)
            if path == "/scores":
                return self.answer(200, STATE["scores"])
            if path == "/token-refusals":
                return self.answer(200, STATE["token_refusals"])
        self.answer(404, {"error": "not found"})

    def do_POST(self):
        path, req = self.request_for("POST")
        with LOCK:
            if path == "/token":
                try:
                    return self.answer(200, platform().get_access_token(req.form_data))
                except Exception as e:
                    STATE["token_refusals"].append(f"{type(e).__name__}: {e}")
                    return self.answer(400, {"error": "invalid_client"})
            if path == "/lineitems/1/lineitem/scores":
                try:
                    resp = Grades(req, platform(), f"{ISSUER}/lineitems", f"{ISSUER}/lineitems/1/lineitem").handle_update_score("1")
                except Exception as e:
                    print(f"score refused: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
                    return self.answer(getattr(e, "status_code", 401), {"error": str(e)})
                return self.answer(resp.code, {"status": resp.message})
            if path == "/deep-link-return":
                try:
                    STATE["content_items"] = platform().validate_deeplinking_resp(req.form_data)
                except Exception as e:
                    return self.answer(400, {"error": f"{type(e).__name__}: {e}"})
                return self.answer(200, STATE["content_items"])
            if path == "/members":
                STATE["members"] = req.json
                return self.answer(200, {})
            if path == "/trust":
                REGISTRATION.set_tool_key_set(req.json)
                return self.answer(200, {})
        self.answer(404, {"error": "not found"})


server = ThreadingHTTPServer(("127.0.0.1", int(PORT)), Handler)
print(f"lti1p3platform ready at {ISSUER}", flush=True)
server.serve_forever()
