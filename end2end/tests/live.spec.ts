import { execFileSync, ChildProcess } from "node:child_process";
import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { createLesson, hydrated, lastReply, PASSWORD, send, signUp, startMargin, uniqueEmail } from "./helpers";

const version = (words: string) => `<lesson>
  <h1>Verbs</h1>
  <p>${words}</p>
</lesson>`;

async function openTab(page: Page, name: string) {
  await page.getByRole("tab", { name }).click();
  await expect(page.getByRole("tab", { name })).toHaveAttribute("aria-selected", "true");
}

async function saveXml(page: Page, xml: string, expected: string) {
  await openTab(page, "XML");
  await page.getByLabel("Lesson XML").fill(xml);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status")).toHaveText(expected);
}

test("a version saved in another tab shows at once, and waits for the teacher while they have unsaved XML", async ({ page, context }) => {
  await signUp(page, uniqueEmail("live"));
  const url = await createLesson(page, "Verbs");
  await hydrated(page);
  const other = await context.newPage();
  await other.goto(url);
  await hydrated(other);

  await saveXml(other, version("Saved in the other tab."), "Saved as version 2.");
  await expect(page.locator(".document-pane").getByText("Saved in the other tab.")).toBeVisible();

  // Unsaved XML here: the newer version is offered, never put over it.
  await openTab(page, "XML");
  const editor = page.getByLabel("Lesson XML");
  await editor.fill(version("My unsaved words."));
  await saveXml(other, version("A third version."), "Saved as version 3.");
  await expect(page.getByText("a newer version was saved")).toBeVisible();
  await expect(editor).toHaveValue(/My unsaved words\./);
  await openTab(page, "Lesson");
  await expect(page.locator(".document-pane").getByText("A third version.")).toBeVisible();
  await openTab(page, "XML");
  await expect(editor).toHaveValue(/My unsaved words\./);
  await page.getByRole("button", { name: "Load it (drops your changes)" }).click();
  await expect(editor).toHaveValue(/A third version\./);
  await expect(page.getByText("a newer version was saved")).toHaveCount(0);
});

test("a reply started in another tab is followed live, and a chat made there is listed", async ({ page, context }) => {
  await signUp(page, uniqueEmail("live-chat"));
  const url = await createLesson(page, "Verbs");
  await hydrated(page);
  await expect(page.getByText("Hello! Ask me about this lesson")).toBeVisible();
  const other = await context.newPage();
  await other.goto(url);
  await hydrated(other);
  await expect(other.getByText("Hello! Ask me about this lesson")).toBeVisible();

  await send(other, "What types of exercises can you create?");
  await expect(lastReply(other)).toContainText("True or false");
  await expect(lastReply(page)).toContainText("True or false");
  await expect(page.locator(".msg.user").last()).toContainText("What types of exercises can you create?");

  await other.getByRole("button", { name: "New chat" }).click();
  await expect(page.getByRole("combobox", { name: "Chat" }).locator("option")).toHaveCount(2);
});

// Two real servers on one PostgreSQL database (MARGIN_E2E_POSTGRES_URL and
// MARGIN_E2E_BIN, set by `make e2e`): a version saved through one appears on
// a page served by the other.
test("a version saved through one instance appears live on a page served by another", async ({ page }) => {
  const postgres = process.env.MARGIN_E2E_POSTGRES_URL;
  const bin = process.env.MARGIN_E2E_BIN;
  expect(postgres, "make e2e sets MARGIN_E2E_POSTGRES_URL").toBeTruthy();
  expect(bin, "make e2e sets MARGIN_E2E_BIN").toBeTruthy();
  const name = `margin_e2e_${Date.now()}`;
  execFileSync("psql", [postgres!, "-q", "-c", `CREATE DATABASE ${name}`]);
  const url = new URL(postgres!);
  url.pathname = `/${name}`;
  const database = url.toString();
  const servers: ChildProcess[] = [];
  const start = async (port: number) => {
    servers.push(await startMargin(port, database));
    return `http://127.0.0.1:${port}`;
  };
  try {
    const a = await start(3101);
    const b = await start(3102);
    const signup = await (await fetch(`${a}/api/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: uniqueEmail("two"), password: PASSWORD }),
    })).json();
    const auth = { authorization: `Bearer ${signup.token}`, "content-type": "application/json" };
    const lesson = await (await fetch(`${b}/api/lessons`, { method: "POST", headers: auth, body: JSON.stringify({ title: "Shared" }) })).json();
    await page.context().addCookies([{ name: "margin_session", value: signup.token, url: a }]);
    await page.goto(`${a}/lessons/${lesson.id}`);
    await hydrated(page);

    const saved = await fetch(`${b}/api/lessons/${lesson.id}/document`, {
      method: "PUT",
      headers: auth,
      body: JSON.stringify({ xml: version("Saved through the other instance."), baseRevision: 1 }),
    });
    expect(saved.status).toBe(200);
    await expect(page.locator(".document-pane").getByText("Saved through the other instance.")).toBeVisible();
  } finally {
    for (const s of servers) s.kill();
    execFileSync("psql", [postgres!, "-q", "-c", `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]);
  }
});
