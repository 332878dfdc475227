import { readFileSync } from "node:fs";
import { expect, test } from "./csp";
import { createLesson, editor, hydrated, signUp, uniqueEmail } from "./helpers";

const LESSON = `<lesson>
<h1>Past tense</h1>
<p>Verbs change in the past.</p>
<note>Keep the quiet group together today.</note>
<exercise type="fill-blanks" title="Irregular verbs"><p>Yesterday she <blank answer="ran" hint="run"/> to school.</p></exercise>
<exercise type="multiple-choice"><question><prompt>Which is right?</prompt><option correct="true">went</option><option>goed</option></question></exercise>
<exercise type="sequencing"><item position="2">Then we ate lunch.</item><item position="1">First we woke up.</item></exercise>
</lesson>`;

/** A classic quiz as Canvas exports it: one question Margin has, one it has not. */
const CANVAS_QUIZ = `<?xml version="1.0" encoding="UTF-8"?>
<questestinterop xmlns="http://www.imsglobal.org/xsd/ims_qtiasiv1p2"><assessment ident="a1" title="Planets quiz"><section ident="root_section">
<item ident="i1" title="Red planet"><itemmetadata><qtimetadata><qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>multiple_choice_question</fieldentry></qtimetadatafield></qtimetadata></itemmetadata>
<presentation><material><mattext texttype="text/html">&lt;p&gt;Which planet is red?&lt;/p&gt;</mattext></material>
<response_lid ident="response1" rcardinality="Single"><render_choice>
<response_label ident="a"><material><mattext>Venus</mattext></material></response_label>
<response_label ident="b"><material><mattext>Mars</mattext></material></response_label></render_choice></response_lid></presentation>
<resprocessing><respcondition continue="No"><conditionvar><varequal respident="response1">b</varequal></conditionvar><setvar action="Set" varname="SCORE">100</setvar></respcondition></resprocessing></item>
<item ident="i2" title="Moons"><itemmetadata><qtimetadata><qtimetadatafield><fieldlabel>question_type</fieldlabel><fieldentry>matching_question</fieldentry></qtimetadatafield></qtimetadata></itemmetadata><presentation/></item>
</section></assessment></questestinterop>`;

test("a lesson downloads as a Common Cartridge and a QTI package, and the package imports back", async ({ page }) => {
  await signUp(page, uniqueEmail("lms"));
  const url = await createLesson(page, "Past tense");
  const id = url.split("/").pop();
  expect((await page.request.put(`/api/lessons/${id}/document`, { data: { xml: LESSON, baseRevision: 1 }, headers: { Origin: new URL(url).origin } })).ok()).toBeTruthy();
  await page.reload();
  await hydrated(page);

  const [cartridge] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Common Cartridge" }).click()]);
  expect(cartridge.suggestedFilename()).toBe("Past tense.imscc");
  const cc = readFileSync((await cartridge.path())!);
  expect(cc.subarray(0, 4).toString("latin1")).toBe("PK\x03\x04");
  expect(cc.includes("imsmanifest.xml")).toBeTruthy();

  const [qti] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "QTI package" }).click()]);
  expect(qti.suggestedFilename()).toBe("Past tense (QTI).zip");
  const file = (await qti.path())!;

  await page.goto("/");
  await page.getByLabel("Import lesson").setInputFiles({ name: "Past tense (QTI).zip", mimeType: "application/zip", buffer: readFileSync(file) });
  await page.getByRole("button", { name: "Import", exact: true }).click();
  await expect(page).toHaveURL(/\/lessons\/[0-9a-f]{32}$/);
  expect(page.url()).not.toContain(id!);
  await expect(page.getByRole("heading", { name: "Past tense", level: 1 })).toBeVisible();
  const view = page.locator(".document-pane .lesson-view");
  // The exercise's title, in the field the editor shows it in once it has taken the page.
  await expect(editor(page).getByRole("textbox", { name: "Exercise title" }).first()).toHaveValue("Irregular verbs");
  await expect(view).toContainText("First we woke up.");
  // The exercises came back; the reading text and the note stay in Margin's own lesson.
  await expect(view).not.toContainText("Verbs change in the past.");
});

test("a Canvas quiz comes in as a lesson, and the list says what could not", async ({ page }) => {
  await signUp(page, uniqueEmail("canvas"));
  await page.goto("/");
  await page.getByLabel("Import lesson").setInputFiles({ name: "planets.xml", mimeType: "application/xml", buffer: Buffer.from(CANVAS_QUIZ) });
  await page.getByRole("button", { name: "Import", exact: true }).click();
  const report = page.getByRole("status").filter({ hasText: "was imported as" });
  await expect(report).toContainText("“planets.xml” was imported as Planets quiz. These parts could not be brought in:");
  await expect(report.getByRole("listitem")).toHaveText(["“Moons”: a matching question (matching_question) has no exercise like it in Margin."]);
  await report.getByRole("link", { name: "Planets quiz" }).click();
  await expect(page.getByRole("heading", { name: "Planets quiz", level: 1 })).toBeVisible();
  await expect(page.locator(".document-pane .lesson-view")).toContainText("Which planet is red?");
});
