/**
 * Exercises written in place: questions with the right option marked, a
 * blank made from selected words, a rubric as a table; a problem shown at
 * its field while the rest of the lesson saves.
 */
import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { createLesson, editable, editor, hydrated, signUp, uniqueEmail } from "./helpers";

async function xml(page: Page): Promise<string> {
  const id = new URL(page.url()).pathname.split("/").pop();
  const r = await page.request.get(`/api/lessons/${id}`);
  return (await r.json()).documentXml;
}

const box = (page: Page, name: string) => editor(page).getByRole("textbox", { name, exact: true });
const status = (page: Page) => editor(page).getByRole("status").first();

test("a teacher writes a multiple-choice question, a blank from selected words and a rubric, and after a reload it is all there, as the XML says", async ({ page }) => {
  await signUp(page, uniqueEmail("exercises"));
  await createLesson(page, "Water");
  await hydrated(page);
  await editor(page).waitFor();
  const keys = page.keyboard;

  // `/` in the empty paragraph, then a multiple-choice exercise in its place.
  await editable(page, "b2").click();
  await keys.press("/");
  await page.getByRole("combobox", { name: "Type of this paragraph" }).selectOption("multiple-choice");
  await expect(box(page, "Question 1")).toBeFocused();
  await keys.type("Which of these is a gas at room temperature?");
  // Until an option is written and one marked, the problem is at its field
  // and the exercise is kept here, not saved half-made.
  await expect(editor(page).locator(".field-error", { hasText: "Mark the right answer." })).toBeVisible();
  await expect(status(page)).toContainText("Saved, except an exercise with a problem");
  expect(await xml(page)).not.toContain("<exercise");
  await box(page, "Question 1, option 1").click();
  await keys.type("Oxygen");
  await box(page, "Question 1, option 2").click();
  await keys.type("Iron");
  await editor(page).getByRole("button", { name: "Add an option to question 1" }).click();
  await expect(box(page, "Question 1, option 3")).toBeFocused();
  await keys.type("Salt");
  // Marked by keyboard.
  await editor(page).getByRole("radio", { name: "Question 1, option 1 is right" }).focus();
  await keys.press("Space");
  await expect(editor(page).locator(".field-error")).toHaveCount(0);
  await expect(status(page)).toHaveText("Saved");
  let doc = await xml(page);
  expect(doc).toMatch(/<option id="opt-[a-z0-9]{5}-1" correct="true">Oxygen<\/option>\n\s*<option id="opt-[a-z0-9]{5}-2">Iron<\/option>\n\s*<option id="opt-[a-z0-9]{5}-3">Salt<\/option>/);

  // A fill-in exercise below it: a word selected by keyboard becomes a blank.
  await editor(page).getByRole("combobox", { name: "Add a block below" }).last().selectOption("fill-blanks");
  await expect(box(page, "Sentence 1")).toBeFocused();
  await keys.type("Water boils at 100 degrees.");
  await keys.press("Home");
  for (let i = 0; i < "Water boils at ".length; i++) await keys.press("ArrowRight");
  for (let i = 0; i < 3; i++) await keys.press("Shift+ArrowRight");
  await keys.press("Control+Alt+b");
  const blank = editor(page).getByRole("group", { name: "Blank “100”" });
  await expect(blank).toBeVisible();
  await expect(box(page, "Sentence 1").locator(".blank-chip")).toHaveText("100");
  await blank.getByLabel("Hint").fill("a number");
  await blank.getByLabel("Also accept").fill("one hundred");
  await expect(status(page)).toHaveText("Saved");
  doc = await xml(page);
  // The editor's ids carry its page's tag, so no other editor or the server makes the same one.
  expect(doc).toMatch(/<p id="p-([a-z0-9]{5})-1">Water boils at <blank id="bl-\1-1" answer="100" hint="a number" alts="one hundred"\/> degrees\.<\/p>/);

  // A writing task with a rubric, written as a table.
  await editor(page).getByRole("combobox", { name: "Add a block below" }).last().selectOption("writing");
  await expect(box(page, "Task")).toBeFocused();
  await keys.type("Describe the water cycle.");
  await editor(page).getByRole("button", { name: "Add a rubric" }).click();
  await editor(page).getByRole("textbox", { name: "Criterion 1", exact: true }).fill("Names each stage");
  await expect(editor(page).locator(".field-error", { hasText: "Say what an answer at this level does." })).toHaveCount(3);
  for (const [m, text] of [[1, "All four stages, in order."], [2, "Some stages."], [3, "None."]] as const) {
    await box(page, `Criterion 1, level ${m}`).click();
    await keys.type(text);
  }
  await editor(page).getByRole("checkbox", { name: "Students see this rubric" }).check();
  await expect(editor(page).locator(".field-error")).toHaveCount(0);
  await expect(status(page)).toHaveText("Saved");
  doc = await xml(page);
  expect(doc).toMatch(/<rubric id="rb-[a-z0-9]{5}-1" shared="true">\n\s*<criterion id="cr-[a-z0-9]{5}-1" name="Names each stage">\n\s*<level points="2">All four stages, in order.<\/level>/);

  // Reloaded: every part is back in its field, and the XML tab shows what was saved.
  await page.reload();
  await hydrated(page);
  await expect(box(page, "Question 1")).toHaveText("Which of these is a gas at room temperature?");
  await expect(editor(page).getByRole("radio", { name: "Question 1, option 1 is right" })).toBeChecked();
  await expect(box(page, "Sentence 1").locator(".blank-chip")).toHaveText("100");
  await expect(editor(page).getByRole("group", { name: "Blank “100”" }).getByLabel("Hint")).toHaveValue("a number");
  await expect(editor(page).getByRole("textbox", { name: "Criterion 1", exact: true })).toHaveValue("Names each stage");
  await page.getByRole("tab", { name: "XML" }).click();
  await expect(page.getByLabel("Lesson XML")).toHaveValue(doc);
});

