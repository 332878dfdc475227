// Signing in with a school account against a provider no one here wrote:
// `oidc-provider` (npm, OpenID Certified) at its defaults (peers/
// oidc-provider.mjs), which gives the email only at UserInfo, and signs
// people in through its own login and consent pages. A Margin server of its
// own, on a fresh SQLite file.
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, Page, test } from "./csp";
import { PASSWORD, startMargin } from "./helpers";

const MARGIN = "http://127.0.0.1:3107";
const PROVIDER = "http://127.0.0.1:3108";
const CLIENT_ID = "margin-peer";
const CLIENT_SECRET = "a-secret-only-these-tests-know";
const DB = join(__dirname, "..", "..", "target", "e2e", "oidc-peer", "margin.db");
let server: ChildProcess | undefined;
let provider: ChildProcess | undefined;

test.beforeAll(async () => {
  provider = spawn(process.execPath, [join(__dirname, "..", "peers", "oidc-provider.mjs"), "3108", `${MARGIN}/auth/sso/school/callback`, CLIENT_ID, CLIENT_SECRET], { stdio: "inherit" });
  await expect.poll(async () => (await fetch(`${PROVIDER}/.well-known/openid-configuration`).catch(() => null))?.status, { timeout: 30_000 }).toBe(200);
  rmSync(join(DB, ".."), { recursive: true, force: true });
  mkdirSync(join(DB, ".."), { recursive: true });
  server = await startMargin(3107, `sqlite://${DB}`, {
    MARGIN_SSO_PROVIDERS: "school",
    MARGIN_SSO_SCHOOL_ISSUER: PROVIDER,
    MARGIN_SSO_SCHOOL_CLIENT_ID: CLIENT_ID,
    MARGIN_SSO_SCHOOL_CLIENT_SECRET: CLIENT_SECRET,
    MARGIN_SSO_SCHOOL_LABEL: "School ID",
  });
});

test.afterAll(async () => {
  server?.kill();
  provider?.kill();
});

/** oidc-provider's own pages: sign in as `login`, then agree to share. */
async function atTheProvider(page: Page, login: string) {
  await expect(page).toHaveURL(new RegExp(`^${PROVIDER}/interaction/`));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("anything");
  await page.locator('button[type="submit"]').click();
  await expect(page).toHaveURL(new RegExp(`^${PROVIDER}/interaction/`));
  await page.locator('button[type="submit"]').click();
}

test("teachers sign in through a certified provider that gives the email only at UserInfo", async ({ page, browser }) => {
  // The school's admin has a password account and links their school account:
  // the address Margin shows came from UserInfo (the ID token has none).
  await page.goto(`${MARGIN}/signup`);
  await page.getByLabel("Email").fill("head@lincoln.example.org");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page.getByRole("heading", { name: "Your lessons" })).toBeVisible();
  await page.goto(`${MARGIN}/account`);
  await page.getByRole("link", { name: "Link School ID" }).click();
  await atTheProvider(page, "head");
  await expect(page.getByText("Linked. You can sign in with it from now on.")).toBeVisible();
  await expect(page.getByText("School ID (head@lincoln.example.org)")).toBeVisible();

  // The operator links the school's domain (a provider without an
  // organisation claim proves none).
  execFileSync(process.env.MARGIN_E2E_BIN!, ["sso", "link", "--school", "My school", "school", "domain", "lincoln.example.org"], {
    env: { PATH: process.env.PATH, DATABASE_URL: `sqlite://${DB}` },
  });

  // A teacher signs in: first waiting, then let in by the admin, then in.
  const context = await browser.newContext();
  const teacher = await context.newPage();
  await teacher.goto(`${MARGIN}/signin`);
  await teacher.getByRole("link", { name: "Sign in with School ID" }).click();
  await atTheProvider(teacher, "ada");
  await expect(teacher).toHaveURL(/\/refused\/sso-waiting$/);
  await page.goto(`${MARGIN}/school`);
  await page.getByRole("button", { name: "Let ada@lincoln.example.org in as a teacher" }).click();
  await expect(page.getByText("Let in. They can sign in as a teacher now.")).toBeVisible();
  await teacher.goto(`${MARGIN}/signin`);
  await teacher.getByRole("link", { name: "Sign in with School ID" }).click();
  // The provider remembers her: straight back to Margin, signed in.
  await expect(teacher.getByRole("heading", { name: "Your lessons" })).toBeVisible();
  await expect(teacher.getByRole("link", { name: "ada@lincoln.example.org" })).toBeVisible();
  await context.close();
});
