/**
 * The lesson editor: the teacher writes the lesson in place, by keyboard,
 * and nothing typed is lost — across a reload, a failed save, a version
 * saved elsewhere meanwhile, a paste from Word or Google Docs, and undo.
 */
import { Page } from "@playwright/test";
import { once } from "node:events";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "./csp";
import { colleagueOf, createLesson, editable, editor, hydrated, send, signUp, startMargin, uniqueEmail } from "./helpers";

const saved = (page: Page) => expect(editor(page).getByRole("status").first()).toHaveText("Saved");

async function openTab(page: Page, name: string) {
  await page.getByRole("tab", { name }).click();
  await expect(page.getByRole("tab", { name })).toHaveAttribute("aria-selected", "true");
}

async function xml(page: Page): Promise<string> {
  const id = new URL(page.url()).pathname.split("/").pop();
  const r = await page.request.get(`/api/lessons/${id}`);
  return (await r.json()).documentXml;
}

async function newLesson(page: Page, name: string, title: string) {
  await signUp(page, uniqueEmail(name));
  await createLesson(page, title);
  await hydrated(page);
  await editor(page).waitFor();
}

test("a new lesson holds only its title, and the empty paragraph's hint never reaches a student", async ({ page }) => {
  await newLesson(page, "empty", "Tides");
  const doc = await xml(page);
  expect(doc).toContain('<h1 id="b1">Tides</h1>');
  expect(doc).toContain('<p id="b2"/>');
  await expect(editable(page, "b2")).toHaveAttribute("data-placeholder", /Write here/);
  await expect(editable(page, "b2")).toBeEmpty();
  await page.getByLabel("Student preview").check();
  const student = page.locator(".document-pane .lesson-view.student");
  await expect(student).toContainText("Tides");
  expect(await student.innerText()).not.toMatch(/Write here|Start writing/);
});

test("a teacher writes a lesson from empty by keyboard, and after a reload it is all there, as the XML says", async ({ page }) => {
  await newLesson(page, "write", "Volcanoes");
  await editable(page, "b2").click();
  const keys = page.keyboard;
  await keys.type("Magma rises ");
  await keys.press("Control+b");
  await keys.type("slowly");
  await keys.press("Control+b");
  await keys.type(" to the ");
  await keys.press("Control+i");
  await keys.type("surface");
  await keys.press("Control+i");
  await keys.type(".");
  // A heading below, made from a new paragraph.
  await keys.press("Enter");
  await keys.press("Control+Alt+2");
  await keys.type("Why it erupts");
  await expect(editor(page).getByRole("heading", { name: "Why it erupts", level: 2 })).toBeFocused();
  await keys.press("Enter");
  await keys.type("Pressure builds under the crust.");
  // `/` in an empty block opens its type: a teacher's note.
  await keys.press("Enter");
  await keys.press("/");
  const type = page.getByRole("combobox", { name: "Type of this paragraph" }).and(page.locator(":focus"));
  await expect(type).toBeFocused();
  await type.selectOption("note");
  await expect(editor(page).getByRole("textbox", { name: "Teacher note" })).toBeFocused();
  await keys.type("Show the vents diagram.");
  // Backspace at the start joins a paragraph onto the one before.
  await keys.press("Enter");
  await keys.type("Ash falls.");
  await keys.press("Home");
  await keys.press("Backspace");
  await saved(page);

  const doc = await xml(page);
  expect(doc).toContain('<p id="b2">Magma rises <strong>slowly</strong> to the <em>surface</em>.</p>');
  expect(doc).toMatch(/<h2 id="[a-z0-9-]+">Why it erupts<\/h2>\n  <p id="[a-z0-9-]+">Pressure builds under the crust.<\/p>\n  <note id="[a-z0-9-]+">Show the vents diagram.Ash falls.<\/note>/);
  expect(doc).not.toContain("Write here");

  await page.reload();
  await hydrated(page);
  await expect(editor(page).getByRole("heading", { name: "Why it erupts" })).toBeVisible();
  await expect(editable(page, "b2").locator("strong")).toHaveText("slowly");
  await expect(editable(page, "b2").locator("em")).toHaveText("surface");
  await openTab(page, "XML");
  await expect(page.getByLabel("Lesson XML")).toHaveValue(doc);
  // The teacher's own edits are theirs in the History.
  await openTab(page, "History");
  await expect(page.getByRole("list", { name: "Versions" }).getByRole("button").first()).toContainText("Edited the lesson");
});

