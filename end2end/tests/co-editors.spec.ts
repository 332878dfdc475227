import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { colleagueOf, createLesson, hydrated, signUp, uniqueEmail } from "./helpers";

// Editing together: the owner invites a colleague of the same school from
// the Share page; the colleague finds the lesson in their list and edits
// it; the owner's open page shows the edit at once, and History says who.

async function openTab(page: Page, name: string) {
  await page.getByRole("tab", { name }).click();
  await expect(page.getByRole("tab", { name })).toHaveAttribute("aria-selected", "true");
}

test("a colleague's edit appears live on the owner's page, with their name in History", async ({ page, browser }) => {
  await signUp(page, uniqueEmail("owner"));
  const url = await createLesson(page, "Rivers");

  const { colleague, email, context: other } = await colleagueOf(page, browser, "colleague");

  await page.goto(url);
  await page.getByRole("link", { name: "Share", exact: true }).click();
  await page.getByLabel("Colleague's email").fill("nobody@example.org");
  await page.getByRole("button", { name: "Invite to edit" }).click();
  await expect(page.getByRole("alert")).toContainText("That colleague could not be invited.");
  await page.getByLabel("Colleague's email").fill(email);
  await page.getByRole("button", { name: "Invite to edit" }).click();
  await expect(page.getByRole("button", { name: `Stop ${email} editing` })).toBeVisible();

  await page.goto(url);
  await hydrated(page);
  await colleague.goto("/");
  const shared = colleague.getByRole("region", { name: "Editing with colleagues" });
  await shared.getByRole("link", { name: "Rivers" }).click();
  await hydrated(colleague);
  await expect(colleague.getByText("You edit this lesson with")).toBeVisible();
  await openTab(colleague, "XML");
  await colleague.getByLabel("Lesson XML").fill("<lesson>\n  <h1>Rivers</h1>\n  <p>Rivers carry rain back to the sea.</p>\n</lesson>");
  await colleague.getByRole("button", { name: "Save" }).click();
  await expect(colleague.getByRole("status")).toHaveText("Saved as version 2.");

  // The owner's open page shows it without a reload, and History says who.
  await expect(page.locator(".document-pane").getByText("Rivers carry rain back to the sea.")).toBeVisible();
  await openTab(page, "History");
  const newest = page.getByRole("list", { name: "Versions" }).getByRole("listitem").first();
  await expect(newest).toContainText("Version 2");
  await expect(newest).toContainText(email);
  await other.close();
});