test("items are put in order, statements marked true or false, and a blank goes back to its words", async ({ page }) => {
  await signUp(page, uniqueEmail("order"));
  await createLesson(page, "Seasons");
  await hydrated(page);
  await editor(page).waitFor();
  const keys = page.keyboard;
  await editable(page, "b2").click();
  await keys.press("/");
  await page.getByRole("combobox", { name: "Type of this paragraph" }).selectOption("sequencing");
  await expect(box(page, "Item 1")).toBeFocused();
  await keys.type("Summer");
  await box(page, "Item 2").click();
  await keys.type("Spring");
  // Spring comes first: its place is 1, and Summer takes its old place.
  await editor(page).getByRole("combobox", { name: "Item 2's place in the right order" }).selectOption("1");
  await expect(editor(page).getByRole("combobox", { name: "Item 1's place in the right order" })).toHaveValue("2");
  await expect(status(page)).toHaveText("Saved");
  expect(await xml(page)).toMatch(/<item id="it-[a-z0-9]{5}-1" position="2">Summer<\/item>\n\s*<item id="it-[a-z0-9]{5}-2" position="1">Spring<\/item>/);

  await editor(page).getByRole("combobox", { name: "Add a block below" }).last().selectOption("true-false");
  await expect(box(page, "Statement 1")).toBeFocused();
  await keys.type("Winter is the warmest season.");
  await editor(page).getByRole("combobox", { name: "Statement 1 is" }).selectOption("false");
  await expect(status(page)).toHaveText("Saved");
  expect(await xml(page)).toMatch(/<statement id="st-[a-z0-9]{5}-1" answer="false">Winter is the warmest season\.<\/statement>/);

  await editor(page).getByRole("combobox", { name: "Add a block below" }).last().selectOption("fill-blanks");
  await keys.type("Leaves fall in autumn.");
  await keys.press("ArrowLeft");
  for (let i = 0; i < "autumn".length; i++) await keys.press("Shift+ArrowLeft");
  await editor(page).getByRole("button", { name: "Make a blank from the words selected in sentence 1" }).click();
  await expect(box(page, "Sentence 1").locator(".blank-chip")).toHaveText("autumn");
  await editor(page).getByRole("button", { name: "Turn blank “autumn” back into words" }).click();
  await expect(box(page, "Sentence 1")).toHaveText("Leaves fall in autumn.");
  await expect(box(page, "Sentence 1").locator(".blank-chip")).toHaveCount(0);
  // With no blank the exercise is not right: said at the exercise, and kept back.
  await expect(editor(page).locator(".field-error", { hasText: "Make a blank" })).toBeVisible();
  // Ctrl+Z brings the blank back.
  await box(page, "Sentence 1").click();
  await keys.press("Control+z");
  await expect(box(page, "Sentence 1").locator(".blank-chip")).toHaveText("autumn");
  await expect(status(page)).toHaveText("Saved");
  expect(await xml(page)).toMatch(/Leaves fall in <blank id="bl-[a-z0-9]{5}-1" answer="autumn"\/>\.<\/p>/);
});

test("an exercise added before the exercises' part of the bundle has arrived takes the caret once its fields are drawn", async ({ page }) => {
  // The exercises' part (asked for once the editor is up) is held back
  // until the teacher has added an exercise.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let asked = false;
  await page.route(/split_exercise_view[^/]*\.wasm$/, async (route) => {
    asked = true;
    await held;
    await route.continue();
  });
  await signUp(page, uniqueEmail("caret"));
  await createLesson(page, "Rivers");
  await hydrated(page);
  await editor(page).waitFor();
  await expect.poll(() => asked).toBe(true);
  await editable(page, "b2").click();
  await page.keyboard.press("/");
  await page.getByRole("combobox", { name: "Type of this paragraph" }).selectOption("true-false");
  // The exercise's place is there; its fields are not yet.
  await expect(editor(page).locator(".block[data-exercise]")).toHaveCount(1);
  await expect(box(page, "Statement 1")).toHaveCount(0);
  release();
  await expect(box(page, "Statement 1")).toBeFocused();
  await page.keyboard.type("Rivers flow uphill.");
  await expect(box(page, "Statement 1")).toHaveText("Rivers flow uphill.");
});
