// An LMS platform for the browser tests, as the cargo tests have one
// (tests/all/common/fake_lms.rs): its keys, an authorization endpoint that
// posts a signed launch back to Margin (the real RSA key of
// tests/all/common/keys/provider.pem), a token endpoint for client assertions,
// and a line item that records the scores it receives. Not a spec.
import { createPrivateKey, createPublicKey, createSign, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, IncomingMessage, Server } from "node:http";
import { join } from "node:path";

export const LMS_CLIENT_ID = "margin-e2e-lms";
export const DEPLOYMENT = "deployment-e2e";
export const INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor";
export const LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner";
const CLAIM = "https://purl.imsglobal.org/spec/lti/claim/";

export type Launcher = { sub: string; email: string; role: string; lesson?: string; lineItem?: boolean };

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");
const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

async function body(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

export class FakeLms {
  issuer = "";
  launcher: Launcher = { sub: "nobody", email: "nobody@lms.example", role: LEARNER };
  scores: any[] = [];
  private server?: Server;
  private key = createPrivateKey(readFileSync(join(__dirname, "..", "..", "tests", "all", "common", "keys", "provider.pem"), "utf8"));

  /** What a school's admin registers for this platform. */
  registration() {
    return {
      name: "Fake LMS", issuer: this.issuer, clientId: LMS_CLIENT_ID, deployments: DEPLOYMENT,
      loginUrl: `${this.issuer}/authorize`, tokenUrl: `${this.issuer}/token`, jwksUrl: `${this.issuer}/jwks`,
    };
  }

  /** The platform's login initiation, as its course page's link would send it. */
  launchUrl(margin: string, launcher: Launcher): string {
    this.launcher = launcher;
    const q = new URLSearchParams({ iss: this.issuer, login_hint: launcher.sub, target_link_uri: `${margin}/lti/launch`, client_id: LMS_CLIENT_ID, lti_deployment_id: DEPLOYMENT });
    return `${margin}/lti/login?${q}`;
  }

  async start(port: number): Promise<void> {
    this.issuer = `http://127.0.0.1:${port}`;
    this.server = createServer(async (req, res) => {
      const url = new URL(req.url ?? "/", this.issuer);
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      if (url.pathname === "/jwks") {
        const jwk = createPublicKey(this.key).export({ format: "jwk" });
        return json(200, { keys: [{ kty: "RSA", use: "sig", alg: "RS256", kid: "provider-1", n: jwk.n, e: jwk.e }] });
      }
      if (url.pathname === "/authorize") {
        const q = url.searchParams;
        const l = this.launcher;
        if (q.get("client_id") !== LMS_CLIENT_ID || q.get("login_hint") !== l.sub || q.get("response_mode") !== "form_post") return json(400, { error: "invalid_request" });
        const now = Math.floor(Date.now() / 1000);
        const claims: Record<string, unknown> = {
          iss: this.issuer, aud: LMS_CLIENT_ID, sub: l.sub, iat: now, exp: now + 300, nonce: q.get("nonce"), email: l.email,
          [`${CLAIM}message_type`]: "LtiResourceLinkRequest",
          [`${CLAIM}version`]: "1.3.0",
          [`${CLAIM}deployment_id`]: DEPLOYMENT,
          [`${CLAIM}target_link_uri`]: q.get("redirect_uri"),
          [`${CLAIM}resource_link`]: { id: "link-1" },
          [`${CLAIM}roles`]: [l.role],
          [`${CLAIM}context`]: { id: "course-1", title: "Year 8 Science", label: "SCI8" },
          [`${CLAIM}custom`]: l.lesson ? { lesson: l.lesson } : {},
        };
        if (l.lineItem) {
          claims["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"] = {
            scope: ["https://purl.imsglobal.org/spec/lti-ags/scope/score"], lineitem: `${this.issuer}/lineitems/1/lineitem`,
          };
        }
        const input = `${b64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid: "provider-1" }))}.${b64url(JSON.stringify(claims))}`;
        const token = `${input}.${b64url(createSign("RSA-SHA256").update(input).sign(this.key))}`;
        // What a platform sends: a page that posts the launch to the tool at once.
        res.writeHead(200, { "content-type": "text/html" });
        return res.end(`<!doctype html><title>Fake LMS</title><body onload="document.forms[0].submit()"><form method="post" action="${escape(q.get("redirect_uri") ?? "")}">`
          + `<input type="hidden" name="id_token" value="${escape(token)}"><input type="hidden" name="state" value="${escape(q.get("state") ?? "")}"></form></body>`);
      }
      if (url.pathname === "/token" && req.method === "POST") {
        const form = new URLSearchParams(await body(req));
        if (form.get("grant_type") !== "client_credentials" || !form.get("client_assertion")) return json(400, { error: "invalid_request" });
        return json(200, { access_token: randomBytes(8).toString("hex"), token_type: "Bearer", expires_in: 3600 });
      }
      if (url.pathname === "/lineitems/1/lineitem/scores" && req.method === "POST") {
        this.scores.push(JSON.parse(await body(req)));
        res.writeHead(200);
        return res.end();
      }
      json(404, { error: "not_found" });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
