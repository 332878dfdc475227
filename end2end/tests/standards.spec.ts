import { expect, test } from "./csp";
import { createLesson, hydrated, lastReply, signUp, uniqueEmail } from "./helpers";

// A school's admin adds a framework (a CASE package of our own) on the
// School page; on a lesson's Standards page the teacher finds a standard,
// presses Align, the assistant tags the exercise, and the page shows the
// lesson covering it.

const FRAMEWORK = JSON.stringify({
  CFDocument: { identifier: "e2e-reading", uri: "https://example.test/e2e-reading", title: "Reading, grade 4", creator: "Test state", lastChangeDateTime: "2026-01-01T00:00:00Z" },
  CFItems: [
    { identifier: "g4", fullStatement: "Grade 4", CFItemType: "Grade" },
    { identifier: "i1", humanCodingScheme: "RL.4.1", fullStatement: "Refer to details and examples in a text.", CFItemType: "Standard" },
    { identifier: "i2", humanCodingScheme: "RL.4.2", fullStatement: "Determine a theme of a story from details in the text.", CFItemType: "Standard" },
  ],
  CFAssociations: [],
});

const LESSON = `<lesson>
  <h1 id="h1">Stories</h1>
  <p id="p1">Read the story, then answer.</p>
  <exercise id="e1" type="fill-blanks"><p id="p2">The story is about <blank id="b1" answer="courage"/>.</p></exercise>
</lesson>`;

test("a framework added on the School page; Align tags an exercise; the Standards page shows it covered", async ({ page }) => {
  await signUp(page, uniqueEmail("admin"));
  await page.goto("/school");
  await page.getByLabel("CASE package (.json)").setInputFiles({ name: "reading.json", mimeType: "application/json", buffer: Buffer.from(FRAMEWORK) });
  await page.getByRole("button", { name: "Add a framework" }).click();
  await expect(page.getByRole("status")).toContainText("Framework added.");
  await expect(page.locator(".frameworks")).toContainText("Reading, grade 4 · 2 standards");

  // A file that is not a framework is refused, and nothing is added.
  await page.getByLabel("CASE package (.json)").setInputFiles({ name: "notes.json", mimeType: "application/json", buffer: Buffer.from("{ not json") });
  await page.getByRole("button", { name: "Add a framework" }).click();
  await expect(page.getByRole("alert")).toContainText("That file is not a framework Margin can read");
  await expect(page.locator(".frameworks li")).toHaveCount(1);

  const url = await createLesson(page, "Stories");
  const id = url.split("/").pop();
  const origin = new URL(url).origin;
  expect((await page.request.put(`/api/lessons/${id}/document`, { data: { xml: LESSON, baseRevision: 1 }, headers: { Origin: origin } })).ok()).toBeTruthy();

  await page.goto(`/lessons/${id}/standards`);
  await expect(page.getByText("This lesson names no standards yet.")).toBeVisible();
  await page.getByLabel("Code or words").fill("theme");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.locator(".standard-hit")).toHaveCount(1);
  await page.getByRole("button", { name: "Align to RL.4.2" }).click();

  await expect(page).toHaveURL(new RegExp(`/lessons/${id}$`));
  await hydrated(page);
  await expect(page.locator(".msg.trigger").last()).toContainText("Align to RL.4.2");
  await expect(lastReply(page)).toContainText("I tagged exercise 1 with RL.4.2.");
  await expect(page.locator(".document-pane .exercise-head .standards")).toHaveText("RL.4.2");

  await page.goto(`/lessons/${id}/standards`);
  const row = page.locator("table.coverage tbody tr");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("RL.4.2");
  await expect(row).toContainText("Determine a theme of a story");
  await expect(row).toContainText("Exercise 1: Fill in the blanks");
});
