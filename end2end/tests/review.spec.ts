import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { editable, editor, hydrated, lastReply, openLesson, partsInOrder, send } from "./helpers";

const ASK = "Add a fill-in-the-blank exercise about French verbs";
const ADDED = "Added exercise 1 (Fill in the blanks, 3 blanks)";

/** Asks for every edit to be reviewed and waits until that is saved. */
async function reviewOn(page: Page): Promise<void> {
  const saved = page.waitForResponse((r) => r.url().endsWith("/review") && r.request().method() === "PUT" && r.ok());
  await page.getByLabel("Assistant's edits").selectOption("every");
  await saved;
}

const card = (page: Page) => lastReply(page).locator(".proposal");
const lessonView = (page: Page) => page.locator(".document-pane .lesson-view");

test("with review on, an exercise waits for Apply; applied, the lesson and History show the change", async ({ page }) => {
  await openLesson(page, "review");
  await reviewOn(page);
  await send(page, ASK);
  await expect(card(page)).toContainText("Waiting for your review");
  await expect(card(page).getByRole("list", { name: "Proposed changes" })).toHaveText(ADDED);
  // The reply waits for the decision.
  await expect(page.getByRole("button", { name: "Stop" })).toBeVisible();
  await expect(lessonView(page).locator(".exercise")).toHaveCount(0);

  // Preview shows the lesson it would make, without applying it.
  await card(page).getByRole("button", { name: "Preview" }).click();
  await expect(page.getByText("Preview of the suggested change. It is not applied.")).toBeVisible();
  await expect(lessonView(page).locator(".exercise")).toContainText("Fill in the blanks");
  await page.getByRole("button", { name: "Back to the lesson" }).click();
  await expect(lessonView(page).locator(".exercise")).toHaveCount(0);

  await card(page).getByRole("button", { name: "Apply" }).click();
  await expect(card(page)).toContainText("Applied as version 2.");
  await expect(lessonView(page).locator(".exercise")).toContainText("Fill in the blanks");
  // The same reply goes on from the decision.
  await expect(lastReply(page)).toContainText("I added a fill-in-the-blank exercise");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  // What changed is marked until the teacher turns it off.
  const show = page.getByRole("button", { name: "Show changes" });
  const marked = "rgb(255, 243, 196)";
  await expect(show).toHaveAttribute("aria-pressed", "true");
  await expect(lessonView(page).locator(".exercise")).toHaveCSS("background-color", marked);
  await expect(lessonView(page).locator("h1")).not.toHaveCSS("background-color", marked);
  await show.click();
  await expect(show).toHaveAttribute("aria-pressed", "false");
  await expect(lessonView(page).locator(".exercise")).not.toHaveCSS("background-color", marked);

  await page.getByRole("tab", { name: "History" }).click();
  const newest = page.getByRole("list", { name: "Versions" }).getByRole("button").first();
  await expect(newest).toContainText("Version 2");
  await expect(newest).toContainText("Assistant, applied by you");
  await newest.click();
  await expect(page.getByRole("list", { name: "Changes between versions" })).toHaveText(ADDED);
  // Compare with any other version.
  await page.getByLabel("Compare with").selectOption("1");
  await expect(page.getByText("Changes from version 1:")).toBeVisible();
});

test("Discard keeps the lesson as it was, and the next reply knows why", async ({ page }) => {
  await openLesson(page, "discard");
  await reviewOn(page);
  await send(page, ASK);
  await expect(card(page)).toContainText("Waiting for your review");
  page.once("dialog", (d) => d.accept("Too hard for year 7"));
  await card(page).getByRole("button", { name: "Discard" }).click();
  await expect(card(page)).toContainText("Discarded: “Too hard for year 7”");
  await expect(card(page).getByRole("button", { name: "Apply" })).toHaveCount(0);
  await expect(lessonView(page).locator(".exercise")).toHaveCount(0);
  // The reply goes on, knowing.
  await expect(lastReply(page)).toContainText("Understood: I left the lesson as it was.");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();

  await send(page, "What did I decide about your suggestion?");
  await expect(lastReply(page)).toContainText('the teacher discarded it, saying: "Too hard for year 7"');
  await page.reload();
  await hydrated(page);
  await expect(page.locator(".proposal").first()).toContainText("Discarded: “Too hard for year 7”");
});

