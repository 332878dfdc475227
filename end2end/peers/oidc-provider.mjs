// A real OpenID Connect provider for the tests: `oidc-provider` (npm;
// OpenID Certified), run at its defaults but for what any deployment must
// say: its one client (Margin), the people it knows, and that the standard
// `email` scope releases `email` and `email_verified`. At its defaults it
// keeps those out of the ID token and gives them at UserInfo, and signs its
// people in through its own development login and consent pages.
//
//   node peers/oidc-provider.mjs PORT REDIRECT_URI CLIENT_ID CLIENT_SECRET
import Provider from "oidc-provider";

const [port, redirect, clientId, clientSecret] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirect], grant_types: ["authorization_code"], response_types: ["code"] }],
  claims: { openid: ["sub"], email: ["email", "email_verified"] },
  // Whoever signs in on its login page, as `name`, is name@lincoln.example.org.
  async findAccount(_ctx, id) {
    return { accountId: id, async claims() { return { sub: id, email: `${id}@lincoln.example.org`, email_verified: true }; } };
  },
});
provider.listen(Number(port), "127.0.0.1", () => console.log(`oidc-provider ready at ${issuer}`));
