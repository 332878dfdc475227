// Signing in with a school's accounts, in a real browser: a Margin server of
// its own (MARGIN_E2E_BIN, on a fresh SQLite file) configured with the fake
// provider (fake-sso.ts), which signs its tokens with a real RSA key.
import { ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "./csp";
import { CLIENT_ID, CLIENT_SECRET, FakeSso } from "./fake-sso";
import { PASSWORD, startMargin } from "./helpers";

const MARGIN = "http://127.0.0.1:3103";
const fake = new FakeSso();
let server: ChildProcess | undefined;

test.beforeAll(async () => {
  await fake.start(3104);
  const dir = join(__dirname, "..", "..", "target", "e2e", "sso");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  server = await startMargin(3103, `sqlite://${join(dir, "margin.db")}`, {
    MARGIN_SSO_PROVIDERS: "example",
    MARGIN_SSO_EXAMPLE_ISSUER: fake.issuer,
    MARGIN_SSO_EXAMPLE_CLIENT_ID: CLIENT_ID,
    MARGIN_SSO_EXAMPLE_CLIENT_SECRET: CLIENT_SECRET,
    MARGIN_SSO_EXAMPLE_LABEL: "Example SSO",
    // The provider vouches for its organisation's people (Google's hosted domain).
    MARGIN_SSO_EXAMPLE_TENANT_CLAIM: "hd",
  });
});

test.afterAll(async () => {
  server?.kill();
  await fake.stop();
});

test("a school links its accounts, and its teachers sign in with them", async ({ page, browser }) => {
  // The school's admin has a password account and links their school account.
  await page.goto(`${MARGIN}/signup`);
  await page.getByLabel("Email").fill("head@lincoln.example.org");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page.getByRole("heading", { name: "Your lessons" })).toBeVisible();
  await page.getByRole("link", { name: "head@lincoln.example.org" }).click();
  await expect(page.getByRole("heading", { name: "Account" })).toBeVisible();
  fake.person = { sub: "head-1", email: "head@lincoln.example.org", hd: "lincoln.example.org" };
  await page.getByRole("link", { name: "Link Example SSO" }).click();
  await expect(page.getByText("Linked. You can sign in with it from now on.")).toBeVisible();
  await expect(page.getByText("Example SSO (head@lincoln.example.org)")).toBeVisible();

  // Then the school, to the organisation the provider vouched for.
  await page.goto(`${MARGIN}/school`);
  await expect(page.getByText("No school accounts are linked yet.")).toBeVisible();
  await page.getByRole("button", { name: "Link to this school" }).click();
  await expect(page.getByText("Linked. New people signing in with that account wait here for you to let them in.")).toBeVisible();

  // A teacher of the school signs in with it, with no password: first they
  // wait for the admin, on a page that says so.
  const context = await browser.newContext();
  const teacher = await context.newPage();
  fake.person = { sub: "ada-1", email: "ada@lincoln.example.org", hd: "lincoln.example.org" };
  await teacher.goto(`${MARGIN}/signin`);
  await teacher.getByRole("link", { name: "Sign in with Example SSO" }).click();
  await expect(teacher.getByRole("alert")).toContainText("has been asked to let you in as a teacher");
  await expect(teacher).toHaveURL(/\/refused\/sso-waiting$/);
  // The admin lets them in, by keyboard.
  await page.reload();
  await expect(page.getByRole("heading", { name: "Waiting for you" })).toBeVisible();
  await page.getByRole("button", { name: "Let ada@lincoln.example.org in as a teacher" }).focus();
  await page.keyboard.press("Enter");
  await expect(page.getByText("Let in. They can sign in as a teacher now.")).toBeVisible();
  // Now they land in the school.
  await teacher.goto(`${MARGIN}/signin`);
  await teacher.getByRole("link", { name: "Sign in with Example SSO" }).click();
  await expect(teacher.getByRole("heading", { name: "Your lessons" })).toBeVisible();
  await expect(teacher.getByRole("link", { name: "ada@lincoln.example.org" })).toBeVisible();
  await page.reload();
  await expect(page.locator(".members")).toContainText("ada@lincoln.example.org");

  // A token the provider never signed is refused with a sentence; nobody is signed in.
  await teacher.getByRole("button", { name: "Sign out" }).click();
  fake.strangerNext = true;
  await teacher.getByRole("link", { name: "Sign in with Example SSO" }).click();
  await expect(teacher.getByRole("alert")).toHaveText(/Signing in with your school account did not work/);
  await expect(teacher).toHaveURL(/\/refused\/sso$/);

  // Someone the school never linked lands nowhere, and is told what to do.
  fake.person = { sub: "eve-1", email: "eve@elsewhere.example.org" };
  await teacher.goto(`${MARGIN}/signin`);
  await teacher.getByRole("link", { name: "Sign in with Example SSO" }).click();
  await expect(teacher.getByRole("alert")).toContainText("Ask your school's Margin admin to link it");
  await context.close();
});