test("blocks move and go by keyboard, and Ctrl+Z and Ctrl+Shift+Z take typing back and forth", async ({ page }) => {
  await newLesson(page, "undo", "Soil");
  await editable(page, "b2").click();
  const keys = page.keyboard;
  await keys.type("First line.");
  await keys.press("Enter");
  await keys.type("Second line.");
  await saved(page);
  // Alt+↑ moves the paragraph above the first one; the caret goes with it.
  await keys.press("Alt+ArrowUp");
  const paragraphs = editor(page).getByRole("textbox", { name: "Paragraph" });
  await expect(paragraphs).toHaveText(["Second line.", "First line."]);
  await expect(paragraphs.first()).toBeFocused();
  await keys.press("Control+z");
  await expect(paragraphs).toHaveText(["First line.", "Second line."]);
  await keys.press("Control+Shift+z");
  await expect(paragraphs).toHaveText(["Second line.", "First line."]);
  // Deleted from its tools, by keyboard; Ctrl+Z brings it back. Only the
  // block with the caret (and the one under the pointer) has its tools.
  await paragraphs.first().click();
  await page.mouse.move(0, 0);
  await expect(editor(page).getByRole("group", { name: "Paragraph tools" })).toHaveCount(1);
  await expect(editor(page).locator(".block").first().getByRole("group", { name: /tools$/ })).toHaveCount(0);
  await keys.press("Tab");
  await expect(page.locator(":focus")).toHaveAttribute("aria-label", "Type of this paragraph");
  await keys.press("Tab");
  await keys.press("Tab");
  await keys.press("Tab");
  await expect(page.locator(":focus")).toHaveAttribute("aria-label", "Remove this paragraph");
  await keys.press("Enter");
  await expect(paragraphs).toHaveText(["First line."]);
  await paragraphs.first().click();
  await keys.press("Control+z");
  await expect(paragraphs).toHaveText(["Second line.", "First line."]);
  await saved(page);
  expect(await xml(page)).toMatch(/Second line\.<\/p>\n  <p id="b2">First line\./);
});

test("Enter over selected words replaces them, and Enter at the start of a heading opens a paragraph above it", async ({ page }) => {
  await newLesson(page, "enter", "Deserts");
  const keys = page.keyboard;
  await editable(page, "b2").click();
  await keys.type("Deserts are dry and cold places.");
  await keys.press("End");
  await keys.press("ArrowLeft");
  for (let i = 0; i < " places".length; i++) await keys.press("Shift+ArrowLeft");
  await keys.press("Enter");
  const paragraphs = editor(page).getByRole("textbox", { name: "Paragraph" });
  await expect(paragraphs).toHaveText(["Deserts are dry and cold", "."]);
  await expect(paragraphs.nth(1)).toBeFocused();
  // At the start of the title: an empty paragraph above, the title as it was, the caret still in it.
  const title = editor(page).getByRole("heading", { name: "Deserts", level: 1 });
  await title.click();
  await keys.press("Home");
  await keys.press("Enter");
  await expect(title).toBeFocused();
  await keys.type("Hot ");
  await saved(page);
  expect(await xml(page)).toMatch(/<lesson>\n  <p id="[a-z0-9-]+"\/>\n  <h1 id="b1">Hot Deserts<\/h1>\n  <p id="b2">Deserts are dry and cold<\/p>\n  <p id="[a-z0-9-]+">.<\/p>/);
});

test("a save that fails keeps the text, says so, and saves it once the server answers again", async ({ page }) => {
  await newLesson(page, "offline", "Clouds");
  await page.route("**/api/lessons/*/document", (route) => route.abort("connectionrefused"));
  await editable(page, "b2").click();
  await page.keyboard.type("Cumulus clouds are puffy.");
  const status = editor(page).getByRole("status").first();
  await expect(status).toContainText("Not saved yet");
  await expect(status).toContainText("trying again");
  await expect(editable(page, "b2")).toHaveText("Cumulus clouds are puffy.");
  expect(await xml(page)).toContain('<p id="b2"/>');
  await page.unroute("**/api/lessons/*/document");
  await saved(page);
  expect(await xml(page)).toContain('<p id="b2">Cumulus clouds are puffy.</p>');
});

