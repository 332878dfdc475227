import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { createLesson, hydrated, lastReply, signUp, uniqueEmail } from "./helpers";

// "Make a version" at a reading level: the version opens with the assistant
// working in its own chat, and the core's Versions page lists it with its
// measured level.

const HARD = "Photosynthesis transforms electromagnetic radiation into chemical potential energy, facilitating carbohydrate biosynthesis within chloroplast organelles of photosynthetic eukaryotic organisms.";
/** Within ±0.5 of grade 4, as the page says a level. */
const IN_BAND = /Reading level: grade (3\.[5-9]|4\.[0-5])/;
const LESSON = `<lesson lang="en">
  <h1 id="h1">Plants</h1>
  <p id="p1">${HARD}</p>
  <p id="p2">${HARD}</p>
  <p id="p3">${HARD}</p>
</lesson>`;

/** A teacher's lesson "Plants" holding LESSON, and its address. */
async function plantsLesson(page: Page): Promise<{ url: string; id: string }> {
  await signUp(page, uniqueEmail("teacher"));
  const url = await createLesson(page, "Plants");
  const id = url.split("/").pop()!;
  expect((await page.request.put(`/api/lessons/${id}/document`, { data: { xml: LESSON, baseRevision: 1 }, headers: { Origin: new URL(url).origin } })).ok()).toBeTruthy();
  return { url, id };
}

/** "Make this version" at grade 4 on the Versions page; on the version once the assistant has measured it. */
async function makeGrade4(page: Page, id: string): Promise<void> {
  await page.getByLabel("At reading level grade").fill("4");
  await page.getByRole("button", { name: "Make this version" }).click();
  await expect(page).toHaveURL(/\/lessons\/[0-9a-f]{32}$/);
  expect(page.url()).not.toContain(id);
  await hydrated(page);
  await expect(lastReply(page)).toContainText("Measured again.");
}

test("a version at grade 4: made from the Versions page, rewritten and measured, listed on its core", async ({ page }) => {
  const { id } = await plantsLesson(page);
  await page.goto(`/lessons/${id}/versions`);
  await expect(page.getByText(/Reading level: grade \d+\.\d/)).toBeVisible();
  await makeGrade4(page, id);
  await expect(page.locator(".msg.trigger").last()).toContainText("Make a version: grade 4");
  await expect(lastReply(page)).toContainText("Within ±0.5");
  await expect(page.locator(".document-pane .reading-level")).toContainText(IN_BAND);

  await page.goto(`/lessons/${id}/versions`);
  const item = page.locator("ul.versions li");
  await expect(item).toHaveCount(1);
  await expect(item).toContainText("Plants (grade 4)");
  await expect(item).toContainText(/measured grade (3\.[5-9]|4\.[0-5])/);
  await item.getByRole("link").click();
  await page.getByRole("link", { name: "Versions" }).click();
  await expect(page.getByText("Version of Plants: grade 4")).toBeVisible();
});

test("an edit of the core is offered to its grade-4 version, and applied there", async ({ page }) => {
  const { url, id } = await plantsLesson(page);
  await page.goto(`/lessons/${id}/versions`);
  await makeGrade4(page, id);
  const version = page.url();
  await expect(page.locator(".document-pane .reading-level")).toContainText(IN_BAND);

  // The teacher changes a paragraph of the core in its XML.
  await page.goto(url);
  await hydrated(page);
  await page.getByRole("tab", { name: "XML" }).click();
  await page.getByLabel("Lesson XML").fill(LESSON.replace(`<p id="p2">${HARD}</p>`, `<p id="p2">Roots take in water from the soil.</p>`));
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("status")).toHaveText("Saved as version 3.");

  // The assistant carries it into the version, where it waits.
  await page.goto(`/lessons/${id}/versions`);
  const waiting = page.locator("ul.versions li a.waiting");
  await expect(async () => {
    await page.reload();
    await expect(waiting).toHaveText("1 change waits for you", { timeout: 1_000 });
  }).toPass({ timeout: 30_000 });
  await waiting.click();
  await expect(page).toHaveURL(version);
  await hydrated(page);
  const card = lastReply(page).locator(".proposal");
  await expect(card).toContainText("Waiting for your review");
  await expect(page.locator(".document-pane .lesson-view")).not.toContainText("Roots take in water");
  await card.getByRole("button", { name: "Apply" }).click();
  await expect(card).toContainText(/Applied as version \d+\./);
  await expect(page.locator(".document-pane .lesson-view")).toContainText("Roots take in water from the soil.");
});
