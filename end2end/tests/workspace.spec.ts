import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { hydrated, lastReply, openLesson, replies, send } from "./helpers";

// The reply as a workspace: steps that open to what went in and came out,
// follow-ups sent with one click, and the page's own actions offered by a reply.

const QUIZ = "Write a quiz about the sun";
const lessonView = (page: Page) => page.locator(".document-pane .lesson-view");
const suggestions = (page: Page) => lastReply(page).locator(".suggestions");

test("an open step shows its input and output behind Details", async ({ page }) => {
  await openLesson(page, "details");
  await send(page, QUIZ);
  const reply = lastReply(page);
  await expect(reply.getByRole("button", { name: "Done (2 steps)" })).toBeVisible();
  await reply.getByRole("button", { name: "Done (2 steps)" }).click();
  const skill = reply.locator(".step").first();
  await skill.locator("summary").first().click();
  // Which skill, and what it covers.
  await expect(skill.locator(".step-detail > p").first()).toContainText("True or false:");
  await skill.getByText("Details", { exact: true }).click();
  const raw = skill.locator(".raw pre");
  await expect(raw.first()).toHaveText('{"skill":"true-false"}');
  await expect(raw.nth(1)).toContainText("true");
  // The edit: its change list, and the lesson it sent.
  const edit = reply.locator(".step").nth(1);
  await edit.locator("summary").first().click();
  await expect(edit.getByRole("list", { name: "Changes" })).toContainText("Added exercise 1 (True or false, 2 statements)");
  await edit.getByText("Details", { exact: true }).click();
  await expect(edit.locator(".raw pre").first()).toContainText("documentXml");
  await expect(edit.locator(".raw pre").nth(1)).toContainText("Saved as version 2");
});

test("a suggested reply is sent with one click, kept over a reload, and gone once something else is sent", async ({ page }) => {
  await openLesson(page, "follow-up");
  await send(page, QUIZ);
  await expect(suggestions(page).getByRole("button", { name: "Make it harder" })).toBeVisible();
  // Kept with the reply.
  await page.reload();
  await hydrated(page);
  await expect(suggestions(page).getByRole("button", { name: "Make it harder" })).toBeVisible();
  const before = await replies(page).count();
  await suggestions(page).getByRole("button", { name: "Add two more statements" }).click();
  await expect(page.locator(".msg.user").last()).toHaveText("Add two more statements");
  await expect(replies(page)).toHaveCount(before + 1);
  await expect(lastReply(page)).toContainText("offline demo model");
  // Only the last reply offers anything, and this one offers nothing.
  await expect(page.locator(".suggestions button")).toHaveCount(0);
  await page.reload();
  await hydrated(page);
  await expect(page.locator(".suggestions button")).toHaveCount(0);
});

test("the actions a reply offers run on the page: student preview, print, undo", async ({ page }) => {
  await openLesson(page, "actions");
  await send(page, QUIZ);
  await expect(lessonView(page).locator(".exercise")).toContainText("The moon makes its own light.");

  // Student preview: the answers are hidden.
  await suggestions(page).getByRole("button", { name: "Show student preview" }).click();
  await expect(page.getByLabel("Student preview")).toBeChecked();
  await expect(lessonView(page)).toHaveClass(/student/);
  await page.getByLabel("Student preview").uncheck();

  // Print: the worksheet and the key open as print pages.
  for (const [name, title] of [
    ["Print worksheet", "Verbs · Worksheet · Margin"],
    ["Print answer key", "Verbs · Answer key · Margin"],
  ]) {
    const [sheet] = await Promise.all([page.waitForEvent("popup"), suggestions(page).getByRole("button", { name }).click()]);
    await sheet.waitForLoadState();
    await expect(sheet).toHaveTitle(title);
    await sheet.close();
  }

  // Undo this edit: the lesson goes back, and the step says so.
  await suggestions(page).getByRole("button", { name: "Undo this edit" }).click();
  await expect(lastReply(page).getByText("Undone: the lesson is now version 3.")).toBeVisible();
  await expect(lessonView(page).locator(".exercise")).toHaveCount(0);
});