test("the server stopped while the teacher types: the text stays, is said unsaved, and is saved once the server is back", async ({ browser }) => {
  test.setTimeout(90_000);
  const dir = join(__dirname, "..", "..", "target", "e2e", "editor-restart");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const database = `sqlite://${join(dir, "margin.db")}`;
  let server = await startMargin(3109, database);
  const context = await browser.newContext({ baseURL: "http://127.0.0.1:3109" });
  try {
    const page = await context.newPage();
    await newLesson(page, "restart", "Glaciers");
    await editable(page, "b2").click();
    await page.keyboard.type("Glaciers carve valleys.");
    await saved(page);
    server.kill();
    await once(server, "exit");
    await page.keyboard.type(" Slowly.");
    const status = editor(page).getByRole("status").first();
    await expect(status).toContainText("Not saved yet");
    await expect(editable(page, "b2")).toHaveText("Glaciers carve valleys. Slowly.");
    server = await startMargin(3109, database);
    await expect(status).toHaveText("Saved", { timeout: 20_000 });
    expect(await xml(page)).toContain('<p id="b2">Glaciers carve valleys. Slowly.</p>');
  } finally {
    server.kill();
    await context.close();
  }
});

test("a version saved elsewhere comes in around the paragraph being typed in, and both are kept", async ({ page }) => {
  await newLesson(page, "merge", "Rivers");
  const id = new URL(page.url()).pathname.split("/").pop();
  await editable(page, "b2").click();
  await page.keyboard.type("Rivers flow ");
  await saved(page);
  // Another tab renames the heading and adds a note at the end.
  const current = await (await page.request.get(`/api/lessons/${id}`)).json();
  const elsewhere = current.documentXml
    .replace("<h1 id=\"b1\">Rivers</h1>", "<h1 id=\"b1\">Rivers and lakes</h1>")
    .replace("</lesson>", "  <note id=\"n9\">From the other tab.</note>\n</lesson>");
  const origin = new URL(page.url()).origin;
  const put = await page.request.put(`/api/lessons/${id}/document`, { data: { xml: elsewhere, baseRevision: current.revision }, headers: { Origin: origin } });
  expect(put.ok()).toBeTruthy();
  await expect(editor(page).getByRole("heading", { name: "Rivers and lakes" })).toBeVisible();
  await expect(editor(page).getByRole("textbox", { name: "Teacher note" })).toHaveText("From the other tab.");
  // The caret stayed where the teacher was typing.
  await expect(editable(page, "b2")).toBeFocused();
  await page.keyboard.type("to the sea.");
  await saved(page);
  const doc = await xml(page);
  expect(doc).toContain('<h1 id="b1">Rivers and lakes</h1>');
  expect(doc).toContain('<p id="b2">Rivers flow to the sea.</p>');
  expect(doc).toContain('<note id="n9">From the other tab.</note>');
});

