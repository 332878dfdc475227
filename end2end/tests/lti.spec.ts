// Margin inside a school's LMS, in a real browser: a Margin server of its
// own (MARGIN_E2E_BIN, a fresh SQLite file) and the fake LMS (fake-lms.ts),
// which signs its launches with a real RSA key and records the scores it
// receives.
import { ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "./csp";
import { FakeLms, INSTRUCTOR, LEARNER } from "./fake-lms";
import { hydrated, PASSWORD, startMargin } from "./helpers";

const MARGIN = "http://127.0.0.1:3105";
const lms = new FakeLms();
let server: ChildProcess | undefined;

test.beforeAll(async () => {
  await lms.start(3106);
  const dir = join(__dirname, "..", "..", "target", "e2e", "lti");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  server = await startMargin(3105, `sqlite://${join(dir, "margin.db")}`);
});

test.afterAll(async () => {
  server?.kill();
  await lms.stop();
});

const VERBS = `<lesson><h1 id="h1">Être</h1><p id="p1">The verb to be.</p>
  <exercise id="e1" type="fill-blanks"><p id="p2">Demain, je <blank id="b1" answer="serai"/> content.</p></exercise>
  <exercise id="e2" type="true-false"><statement id="s1" answer="false">Être is regular.</statement></exercise></lesson>`;

test("a student opens the lesson from the LMS, and the score arrives there after Check answers", async ({ browser }) => {
  // The school's admin registers the LMS.
  const admin = await (await fetch(`${MARGIN}/api/auth/signup`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "head@lincoln.example.org", password: PASSWORD }),
  })).json();
  const registered = await fetch(`${MARGIN}/api/school/lti`, {
    method: "POST", headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" }, body: JSON.stringify(lms.registration()),
  });
  expect(registered.status).toBe(201);

  // The teacher opens Margin from the course: its class is made.
  const teacherContext = await browser.newContext();
  const teacher = await teacherContext.newPage();
  await teacher.goto(lms.launchUrl(MARGIN, { sub: "t-1", email: "ms.ng@lincoln.example.org", role: INSTRUCTOR }));
  await expect(teacher.getByRole("heading", { name: "Year 8 Science" })).toBeVisible();
  const session = (await teacherContext.cookies(MARGIN)).find((c) => c.name === "margin_session")!.value;
  const auth = { authorization: `Bearer ${session}`, "content-type": "application/json" };
  const lesson = await (await fetch(`${MARGIN}/api/lessons`, { method: "POST", headers: auth, body: JSON.stringify({ title: "Être" }) })).json();
  expect((await fetch(`${MARGIN}/api/lessons/${lesson.id}/document`, { method: "PUT", headers: auth, body: JSON.stringify({ xml: VERBS, baseRevision: lesson.revision ?? 1 }) })).status).toBe(200);
  // The teacher's link to the lesson adds it to the course's class; they publish it.
  await teacher.goto(lms.launchUrl(MARGIN, { sub: "t-1", email: "ms.ng@lincoln.example.org", role: INSTRUCTOR, lesson: lesson.id }));
  await expect(teacher).toHaveURL(new RegExp(`/lessons/${lesson.id}$`));
  expect((await fetch(`${MARGIN}/api/lessons/${lesson.id}/publish`, { method: "POST", headers: auth, body: "{}" })).status).toBe(200);

  // The student opens the assignment: the published lesson, with no other account.
  const student = await (await browser.newContext()).newPage();
  await student.goto(lms.launchUrl(MARGIN, { sub: "s-1", email: "sam@lincoln.example.org", role: LEARNER, lesson: lesson.id, lineItem: true }));
  await expect(student).toHaveURL(new RegExp(`/learn/lessons/${lesson.id}$`));
  await hydrated(student);
  await student.getByLabel("Blank").fill("serai");
  await student.locator("[data-id=s1]").getByLabel("True").check();
  await expect(student.locator(".sheet-status")).toHaveText("All answers saved.");
  await student.getByRole("button", { name: "Check answers" }).click();
  await expect(student.getByText("Score: 1 of 2 right")).toBeVisible();

  // The score arrives at the LMS.
  await expect.poll(() => lms.scores.length).toBe(1);
  expect(lms.scores[0]).toMatchObject({ userId: "s-1", scoreGiven: 1, scoreMaximum: 2, activityProgress: "Completed", gradingProgress: "FullyGraded" });
});

// After the test above, which registered the LMS.
test("a refused launch shows its sentence, in a browser already signed in too", async ({ browser }) => {
  // Signed in as a teacher (by the LMS), the same person launches as a learner: refused.
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(lms.launchUrl(MARGIN, { sub: "t-1", email: "ms.ng@lincoln.example.org", role: INSTRUCTOR }));
  await expect(page.getByRole("heading", { name: "Year 8 Science" })).toBeVisible();
  await page.goto(lms.launchUrl(MARGIN, { sub: "t-1", email: "ms.ng@lincoln.example.org", role: LEARNER }));
  await expect(page).toHaveURL(/\/refused\/lti$/);
  await expect(page.getByRole("alert")).toContainText("The launch from your LMS could not be checked");
  await context.close();
});
