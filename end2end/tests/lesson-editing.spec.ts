import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { createLesson, editable, hydrated, signUp, uniqueEmail } from "./helpers";

const BROKEN = `<lesson>
  <h1>Être</h1>
  <exercise type="fill-blanks">
    <p>Je <blank hint="être"/> content.</p>
  </exercise>
  <marquee>old</marquee>
</lesson>`;

const FIXED = `<lesson>
  <h1>Être</h1>
  <exercise type="fill-blanks">
    <instructions>Write the right form of être.</instructions>
    <p>Je <blank answer="suis" hint="être"/> content.</p>
  </exercise>
</lesson>`;

async function openTab(page: Page, name: string) {
  await page.getByRole("tab", { name }).click();
  await expect(page.getByRole("tab", { name })).toHaveAttribute("aria-selected", "true");
}

test("invalid XML shows every error, saves nothing and keeps the text; the fix saves and renders", async ({ page }) => {
  await signUp(page, uniqueEmail("xml"));
  const url = await createLesson(page, "Verbs");
  await hydrated(page);

  await openTab(page, "XML");
  const editor = page.getByLabel("Lesson XML");
  await editor.fill(BROKEN);
  await page.getByRole("button", { name: "Save" }).click();

  const errors = page.getByRole("alert");
  await expect(errors).toContainText("Not saved. Fix these 2 problems");
  await expect(errors).toContainText("Line 4");
  await expect(errors).toContainText("missing required attribute `answer`");
  await expect(errors).toContainText("Line 6");
  await expect(errors).toContainText("<marquee> is not a lesson element");
  await expect(editor).toHaveValue(BROKEN);

  // Switching tabs keeps the draft; the lesson itself is unchanged.
  await openTab(page, "Lesson");
  await expect(editable(page, "b2")).toBeEmpty();
  await openTab(page, "XML");
  await expect(editor).toHaveValue(BROKEN);

  // Nothing was stored.
  await page.reload();
  await hydrated(page);
  await expect(editable(page, "b2")).toBeEmpty();

  await openTab(page, "XML");
  await editor.fill(FIXED);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status")).toHaveText("Saved as version 2.");
  // Ids were assigned on save.
  await expect(editor).toHaveValue(/<blank id="bl-1" answer="suis" hint="être"\/>/);

  await openTab(page, "Lesson");
  const exercise = page.locator(".exercise");
  await expect(exercise).toContainText("Fill in the blanks");
  // The editor shows a blank as a box holding its answer.
  await expect(exercise.locator(".blank-chip")).toHaveText("suis");
  await page.getByLabel("Student preview").check();
  await expect(exercise.locator(".blank.answer")).toHaveCount(0);
  await expect(exercise.getByRole("textbox", { name: "Blank" })).toBeVisible();
  await expect(exercise.getByRole("textbox", { name: "Blank" })).toHaveAttribute("placeholder", "être");

  await page.goto(url);
  // The server's drawing, then the editor's.
  await expect(page.locator(".exercise :is(.blank.answer, .blank-chip)")).toHaveText("suis");
});

test("an older version can be viewed and restored as a new version", async ({ page }) => {
  await signUp(page, uniqueEmail("history"));
  await createLesson(page, "Plants");
  await hydrated(page);
  await openTab(page, "XML");
  await page.getByLabel("Lesson XML").fill(FIXED);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status")).toHaveText("Saved as version 2.");

  await openTab(page, "History");
  const versions = page.getByRole("list", { name: "Versions" });
  await expect(versions.getByRole("button")).toHaveCount(2);
  await expect(versions.getByRole("button").first()).toContainText("Version 2");
  await expect(versions.getByRole("button").first()).toContainText("Edited the XML");

  await versions.getByRole("button", { name: /Version 1/ }).click();
  const preview = page.getByRole("region", { name: "Version 1" });
  await expect(preview).toContainText("Plants");
  await expect(preview.locator(".exercise")).toHaveCount(0);
  await preview.getByRole("button", { name: "Restore this version" }).click();
  await expect(page.getByRole("status")).toHaveText("Restored version 1 as version 3.");
  await expect(versions.getByRole("button")).toHaveCount(3);
  await expect(versions.getByRole("button").first()).toContainText("Restored version 1");

  await openTab(page, "Lesson");
  await expect(editable(page, "b2")).toBeEmpty();
  await expect(page.locator(".exercise")).toHaveCount(0);
});

test("a blank lesson title is refused with a reason, and the form keeps what was typed", async ({ page }) => {
  await signUp(page, uniqueEmail("blank"));
  await page.goto("/");
  // "New lesson" is a disclosure drawn by the server: no code to wait for.
  await page.getByRole("button", { name: "New lesson" }).click();
  await page.getByLabel("Title").fill("   ");
  await page.getByRole("button", { name: "Create lesson" }).click();
  await expect(page.getByRole("alert")).toHaveText("Give the lesson a title.");
  await expect(page.getByLabel("Title")).toHaveValue("   ");
  await expect(page.getByText("No lessons yet.")).toBeVisible();
});
