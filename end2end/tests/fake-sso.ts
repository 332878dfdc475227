// A school-account provider for the browser tests, as the cargo tests have
// one (tests/all/common/fake_sso.rs): OpenID Connect discovery, its keys, an
// authorization endpoint that signs the chosen person in at once, and a
// token endpoint that checks the client's secret, the code (one use), the
// redirect address and the PKCE verifier, then hands out an ID token signed
// with a real RSA key (tests/all/common/keys/provider.pem). Not a spec.
import { createHash, createPrivateKey, createPublicKey, createSign, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, IncomingMessage, Server } from "node:http";
import { AddressInfo } from "node:net";
import { join } from "node:path";

export const CLIENT_ID = "margin-e2e";
export const CLIENT_SECRET = "e2e-secret-not-for-anything";

export type Person = { sub: string; email: string; emailVerified?: boolean; hd?: string };

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

function key(name: string) {
  return createPrivateKey(readFileSync(join(__dirname, "..", "..", "tests", "all", "common", "keys", name), "utf8"));
}

async function body(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

export class FakeSso {
  issuer = "";
  person: Person = { sub: "nobody", email: "nobody@example.org" };
  /** Sign the next token with a key the provider never published. */
  strangerNext = false;
  private server?: Server;
  private codes = new Map<string, { nonce: string; challenge: string; redirect: string; person: Person }>();
  private key = key("provider.pem");
  private stranger = key("stranger.pem");

  async start(port: number): Promise<void> {
    this.server = createServer(async (req, res) => {
      const url = new URL(req.url ?? "/", `http://127.0.0.1:${port}`);
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      if (url.pathname === "/.well-known/openid-configuration") {
        return json(200, {
          issuer: this.issuer,
          authorization_endpoint: `${this.issuer}/authorize`,
          token_endpoint: `${this.issuer}/token`,
          jwks_uri: `${this.issuer}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          token_endpoint_auth_methods_supported: ["client_secret_basic"],
          code_challenge_methods_supported: ["S256"],
        });
      }
      if (url.pathname === "/jwks") {
        const jwk = createPublicKey(this.key).export({ format: "jwk" });
        return json(200, { keys: [{ kty: "RSA", use: "sig", alg: "RS256", kid: "provider-1", n: jwk.n, e: jwk.e }] });
      }
      if (url.pathname === "/authorize") {
        const q = url.searchParams;
        if (q.get("client_id") !== CLIENT_ID || q.get("code_challenge_method") !== "S256") return json(400, { error: "invalid_request" });
        const code = randomBytes(12).toString("hex");
        this.codes.set(code, { nonce: q.get("nonce") ?? "", challenge: q.get("code_challenge") ?? "", redirect: q.get("redirect_uri") ?? "", person: this.person });
        const back = new URL(q.get("redirect_uri") ?? "");
        back.searchParams.set("code", code);
        back.searchParams.set("state", q.get("state") ?? "");
        res.writeHead(303, { location: back.toString() });
        return res.end();
      }
      if (url.pathname === "/token" && req.method === "POST") {
        const form = new URLSearchParams(await body(req));
        const basic = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString();
        const grant = this.codes.get(form.get("code") ?? "");
        this.codes.delete(form.get("code") ?? "");
        const verifier = b64url(createHash("sha256").update(form.get("code_verifier") ?? "").digest());
        if (basic !== `${CLIENT_ID}:${CLIENT_SECRET}` || !grant || grant.redirect !== form.get("redirect_uri") || verifier !== grant.challenge) {
          return json(400, { error: "invalid_grant" });
        }
        const now = Math.floor(Date.now() / 1000);
        const claims = {
          iss: this.issuer, aud: CLIENT_ID, sub: grant.person.sub, iat: now, exp: now + 600, nonce: grant.nonce,
          email: grant.person.email, email_verified: grant.person.emailVerified ?? true,
          ...(grant.person.hd ? { hd: grant.person.hd } : {}),
        };
        const input = `${b64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid: "provider-1" }))}.${b64url(JSON.stringify(claims))}`;
        const signer = createSign("RSA-SHA256").update(input);
        const signature = signer.sign(this.strangerNext ? this.stranger : this.key);
        this.strangerNext = false;
        return json(200, { access_token: randomBytes(12).toString("hex"), token_type: "Bearer", expires_in: 600, id_token: `${input}.${b64url(signature)}` });
      }
      json(404, { error: "not_found" });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
