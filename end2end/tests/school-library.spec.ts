import { expect, test } from "./csp";
import { colleagueOf, createLesson, hydrated, signUp, uniqueEmail } from "./helpers";

// The School library: a teacher shares a lesson from its Share page; a
// colleague of the same school finds it, reads it and copies it into their
// own lessons.

const LESSON = `<lesson>
  <h1>Tides</h1>
  <p>The moon pulls the sea towards it, twice a day.</p>
  <exercise type="true-false"><statement answer="true">There are two high tides a day.</statement></exercise>
</lesson>`;

test("a shared lesson is found by a colleague in the School library and copied", async ({ page, browser }) => {
  await signUp(page, uniqueEmail("head"));
  const url = await createLesson(page, "Tides");
  const id = url.split("/").pop();
  expect((await page.request.put(`/api/lessons/${id}/document`, { data: { xml: LESSON, baseRevision: 1 }, headers: { Origin: new URL(url).origin } })).ok()).toBeTruthy();
  await page.reload();
  await hydrated(page);
  await page.getByRole("link", { name: "Share", exact: true }).click();
  await expect(page.getByRole("status")).toHaveText("Not shared: only you see this lesson.");
  await page.getByLabel("Subject").fill("Geography");
  await page.getByLabel("Grade").selectOption("5");
  await page.getByRole("button", { name: "Share with my school" }).click();
  await expect(page.getByRole("status")).toContainText("Shared with your school");

  const { colleague, context: other } = await colleagueOf(page, browser, "colleague");

  await colleague.getByRole("link", { name: "School library" }).click();
  await colleague.getByLabel("Subject").selectOption("Geography");
  await colleague.getByLabel("Search").fill("moon");
  await colleague.getByRole("button", { name: "Find" }).click();
  const shelf = colleague.getByRole("list", { name: "Shared lessons" });
  await expect(shelf.getByRole("listitem")).toHaveCount(1);
  await expect(shelf).toContainText("Geography · Grade 5 · shared by head-");
  await shelf.getByRole("link", { name: "Tides" }).click();
  await expect(colleague.getByText("The moon pulls the sea towards it")).toBeVisible();
  await colleague.getByRole("button", { name: "Copy to my lessons" }).click();
  await expect(colleague).toHaveURL(/\/lessons\/[0-9a-f]{32}$/);
  expect(colleague.url()).not.toContain(id!);
  await expect(colleague.locator(".document-pane .lesson-view")).toContainText("The moon pulls the sea towards it");
  await colleague.goto("/");
  await expect(colleague.getByRole("link", { name: "Tides", exact: true })).toBeVisible();
  await other.close();
});
