import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, Page, test } from "./csp";
import { createLesson, editor, hydrated, signUp, uniqueEmail } from "./helpers";

const LESSON = `<lesson>
<h1>Past tense</h1>
<note>Keep the quiet group together today.</note>
<exercise type="fill-blanks" title="Irregular verbs"><p>Yesterday she <blank answer="ran" hint="run"/> to school.</p></exercise>
<exercise type="multiple-choice"><question><prompt>Which is right?</prompt><option correct="true">went</option><option>goed</option></question></exercise>
<exercise type="true-false"><statement answer="false">Swam is the present tense of swim.</statement></exercise>
<exercise type="sequencing"><item position="2">Then we ate lunch.</item><item position="1">First we woke up.</item></exercise>
<exercise type="short-answer"><question><prompt>Why do we learn verbs?</prompt><answer>To talk about the past.</answer></question></exercise>
<exercise type="writing"><prompt>Write about your weekend.</prompt><writing-area lines="6"/></exercise>
</lesson>`;

/** The text of a page printed to PDF by Chromium, as pdftotext reads it. */
async function printedText(page: Page): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), "margin-print-")), "sheet.pdf");
  await page.pdf({ path: file, format: "A4" });
  return execFileSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" });
}

async function open(page: Page, link: string): Promise<Page> {
  const [sheet] = await Promise.all([page.waitForEvent("popup"), page.getByRole("link", { name: link }).click()]);
  await sheet.waitForLoadState();
  return sheet;
}

test("a lesson prints as a worksheet without answers and as an answer key with them", async ({ page }) => {
  await signUp(page, uniqueEmail("print"));
  const url = await createLesson(page, "Past tense");
  const id = url.split("/").pop();
  const saved = await page.request.put(`/api/lessons/${id}/document`, {
    data: { xml: LESSON, baseRevision: 1 },
    headers: { Origin: new URL(url).origin },
  });
  expect(saved.ok()).toBeTruthy();
  await page.reload();
  await hydrated(page);

  const sheet = await open(page, "Print worksheet");
  await expect(sheet).toHaveTitle("Past tense · Worksheet · Margin");
  const worksheet = await printedText(sheet);
  for (const shown of ["Past tense", "Name:", "Date:", "1. Fill in the blanks: Irregular verbs", "Yesterday she", "(run)", "2. Multiple choice", "went", "goed", "True", "False", "4. Put in order", "First we woke up.", "6. Writing"]) {
    expect(worksheet, shown).toContain(shown);
  }
  for (const hidden of ["ran to school", "To talk about the past", "Keep the quiet group", "Print this page", "✔"]) {
    expect(worksheet, hidden).not.toContain(hidden);
  }

  const keyPage = await open(page, "Print answer key");
  const key = await printedText(keyPage);
  for (const shown of ["Answer key", "ran", "To talk about the past.", "Answers will vary."]) {
    expect(key, shown).toContain(shown);
  }
  expect(key).not.toContain("Keep the quiet group");
  // The sequence's numbers, in the boxes beside the items.
  expect(key).toMatch(/2\s+Then we ate lunch\./);
  expect(key).toMatch(/1\s+First we woke up\./);

  // Another teacher cannot print it.
  await page.context().clearCookies();
  await signUp(page, uniqueEmail("other"));
  await page.goto(`/lessons/${id}/print?key=1`);
  await expect(page.getByText("To talk about the past.")).toHaveCount(0);
});

test("a lesson downloads for Word, worksheet and key, and the worksheet imports back as the same lesson", async ({ page }) => {
  await signUp(page, uniqueEmail("word"));
  const url = await createLesson(page, "Past tense");
  const id = url.split("/").pop();
  expect((await page.request.put(`/api/lessons/${id}/document`, { data: { xml: LESSON, baseRevision: 1 }, headers: { Origin: new URL(url).origin } })).ok()).toBeTruthy();
  await page.reload();
  await hydrated(page);

  const [key] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Answer key for Word" }).click()]);
  expect(key.suggestedFilename()).toBe("Past tense (answer key).docx");
  const [worksheet] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Worksheet for Word" }).click()]);
  expect(worksheet.suggestedFilename()).toBe("Past tense (worksheet).docx");
  const file = (await worksheet.path())!;
  // A zip archive, as every .docx is.
  expect(readFileSync(file).subarray(0, 4).toString("latin1")).toBe("PK\x03\x04");

  await page.goto("/");
  await page.getByLabel("Import lesson").setInputFiles(file);
  await page.getByRole("button", { name: "Import", exact: true }).click();
  await expect(page).toHaveURL(/\/lessons\/[0-9a-f]{32}$/);
  expect(page.url()).not.toContain(id!);
  await expect(page.getByRole("heading", { name: "Past tense", level: 1 })).toBeVisible();
  // The exercise's title, in the field the editor shows it in once it has taken the page.
  await expect(editor(page).getByRole("textbox", { name: "Exercise title" }).first()).toHaveValue("Irregular verbs");
});