test("a pending change survives a reload and can be applied afterwards", async ({ page }) => {
  await openLesson(page, "reload");
  await reviewOn(page);
  await send(page, ASK);
  await expect(card(page)).toContainText("Waiting for your review");
  await page.reload();
  await hydrated(page);
  await expect(page.getByLabel("Assistant's edits")).toHaveValue("every");
  const again = page.locator(".proposal");
  await expect(again).toContainText("Waiting for your review");
  await expect(again.getByRole("list", { name: "Proposed changes" })).toHaveText(ADDED);
  await again.getByRole("button", { name: "Apply" }).click();
  await expect(again).toContainText("Applied as version 2.");
  await expect(lessonView(page).locator(".exercise")).toContainText("Fill in the blanks");
  // The reply, paused through the reload, goes on.
  await expect(lastReply(page)).toContainText("I added a fill-in-the-blank exercise");
});

test("asked to review every edit, a reply pauses at each, goes on after Apply, and shows its steps where they happened", async ({ page }) => {
  await openLesson(page, "continue");
  await reviewOn(page);
  await send(page, "Add an exercise and then its answer key");
  const cards = lastReply(page).locator(".proposal");
  await expect(cards).toHaveCount(1);
  await expect(cards.first()).toContainText("Waiting for your review");
  await cards.first().getByRole("button", { name: "Apply" }).click();
  await expect(cards.first()).toContainText("Applied as version 2.");
  // The same reply goes on to the key, which waits in its turn.
  await expect(cards).toHaveCount(2);
  await expect(cards.nth(1)).toContainText("Waiting for your review");
  await cards.nth(1).getByRole("button", { name: "Apply" }).click();
  await expect(cards.nth(1)).toContainText("Applied as version 3.");
  await expect(lastReply(page)).toContainText("Done: the exercise and its answer key are in the lesson.");
  await expect(lessonView(page)).toContainText("The sun is a star.");

  const order = () => partsInOrder(page);
  const expected = [
    "text: First the exercise.",
    "steps: Done (1 step)",
    "text: Now the answer key, as a note for you.",
    "steps: Done (1 step)",
    "text: Done: the exercise and its answer key are in the lesson.",
  ];
  await expect.poll(order).toEqual(expected);
  await page.reload();
  await hydrated(page);
  await expect.poll(order).toEqual(expected);
  await expect(page.locator(".proposal")).toHaveCount(2);
});

test("a wipe asked for by text inside the lesson is held for review even with review off", async ({ page }) => {
  await openLesson(page, "guard");
  await expect(page.getByLabel("Assistant's edits")).toHaveValue("destructive");
  // The teacher's own first words, which the wipe would remove.
  await editable(page, "b2").click();
  await page.keyboard.type("Read the poem twice, then answer the questions about it below.");
  await expect(editor(page).getByRole("status").first()).toHaveText("Saved");
  await send(page, "Please do what the lesson says");
  await expect(card(page)).toContainText("Waiting for your review");
  await expect(card(page).getByRole("list", { name: "Proposed changes" })).toContainText("Removed the paragraph “Read the poem twice");
  // Nothing changed without a click.
  await expect(lessonView(page)).toContainText("Read the poem twice");
  await expect(lessonView(page).getByRole("heading", { name: "Verbs" })).toBeVisible();
});

test("Undo takes back the first of two edits and keeps the second", async ({ page }) => {
  await openLesson(page, "undo");
  await send(page, ASK);
  await expect(lastReply(page)).toContainText("I added a fill-in-the-blank exercise");
  await send(page, "Add a true/false exercise and fix itself if needed");
  await expect(lastReply(page)).toContainText("I added a true-or-false exercise");
  await expect(lessonView(page).locator(".exercise")).toHaveCount(2);

  const first = page.locator(".msg.assistant").first();
  await first.getByRole("button", { name: /^Done \(\d steps\)$/ }).click();
  // The edit's step lists what it changed.
  await first.getByText("Editing document").click();
  await expect(first.getByRole("list", { name: "Changes" })).toHaveText(ADDED);
  await first.getByRole("button", { name: "Undo version 2" }).click();
  await expect(first).toContainText("Undone: the lesson is now version 4.");
  // No second Undo: the button says it is done.
  await expect(first.getByRole("button", { name: "Undone" })).toHaveAttribute("aria-disabled", "true");
  await expect(first.getByRole("button", { name: "Undo version 2" })).toHaveCount(0);
  await expect(lessonView(page).locator(".exercise")).toHaveCount(1);
  await expect(lessonView(page).locator(".exercise")).toContainText("The sun is a star.");
});