test("a colleague and the assistant change the lesson while the teacher types: nothing typed is lost and the caret stays", async ({ page, browser }) => {
  await signUp(page, uniqueEmail("typist"));
  const url = await createLesson(page, "Rivers of the world");
  const id = new URL(url).pathname.split("/").pop();
  const { colleague, email, context: other } = await colleagueOf(page, browser, "coeditor");
  await page.goto(url);
  await page.getByRole("link", { name: "Share", exact: true }).click();
  await page.getByLabel("Colleague's email").fill(email);
  await page.getByRole("button", { name: "Invite to edit" }).click();
  await expect(page.getByRole("button", { name: `Stop ${email} editing` })).toBeVisible();
  await page.goto(url);
  await hydrated(page);
  await editor(page).waitFor();

  await editable(page, "b2").click();
  await page.keyboard.type("The Nile is long");
  // The colleague saves a version with a paragraph of theirs, made on what
  // they last saw, while the teacher's words are still on their way.
  await colleague.goto(url);
  const origin = new URL(url).origin;
  const theirs = await (await colleague.request.get(`/api/lessons/${id}`)).json();
  const withTheirs = theirs.documentXml.replace("</lesson>", "  <p id=\"c1\">Added by a colleague.</p>\n</lesson>");
  const put = await colleague.request.put(`/api/lessons/${id}/document`, { data: { xml: withTheirs, baseRevision: theirs.revision, merge: true }, headers: { Origin: origin } });
  expect(put.ok()).toBeTruthy();
  await page.keyboard.type(" and old");
  await expect(editable(page, "c1")).toHaveText("Added by a colleague.");
  await expect(editable(page, "b2")).toBeFocused();

  // The assistant adds an exercise while the teacher goes on typing.
  await send(page, "Add a fill-in-the-blank exercise about French verbs");
  await editable(page, "b2").click();
  await page.keyboard.press("End");
  for (const word of [",", " and", " it", " floods."]) await page.keyboard.type(word);
  await expect(editor(page).getByRole("group", { name: "Exercise: Fill in the blanks" })).toBeVisible();
  await expect(editable(page, "b2")).toBeFocused();
  await page.keyboard.type(" Every year.");
  await saved(page);
  const doc = await xml(page);
  expect(doc).toContain('<p id="b2">The Nile is long and old, and it floods. Every year.</p>');
  expect(doc).toContain('<p id="c1">Added by a colleague.</p>');
  expect(doc).toContain('type="fill-blanks"');
  await other.close();
});

/** Pastes `html` (and `text`) into the focused block as the browser would. */
async function paste(page: Page, html: string, text: string) {
  await page.evaluate(([html, text]) => {
    const data = new DataTransfer();
    data.setData("text/html", html);
    data.setData("text/plain", text);
    document.activeElement!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, [html, text]);
}

test("a paste from Word or Google Docs becomes headings and paragraphs, marks kept, nothing else", async ({ page, cspViolations }) => {
  await newLesson(page, "paste", "Science");
  const fixture = (name: string) => readFileSync(join(__dirname, "..", "fixtures", name), "utf8");
  await editable(page, "b2").click();
  await paste(page, fixture("paste-word.html"), "The water cycle\nEvaporation: the sun warms the sea.\nClouds form");
  await expect(editor(page).getByRole("heading", { name: "The water cycle", level: 2 })).toBeVisible();
  await expect(editor(page).getByRole("status").filter({ hasText: "Pasted as text" })).toHaveText("Pasted as text: an image left out.");
  await page.keyboard.press("End");
  await page.keyboard.press("Enter");
  await paste(page, fixture("paste-google-docs.html"), "Rocks\nIgneous rock is made from cooled magma.\nGranite\nBasalt here");
  await expect(editor(page).getByRole("heading", { name: "Rocks", level: 1 })).toBeVisible();
  await saved(page);
  const doc = await xml(page);
  expect(doc).toMatch(/<h2 id="[^"]+">The water cycle<\/h2>/);
  expect(doc).toContain("<strong>Evaporation</strong>: the sun warms the <em>sea</em>.</p>");
  expect(doc).toMatch(/<p id="[^"]+">Clouds form<\/p>/);
  expect(doc).not.toContain("·");
  expect(doc).toMatch(/<h1 id="[^"]+">Rocks<\/h1>/);
  // Google Docs' bold wrapper is not bold; its styled spans are.
  expect(doc).toContain("Igneous rock is made from <strong>cooled</strong><em> magma</em>.</p>");
  expect(doc).toMatch(/<p id="[^"]+">Granite<\/p>/);
  expect(doc).toMatch(/<p id="[^"]+">Basalt here<\/p>/);
  expect(doc).not.toMatch(/script|onclick|javascript|img|span|href/);
  expect(await page.evaluate(() => (window as any).pasted)).toBeUndefined();
  // The fixture's inline handler, met by the browser's parser as it reads
  // the paste, is refused by the page's policy (and reported); nothing ran.
  expect(cspViolations.every((v) => v.includes("inline event handler"))).toBeTruthy();
  cspViolations.length = 0;
});
