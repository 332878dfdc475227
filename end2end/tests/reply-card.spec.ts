import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { hydrated, lastReply, openLesson, send } from "./helpers";

// The reply card is made of typed parts that are never drawn again whole:
// what the teacher opened stays open, and the button they used keeps the
// keyboard focus, whatever arrives meanwhile.

const steps = (page: Page) => lastReply(page).locator(".step");
/** A step's own disclosure (its label) and its raw "Details" inside it. */
const stepDetails = (page: Page, i: number) => steps(page).nth(i).locator("details").first();
const rawDetails = (page: Page, i: number) => steps(page).nth(i).locator("details.raw");

test("a step's Details stay open while its progress and other events arrive", async ({ page }) => {
  await openLesson(page, "details");
  await send(page, "Write and wait");
  // The skill is done; the edit after it is under way and stays so.
  await expect(steps(page)).toHaveCount(2);
  await expect(steps(page).first()).toHaveClass(/\bok\b/);
  await expect(steps(page).nth(1)).toHaveClass(/\brunning\b/);

  // Opened while the edit is written (its progress comes every 1 KB for a
  // few seconds), they stay open through every event after.
  await steps(page).first().locator("summary").first().click();
  await steps(page).first().locator("summary", { hasText: "Details" }).click();
  await steps(page).nth(1).locator("summary").first().click();
  await expect(steps(page).nth(1).locator(".step-progress")).toContainText("Writing the lesson: 3 KB so far", { timeout: 15_000 });
  await expect(stepDetails(page, 0)).toHaveAttribute("open", "");
  await expect(rawDetails(page, 0)).toHaveAttribute("open", "");
  await expect(stepDetails(page, 1)).toHaveAttribute("open", "");

  // Stop: the reply ends, the steps fold away, and the edit did not finish.
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(lastReply(page)).toContainText("Stopped.");
  const fold = lastReply(page).getByRole("button", { name: "Done (2 steps)" });
  await expect(steps(page)).toHaveCount(0);
  await fold.click();
  await expect(fold).toBeFocused();
  await expect(fold).toHaveAttribute("aria-expanded", "true");
  await expect(steps(page).nth(1)).toHaveClass(/\bfailed\b/);
  await steps(page).nth(1).locator("summary").first().click();
  await expect(steps(page).nth(1)).toContainText("did not finish");
});

test("Apply and Undo keep the step open and the keyboard focus on the button used", async ({ page }) => {
  await openLesson(page, "focus");
  const saved = page.waitForResponse((r) => r.url().endsWith("/review") && r.request().method() === "PUT" && r.ok());
  await page.getByLabel("Assistant's edits").selectOption("every");
  await saved;
  await send(page, "Add a fill-in-the-blank exercise about French verbs");
  const card = lastReply(page).locator(".proposal");
  await expect(card).toContainText("Waiting for your review");

  // The edit's step, opened with its raw Details (the reply waits, so its
  // steps are listed).
  await steps(page).nth(1).locator("summary").first().click();
  await steps(page).nth(1).locator("summary", { hasText: "Details" }).click();
  await expect(rawDetails(page, 1)).toHaveAttribute("open", "");

  // Apply from the keyboard: the same button becomes Undo and keeps the focus.
  const apply = card.getByRole("button", { name: "Apply" });
  await apply.focus();
  await page.keyboard.press("Enter");
  await expect(card).toContainText("Applied as version 2.");
  // Its step no longer says it waits.
  await expect(steps(page).nth(1).locator("summary").first()).toContainText("(applied)");
  const undo = card.getByRole("button", { name: "Undo version 2" });
  await expect(undo).toBeFocused();
  await expect(stepDetails(page, 1)).toHaveAttribute("open", "");
  await expect(rawDetails(page, 1)).toHaveAttribute("open", "");

  await page.keyboard.press("Enter");
  await expect(card).toContainText("Undone: the lesson is now version 3.");
  // The card says what is true, and offers no second Undo: the button
  // (the focus still on it) reads "Undone" and does nothing.
  await expect(card).toContainText("Undone: version 3 took back version 2.");
  await expect(card).not.toContainText("Applied as version 2.");
  await expect(steps(page).nth(1).locator("summary").first()).toContainText("(applied, then undone)");
  const undone = card.getByRole("button", { name: "Undone" });
  await expect(undone).toBeFocused();
  await expect(undone).toHaveAttribute("aria-disabled", "true");
  await expect(card.getByRole("button", { name: /^Undo version/ })).toHaveCount(0);
  await expect(rawDetails(page, 1)).toHaveAttribute("open", "");
  await expect(page.locator(".document-pane .lesson-view .exercise")).toHaveCount(0);

  // The same after a reload.
  await page.reload();
  await hydrated(page);
  const again = lastReply(page).locator(".proposal");
  await expect(again).toContainText("Undone: version 3 took back version 2.");
  await expect(again.getByRole("button", { name: "Undone" })).toHaveAttribute("aria-disabled", "true");
  await expect(again.getByRole("button", { name: /^Undo version/ })).toHaveCount(0);
});

test("the chat's buttons and the History list keep the keyboard focus through a redraw", async ({ page }) => {
  await openLesson(page, "redraw");
  await send(page, "Add a fill-in-the-blank exercise about French verbs");
  await expect(lastReply(page)).toContainText("I added a fill-in-the-blank exercise");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();

  // New chat changes the chat list and the picker; the button keeps the focus.
  const newChat = page.getByRole("button", { name: "New chat" });
  await newChat.focus();
  await page.keyboard.press("Enter");
  await expect(page.locator("#chat-picker option")).toHaveCount(2);
  await expect(newChat).toBeFocused();

  // Choosing a version loads it and its changes; the version chosen keeps the focus.
  await page.getByRole("tab", { name: "History" }).click();
  const first = page.getByRole("list", { name: "Versions" }).getByRole("button", { name: /Version 1/ });
  await first.focus();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("region", { name: "Version 1" })).toBeVisible();
  await expect(first).toHaveAttribute("aria-pressed", "true");
  await expect(first).toBeFocused();
});
