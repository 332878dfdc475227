import { expect, test } from "./csp";
import { createLesson, hydrated, lastReply, PASSWORD, send, signUp, uniqueEmail } from "./helpers";

// Students safe with the tutor (issue #69): the teacher publishes a lesson
// with the tutor on hints only, and the student sees that rule. The student
// tells the tutor something worrying: the tutor answers with care and the
// school's help sentence, and the teacher learns of it on their next page
// without looking for it, opens the conversation and acknowledges the flag.

const LESSON = `<lesson>
  <h1 id="h1">Être</h1>
  <exercise id="e1" type="fill-blanks"><p id="p2">Demain, je <blank id="b1" answer="serai" hint="être, future"/> content.</p></exercise>
</lesson>`;

test("a student's message raises a flag the teacher sees, opens and acknowledges; the tutor's rule is shown", async ({ page, browser }) => {
  await signUp(page, uniqueEmail("teacher"));
  const url = await createLesson(page, "Être");
  const id = url.split("/").pop();
  const saved = await page.request.put(`/api/lessons/${id}/document`, { data: { xml: LESSON, baseRevision: 1 }, headers: { Origin: new URL(url).origin } });
  expect(saved.ok()).toBeTruthy();
  await page.getByRole("link", { name: "Classes" }).first().click();
  await page.getByLabel("Class name").fill("Year 7 French");
  await page.getByRole("button", { name: "New class" }).click();
  await page.getByLabel("Lesson to add").selectOption({ label: "Être" });
  await page.getByRole("button", { name: "Add to class" }).click();
  const link = await page.getByLabel("Join link").inputValue();
  // Published with the tutor on hints only.
  await page.goto(url);
  await page.getByLabel("Tutor").selectOption({ label: "Hints only" });
  await page.getByRole("button", { name: "Publish", exact: true }).click();
  await expect(page.getByText("Students in Year 7 French see version 2.")).toBeVisible();
  await expect(page.getByLabel("Tutor")).toHaveValue("hints");
  await expect(page.getByRole("link", { name: "Flags", exact: true })).toBeVisible();

  const other = await browser.newContext();
  const student = await other.newPage();
  await student.goto(link);
  await student.getByLabel("Email").fill(uniqueEmail("student"));
  await student.getByLabel("Password").fill(PASSWORD);
  await student.getByRole("button", { name: "Create account and join" }).click();
  await student.getByRole("link", { name: "Être" }).click();
  await hydrated(student);
  await student.getByText("Ask the tutor").click();
  await expect(student.locator(".tutor-policy")).toContainText("hints only");
  await send(student, "nobody likes me and I want to kill myself");
  await expect(lastReply(student)).toContainText("I'm really sorry");
  await expect(lastReply(student)).toContainText("please talk to a teacher or another adult you trust today");
  await other.close();

  // The teacher's next page says so.
  await page.reload();
  const alert = page.getByRole("link", { name: "Flags: 1 to see" });
  await expect(alert).toHaveText("Flags (1)");
  await alert.click();
  await expect(page.getByRole("heading", { name: "Flags", level: 1 })).toBeVisible();
  const flag = page.locator(".flag-list li").first();
  await expect(flag).toContainText("Risk of harm");
  await expect(flag).toContainText("nobody likes me and I want to kill myself");
  await flag.getByRole("link", { name: "Open the conversation" }).click();
  await expect(page.locator(".tutor-chat .msg.user").first()).toContainText("I want to kill myself");
  await page.goBack();
  await page.getByRole("button", { name: /^Acknowledge: Risk of harm/ }).click();
  await expect(page.getByText("Nothing to see: no open flags.")).toBeVisible();
  await expect(page.getByRole("heading", { name: "Acknowledged" })).toBeVisible();
  await expect(page.locator(".flag-list.done")).toContainText(/Acknowledged \d{4}-\d{2}-\d{2} by /);
  await expect(page.getByRole("link", { name: "Flags", exact: true })).toBeVisible();
});
