import { request as http } from "@playwright/test";
import { expect, test } from "./csp";
import { createLesson, hydrated, lastReply, PASSWORD, signUp, uniqueEmail } from "./helpers";

// A class of three answers a lesson; the teacher goes from the Results page
// to "Improve with these results", reads the evidence on the proposed
// change, and applies it. Then feedback: drafted for the class's open
// answers, one approved, one edited, one discarded, and each student sees
// exactly what their teacher approved.

const LESSON = `<lesson>
  <h1 id="h1">Être</h1>
  <p id="p1">The verb to be, in the future.</p>
  <exercise id="e1" type="fill-blanks"><p id="p2">Demain, je <blank id="b1" answer="serai"/> content.</p></exercise>
</lesson>`;

test("a class's answers become a reviewed revision: Results, Improve with these results, the evidence, Apply", async ({ page, baseURL }) => {
  await signUp(page, uniqueEmail("teacher"));
  const url = await createLesson(page, "Être");
  const id = url.split("/").pop();
  const origin = new URL(url).origin;
  const saved = await page.request.put(`/api/lessons/${id}/document`, { data: { xml: LESSON, baseRevision: 1 }, headers: { Origin: origin } });
  expect(saved.ok()).toBeTruthy();
  const made = await page.request.post("/api/classes", { data: { name: "Year 7 French" }, headers: { Origin: origin } });
  const klass = await made.json();
  expect((await page.request.put(`/api/classes/${klass.id}/lessons/${id}`, { data: {}, headers: { Origin: origin } })).ok()).toBeTruthy();
  expect((await page.request.post(`/api/lessons/${id}/publish`, { data: {}, headers: { Origin: origin } })).ok()).toBeTruthy();

  // Three students join with the code and answer, two of them "es".
  for (const answer of ["es", "es", "serai"]) {
    const student = await http.newContext({ baseURL });
    const signed = await student.post("/api/auth/signup", { data: { email: uniqueEmail("student"), password: PASSWORD, join: klass.joinCode } });
    expect(signed.status()).toBe(201);
    const token = (await signed.json()).token;
    const auth = { Authorization: `Bearer ${token}` };
    const put = await student.put(`/api/learn/lessons/${id}/answers`, { data: { seen: 0, answers: { b1: answer } }, headers: auth });
    expect(put.ok()).toBeTruthy();
    await student.dispose();
  }

  await page.goto(`/lessons/${id}/results`);
  await expect(page.getByRole("heading", { name: "Results: Être" })).toBeVisible();
  await expect(page.getByRole("row").filter({ hasText: "@school.test" })).toHaveCount(3);
  await page.getByRole("button", { name: "Improve with these results" }).click();

  // Back on the lesson, the reply reads the results and proposes a hint
  // with what in them it answers; nothing changes until Apply.
  await expect(page).toHaveURL(new RegExp(`/lessons/${id}$`));
  await hydrated(page);
  await expect(page.locator(".msg.trigger").last()).toContainText("Improve with these results");
  const card = lastReply(page).locator(".proposal");
  await expect(card.locator(".proposal-head")).toContainText("From your class's results: b1: 3 answered, 1 right; wrong: “es” ×2");
  await expect(page.locator(".document-pane")).not.toContainText("Hint from the results");
  await card.getByRole("button", { name: "Apply" }).click();
  await expect(page.locator(".document-pane")).toContainText("Hint from the results: check the verb's ending.");
  await expect(lastReply(page)).toContainText("I suggested a hint from the results for you to review.");
});

const OPEN = `<lesson>
  <h1 id="h1">Être</h1>
  <exercise id="e1" type="short-answer"><question id="q1"><prompt>Why learn être?</prompt>
    <rubric><criterion id="c1" name="Reason"><level points="2">A clear reason.</level><level points="1">A vague reason.</level><level points="0">None.</level></criterion></rubric></question></exercise>
</lesson>`;

test("drafted feedback: approve one, edit one, discard one; each student sees exactly what was approved", async ({ page, browser, baseURL }) => {
  await signUp(page, uniqueEmail("teacher"));
  const url = await createLesson(page, "Être");
  const id = url.split("/").pop();
  const origin = new URL(url).origin;
  expect((await page.request.put(`/api/lessons/${id}/document`, { data: { xml: OPEN, baseRevision: 1 }, headers: { Origin: origin } })).ok()).toBeTruthy();
  const klass = await (await page.request.post("/api/classes", { data: { name: "Year 7 French" }, headers: { Origin: origin } })).json();
  expect((await page.request.put(`/api/classes/${klass.id}/lessons/${id}`, { data: {}, headers: { Origin: origin } })).ok()).toBeTruthy();
  expect((await page.request.post(`/api/lessons/${id}/publish`, { data: {}, headers: { Origin: origin } })).ok()).toBeTruthy();

  const students: { email: string; token: string }[] = [];
  for (const answer of ["Because it is everywhere.", "It is useful.", "No idea."]) {
    const student = await http.newContext({ baseURL });
    const email = uniqueEmail("student");
    const signed = await student.post("/api/auth/signup", { data: { email, password: PASSWORD, join: klass.joinCode } });
    const token = (await signed.json()).token;
    expect((await student.put(`/api/learn/lessons/${id}/answers`, { data: { seen: 0, answers: { q1: answer } }, headers: { Authorization: `Bearer ${token}` } })).ok()).toBeTruthy();
    await student.dispose();
    students.push({ email, token });
  }

  await page.goto(`/lessons/${id}/results`);
  await page.getByRole("button", { name: "Draft feedback" }).click();
  await expect(page).toHaveURL(new RegExp(`/lessons/${id}$`));
  await hydrated(page);
  await expect(lastReply(page)).toContainText("The drafts wait for you on the Results page.");

  await page.goto(`/lessons/${id}/results`);
  await expect(page.getByRole("heading", { name: "3 drafts to review" })).toBeVisible();
  const draft = (n: number) => page.locator("li.draft").filter({ hasText: students[n].email });
  await expect(draft(0).getByRole("textbox")).toHaveValue(/Add a second reason/);
  await draft(0).getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("heading", { name: "2 drafts to review" })).toBeVisible();
  await draft(1).getByRole("textbox").fill("A good start: now say why it is useful.");
  await draft(1).getByRole("spinbutton").fill("1");
  await draft(1).getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("heading", { name: "1 draft to review" })).toBeVisible();
  await draft(2).getByRole("button", { name: "Discard" }).click();
  await expect(page.locator("li.draft")).toHaveCount(0);

  // The first student, on their page: the drafted words, the points, a notice.
  const context = await browser.newContext();
  await context.addCookies([{ name: "margin_session", value: students[0].token, url: origin }]);
  const first = await context.newPage();
  await first.goto(`/learn/lessons/${id}`);
  await expect(first.locator(".feedback-notice")).toContainText("Your teacher left feedback on one of your answers.");
  await expect(first.locator(".feedback")).toContainText("Add a second reason.");
  await expect(first.locator(".feedback .points")).toHaveText("1 of 2 points");
  await context.close();
  // The second sees the teacher's words; the third nothing.
  const sheet = async (n: number) => {
    const api = await http.newContext({ baseURL });
    const view = await (await api.get(`/api/learn/lessons/${id}`, { headers: { Authorization: `Bearer ${students[n].token}` } })).json();
    await api.dispose();
    return view.html as string;
  };
  const second = await sheet(1);
  expect(second).toContain("A good start: now say why it is useful.");
  expect(second).toContain("1 of 2 points");
  expect(second).not.toContain("second reason");
  const third = await sheet(2);
  expect(third).not.toContain("Feedback from your teacher");
});
