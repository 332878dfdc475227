import { readFileSync } from "node:fs";
import { expect, test } from "./csp";
import { createLesson, hydrated, signUp, uniqueEmail } from "./helpers";

const list = (page: import("@playwright/test").Page) => page.locator(".lesson-list li > a");

test("lessons can be searched and sorted, duplicated and downloaded", async ({ page }) => {
  await signUp(page, uniqueEmail("library"));
  for (const title of ["Volcanoes", "algebra basics", "Birds of prey"]) await createLesson(page, title);
  await page.goto("/");
  await expect(list(page)).toHaveText(["Birds of prey", "algebra basics", "Volcanoes"]);

  await page.getByLabel("Sort by").selectOption("title");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(list(page)).toHaveText(["algebra basics", "Birds of prey", "Volcanoes"]);

  await page.getByRole("searchbox", { name: "Search lessons" }).fill("BIRDS");
  await page.getByRole("searchbox", { name: "Search lessons" }).press("Enter");
  await expect(list(page)).toHaveText(["Birds of prey"]);
  await page.getByRole("searchbox", { name: "Search lessons" }).fill("nothing like this");
  await page.getByRole("searchbox", { name: "Search lessons" }).press("Enter");
  await expect(page.getByText("No lessons match “nothing like this”.")).toBeVisible();

  await page.goto("/");
  const download = page.waitForEvent("download");
  await page.getByRole("link", { name: "Download XML of Volcanoes" }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe("Volcanoes.xml");
  const xml = readFileSync(await file.path(), "utf8");
  expect(xml).toContain("<lesson>");
  expect(xml).toContain("Volcanoes");

  await page.getByRole("button", { name: "Duplicate Volcanoes" }).click();
  await expect(page).toHaveURL(/\/lessons\/[0-9a-f]{32}$/);
  await page.goto("/");
  await expect(list(page)).toHaveText(["Copy of Volcanoes", "Birds of prey", "algebra basics", "Volcanoes"]);
});

test("a deleted lesson goes to the Trash, Undo and Restore bring it back, Delete forever does not", async ({ page }) => {
  await signUp(page, uniqueEmail("trash"));
  await createLesson(page, "Fractions");
  await createLesson(page, "Decimals");
  await page.goto("/");

  await page.getByRole("button", { name: "Delete Fractions" }).click();
  await expect(page.getByRole("status")).toContainText("The lesson is in the Trash");
  await expect(list(page)).toHaveText(["Decimals"]);
  await page.getByRole("button", { name: "Undo" }).click();
  await expect(page.getByRole("heading", { name: "Fractions", level: 1 })).toBeVisible();

  await page.goto("/");
  await page.getByRole("button", { name: "Delete Fractions" }).click();
  await page.getByRole("button", { name: "Delete Decimals" }).click();
  // Exact: the top bar links the account by its email, which here contains "trash".
  await page.getByRole("link", { name: "Trash", exact: true }).click();
  await expect(page.locator(".trashed-title")).toHaveText(["Decimals", "Fractions"]);
  await page.getByRole("button", { name: "Restore Fractions" }).click();
  await expect(page.getByRole("heading", { name: "Fractions", level: 1 })).toBeVisible();

  await page.goto("/trash");
  await page.getByRole("button", { name: "Delete Decimals forever" }).click();
  await expect(page.getByText("The Trash is empty.")).toBeVisible();
  await page.goto("/");
  await expect(list(page)).toHaveText(["Fractions"]);
});

test("a lesson file is imported, and a file with problems lists each with its line and creates nothing", async ({ page }) => {
  await signUp(page, uniqueEmail("import"));
  await page.getByLabel("Import lesson").setInputFiles({
    name: "broken.xml",
    mimeType: "application/xml",
    buffer: Buffer.from("<lesson>\n<h1>Broken</h1>\n<p>never closed\n</lesson>\n"),
  });
  await page.getByRole("button", { name: "Import", exact: true }).click();
  const problems = page.getByRole("alert");
  await expect(problems).toContainText("“broken.xml” was not imported");
  await expect(problems.locator("li").first()).toContainText(/^Line \d+, column \d+/);
  await expect(page.getByText("No lessons yet.")).toBeVisible();

  await page.getByLabel("Import lesson").setInputFiles({
    name: "tides.xml",
    mimeType: "application/xml",
    buffer: Buffer.from("<lesson><h1>Tides</h1><p>The moon pulls the sea.</p></lesson>"),
  });
  await page.getByRole("button", { name: "Import", exact: true }).click();
  await expect(page).toHaveURL(/\/lessons\/[0-9a-f]{32}$/);
  await expect(page.getByRole("heading", { name: "Tides", level: 1 })).toBeVisible();
  await page.goto("/");
  await expect(list(page)).toHaveText(["Tides"]);
});

test("the title on the lesson page is renamed with Enter, kept after a reload, and Escape puts it back", async ({ page }) => {
  await signUp(page, uniqueEmail("rename"));
  const url = await createLesson(page, "Volcanos");
  await hydrated(page);
  const title = page.getByRole("textbox", { name: "Lesson title" });
  await expect(title).toHaveValue("Volcanos");
  await title.fill("Volcanoes of Iceland");
  await title.press("Enter");
  await expect(page).toHaveTitle("Volcanoes of Iceland · Margin");
  await page.reload();
  await hydrated(page);
  await expect(title).toHaveValue("Volcanoes of Iceland");
  await page.goto("/");
  await expect(list(page)).toHaveText(["Volcanoes of Iceland"]);

  // Escape puts back the saved title; nothing is saved.
  await page.goto(url);
  await hydrated(page);
  await title.fill("Something else");
  await title.press("Escape");
  await expect(title).toHaveValue("Volcanoes of Iceland");
  // A blank title is refused with the reason, and the field keeps what was typed.
  await title.fill("   ");
  await title.press("Enter");
  await expect(page.locator(".doc-head").getByRole("alert")).toContainText("title");
  await page.reload();
  await hydrated(page);
  await expect(title).toHaveValue("Volcanoes of Iceland");
});
