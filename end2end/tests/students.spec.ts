import { expect, test } from "./csp";
import { createLesson, hydrated, lastReply, PASSWORD, send, signUp, uniqueEmail } from "./helpers";

// A teacher hands a lesson to a class; a student joins with the link in a
// second browser, answers every kind of exercise, checks the answers, keeps
// them over a reload and gets a hint from the tutor; the teacher sees the
// result and the tutor chat.

const LESSON = `<lesson>
  <h1 id="h1">Être</h1>
  <p id="p1">The verb to be.</p>
  <note id="n1">Secret: spend ten minutes here.</note>
  <exercise id="e1" type="fill-blanks"><p id="p2">Demain, je <blank id="b1" answer="serai" hint="être, future"/> content.</p></exercise>
  <exercise id="e2" type="multiple-choice"><question id="q1"><prompt>Tu …</prompt><option id="o1">suis</option><option id="o2" correct="true">es</option></question>
    <question id="q2" multiple="true"><prompt>Forms of être</prompt><option id="o3" correct="true">sommes</option><option id="o4" correct="true">êtes</option><option id="o5">avons</option></question></exercise>
  <exercise id="e3" type="true-false"><statement id="s1" answer="false">Être is regular.</statement></exercise>
  <exercise id="e4" type="sequencing"><item id="i1" position="2">tu es</item><item id="i2" position="1">je suis</item><item id="i3" position="3">il est</item></exercise>
  <exercise id="e5" type="short-answer"><question id="q3"><prompt>Why learn être?</prompt><answer>Model answer kept back</answer></question></exercise>
  <exercise id="e6" type="writing"><prompt>Describe yourself.</prompt><writing-area id="w1"/></exercise>
</lesson>`;

test("a class gets a lesson, a student answers it with the tutor's help, the teacher sees how it went", async ({ page, browser }) => {
  // The teacher: a lesson with every kind of exercise, a class, the lesson published to it.
  await signUp(page, uniqueEmail("teacher"));
  const url = await createLesson(page, "Être");
  const id = url.split("/").pop();
  const saved = await page.request.put(`/api/lessons/${id}/document`, { data: { xml: LESSON, baseRevision: 1 }, headers: { Origin: new URL(url).origin } });
  expect(saved.ok()).toBeTruthy();
  await page.getByRole("link", { name: "Classes" }).first().click();
  await page.getByLabel("Class name").fill("Year 7 French");
  await page.getByRole("button", { name: "New class" }).click();
  await expect(page.getByRole("heading", { name: "Year 7 French", level: 1 })).toBeVisible();
  await page.getByLabel("Lesson to add").selectOption({ label: "Être" });
  await page.getByRole("button", { name: "Add to class" }).click();
  await expect(page.getByText("Not published")).toBeVisible();
  const link = await page.getByLabel("Join link").inputValue();
  expect(link).toMatch(/\/join\/[A-Z2-9]{8}$/);
  await page.goto(url);
  await page.getByRole("button", { name: "Publish", exact: true }).click();
  await expect(page.getByText("Students in Year 7 French see version 2.")).toBeVisible();

  // The student, in a browser of their own, joins through the link.
  const other = await browser.newContext();
  const student = await other.newPage();
  await student.goto(link);
  await expect(student.getByRole("heading", { name: "Join Year 7 French" })).toBeVisible();
  await student.getByLabel("Email").fill(uniqueEmail("student"));
  await student.getByLabel("Password").fill(PASSWORD);
  await student.getByRole("button", { name: "Create account and join" }).click();
  await expect(student.getByRole("heading", { name: "My classes" })).toBeVisible();
  await student.getByRole("link", { name: "Être" }).click();
  await hydrated(student);
  // No key and no note anywhere in the page.
  const html = await student.content();
  for (const hidden of ["Secret", "serai", "Model answer", "correct", "position="]) expect(html, hidden).not.toContain(hidden);

  // Every kind answered; the sheet saves itself as it changes.
  const status = student.locator(".sheet-status");
  await student.getByLabel("Blank").fill("serai");
  await expect(status).toHaveText("All answers saved.");
  await student.locator("[data-id=q1]").getByLabel("suis").check();
  await student.locator("[data-id=q2]").getByLabel("sommes").check();
  await student.locator("[data-id=q2]").getByLabel("êtes").check();
  await student.locator("[data-id=s1]").getByLabel("False").check();
  // "je suis" goes first, with the keyboard.
  const sequence = student.locator("ol.sequence li");
  await student.locator("[data-id=i2]").getByRole("button", { name: "Move up" }).focus();
  await student.keyboard.press("Enter");
  await expect(sequence.first()).toContainText("je suis");
  await student.getByLabel("Your answer").fill("Because it is everywhere.");
  await student.getByLabel("Your writing").fill("I am tall and curious.");
  await expect(status).toHaveText("All answers saved.");
  await student.getByRole("button", { name: "Check answers" }).click();
  await expect(student.getByText("Score: 4 of 5 right")).toBeVisible();
  await expect(student.locator("[data-id=q1] .mark.wrong")).toHaveText("✗ Not right yet");
  await expect(student.locator(".mark.right")).toHaveCount(4);
  // Kept over a reload.
  await student.reload();
  await hydrated(student);
  await expect(student.getByLabel("Blank")).toHaveValue("serai");
  await expect(student.getByLabel("Your writing")).toHaveValue("I am tall and curious.");
  await expect(sequence.first()).toContainText("je suis");
  await expect(student.locator("[data-id=s1]").getByLabel("False")).toBeChecked();

  // The tutor gives a hint, not the answer.
  await student.getByText("Ask the tutor").click();
  await expect(student.getByText("Hi! I'm your tutor.")).toBeVisible();
  // Nothing meant for the teacher or whoever runs the server: the demo is
  // said in a student's words, the box asks about the lesson, no export.
  await expect(student.locator(".demo-banner")).toContainText("examples, not written by an AI");
  await expect(student.locator(".chat-pane")).not.toContainText("AI_API_KEY");
  await expect(student.getByRole("textbox", { name: "Message" })).toHaveAttribute("placeholder", "Ask about this lesson…");
  await expect(student.getByRole("link", { name: /Export this chat/ })).toHaveCount(0);
  await student.getByRole("button", { name: "Help me with this exercise" }).click();
  await expect(lastReply(student)).toContainText("Here is a hint for the first gap: think about “être, future”.");
  await expect(lastReply(student)).not.toContainText("serai");
  await send(student, "Is my answer right?");
  await expect(lastReply(student)).toContainText("Yes, your answer to the first gap is right.");
  await other.close();

  // The teacher sees the result and reads the tutor chat.
  await page.getByRole("link", { name: "Results" }).click();
  await expect(page.getByRole("heading", { name: "Results: Être" })).toBeVisible();
  const row = page.getByRole("row").filter({ hasText: "@school.test" });
  await expect(row).toContainText("7 of 7");
  await expect(row).toContainText("4 of 5 right");
  await row.getByRole("link").click();
  await expect(page.getByText("Chats with the tutor")).toBeVisible();
  await expect(page.locator(".tutor-chat .msg.user").first()).toContainText("Help me with this exercise");
  await expect(page.locator(".tutor-chat .msg.assistant").first()).toContainText("être, future");
});
