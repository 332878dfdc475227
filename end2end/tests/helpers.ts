import { ChildProcess, spawn } from "node:child_process";
import { Browser, BrowserContext, expect, Page } from "@playwright/test";

/** A fresh address per call, so tests never collide with accounts from another test. */
export function uniqueEmail(name: string): string {
  return `${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@school.test`;
}

export const PASSWORD = "correct horse battery";

/** Waits until the WASM bundle has taken over the page (set by `App`). */
export async function hydrated(page: Page): Promise<void> {
  await page.locator("body[data-hydrated=true]").waitFor();
}

/** The lesson editor, once its code has loaded and it has taken the
 *  place of the server's drawing of the lesson. */
export const editor = (page: Page) => page.locator(".document-pane .editor");

/** The editable text of block `id` in the editor. */
export const editable = (page: Page, id: string) => editor(page).locator(`[data-id="${id}"] .block-text`);

/**
 * Signs up a new teacher. Unless `reactions` is asked for, their automatic
 * replies are switched off (as a teacher can, on any lesson's Material), so
 * that the assistant's greeting of each new lesson does not take turns in
 * tests about something else; reactions.spec.ts has those.
 */
export async function signUp(page: Page, email: string, opts: { reactions?: boolean } = {}): Promise<void> {
  await page.goto("/signup");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page.getByRole("heading", { name: "Your lessons" })).toBeVisible();
  if (!opts.reactions) await reactions(page, false);
}

/** Switches the signed-in teacher's automatic replies on or off. */
export async function reactions(page: Page, on: boolean): Promise<void> {
  const origin = new URL(page.url()).origin;
  const r = await page.request.patch("/api/account/reactions", { data: { reactToEvents: on }, headers: { Origin: origin } });
  expect(r.ok(), await r.text()).toBe(true);
}

export async function signIn(page: Page, email: string): Promise<void> {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/**
 * A colleague of the school `admin`'s page runs: the admin makes an
 * invitation link on the School page and the colleague signs up through it,
 * in a browser context of their own. Their page and email.
 */
export async function colleagueOf(admin: Page, browser: Browser, name: string): Promise<{ colleague: Page; email: string; context: BrowserContext }> {
  await admin.goto("/school");
  await admin.getByRole("button", { name: "Invite a teacher" }).click();
  const link = await admin.getByLabel("Invitation link").inputValue();
  const context = await browser.newContext();
  const colleague = await context.newPage();
  const email = uniqueEmail(name);
  await colleague.goto(link);
  await colleague.getByLabel("Email").fill(email);
  await colleague.getByLabel("Password").fill(PASSWORD);
  await colleague.getByRole("button", { name: "Sign up" }).click();
  await expect(colleague.getByRole("heading", { name: "Your lessons" })).toBeVisible();
  await reactions(colleague, false);
  return { colleague, email, context };
}

/** Creates a lesson from the lessons page and returns its URL. */
export async function createLesson(page: Page, title: string): Promise<string> {
  await page.goto("/");
  // "New lesson" is a disclosure drawn by the server: no code to wait for.
  await page.getByRole("button", { name: "New lesson" }).click();
  await page.getByLabel("Title").fill(title);
  await page.getByRole("button", { name: "Create lesson" }).click();
  await expect(page).toHaveURL(/\/lessons\/[0-9a-f]{32}$/);
  await expect(page.getByRole("heading", { name: title, level: 1 })).toBeVisible();
  return page.url();
}

/** A new teacher with a new lesson open and the sidebar's welcome showing. */
export async function openLesson(page: Page, name: string): Promise<void> {
  await signUp(page, uniqueEmail(name));
  await createLesson(page, "Verbs");
  await hydrated(page);
  await expect(page.getByText("Hello! Ask me about this lesson")).toBeVisible();
}

/** Types a message in the sidebar and sends it with Enter. */
export async function send(page: Page, text: string): Promise<void> {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

export const replies = (page: Page) => page.locator(".msg.assistant");
export const lastReply = (page: Page) => replies(page).last();

/** The last reply's parts in the order shown: its pieces of text and the folds of its groups of steps. */
export const partsInOrder = (page: Page): Promise<string[]> =>
  lastReply(page).evaluate((el) =>
    Array.from(el.querySelectorAll(".reply, .steps-toggle")).map((e) =>
      e.classList.contains("reply") ? `text: ${(e.textContent ?? "").trim()}` : `steps: ${e.textContent}`,
    ),
  );

/**
 * Another Margin server, the built binary (MARGIN_E2E_BIN, set by `make e2e`)
 * on `port` with `database` and any `env` of the test's own; resolves once it
 * answers `/healthz`. The test kills it.
 */
export async function startMargin(port: number, database: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const bin = process.env.MARGIN_E2E_BIN;
  expect(bin, "make e2e sets MARGIN_E2E_BIN").toBeTruthy();
  const child = spawn(bin!, [], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: database,
      LEPTOS_SITE_ADDR: `127.0.0.1:${port}`,
      LEPTOS_SITE_ROOT: "target/site",
      LEPTOS_OUTPUT_NAME: "margin",
      // The build names its files after their content (`hash.txt`, beside the binary).
      LEPTOS_HASH_FILES: "true",
      AI_PROVIDER: "demo",
      RUST_LOG: "warn",
      // The fake LMS and provider run on this machine: addresses Margin
      // otherwise refuses to fetch from.
      MARGIN_OUTBOUND_ALLOW: "127.0.0.0/8,::1",
      ...env,
    },
    cwd: "..",
    stdio: "inherit",
  });
  await expect.poll(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.status, { timeout: 30_000 }).toBe(200);
  return child;
}
