import { Page } from "@playwright/test";
import { expect, test } from "./csp";
import { createLesson, editable, editor, hydrated, lastReply, openLesson, partsInOrder, replies, send, signUp, uniqueEmail } from "./helpers";


/** Records, in order, every state of interest the page passes through. */
async function recordTimeline(page: Page) {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as any).__timeline = seen;
    // The task each state was first drawn in: changes drawn in one task
    // reach the screen together (the browser paints between tasks), though
    // this observer may hear them in two callbacks. A message to itself
    // starts the next number once the task that drew something is over.
    const tasks: Record<string, number> = {};
    (window as any).__tasks = tasks;
    let task = 0, ticking = false;
    const channel = new MessageChannel();
    channel.port1.onmessage = () => { task++; ticking = false; };
    const note = (s: string) => { if (!seen.includes(s)) { seen.push(s); tasks[s] = task; } };
    const stepsIn = (root: ParentNode) => root.querySelectorAll(".step");
    const check = (records: MutationRecord[] = []) => {
      if (!ticking) { ticking = true; channel.port2.postMessage(0); }
      // Steps added, changed or removed since the last call: several events
      // handled in one task (a step ending, then the reply folding its steps
      // away) reach this callback once, and a removed step's last state is
      // still on the element.
      // The same for the thinking line: on a busy machine it can come and
      // go between two calls, and it is noted in its place among the steps.
      const touched: Element[] = [];
      const gather = (n: Node) => {
        if (!(n instanceof Element)) return;
        touched.push(n);
        stepsIn(n).forEach((e) => touched.push(e));
      };
      for (const r of records) {
        r.addedNodes.forEach(gather);
        r.removedNodes.forEach(gather);
        if (r.type === "attributes") gather(r.target);
      }
      const noteStep = (el: Element) => {
        const label = el.querySelector(".step-label")?.textContent ?? "";
        const state = el.classList.contains("running") ? "running" : el.classList.contains("ok") ? "ok" : "failed";
        note(`step ${label} ${state}`);
      };
      // Changes drawn in one task are noted in the order they stand on the
      // page (removed ones first: they are the older state), not in the
      // order the browser recorded them: a step ending and the next one
      // starting, drawn together, read as they happened.
      const order = (a: Element, b: Element) =>
        a.isConnected !== b.isConnected ? (a.isConnected ? 1 : -1)
        : a.isConnected && a !== b ? (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1) : 0;
      touched.sort(order);
      for (const el of touched) {
        if (el.matches(".thinking") || el.querySelector(".thinking")) note("thinking");
        if (el.classList.contains("step")) noteStep(el);
      }
      Array.from(stepsIn(document)).forEach(noteStep);
      if (document.querySelector(".thinking")) note("thinking");
      if (document.querySelector(".document-pane .exercise")) note("lesson updated");
      if (document.querySelector(".reply.streaming")) note("streaming");
      if (document.querySelector(".steps-toggle")) note("folded");
    };
    new MutationObserver(check).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
}

const timeline = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).__timeline);
const drawnIn = (page: Page): Promise<Record<string, number>> => page.evaluate(() => (window as any).__tasks);

test.beforeEach(async ({ page }) => {
  page.on("dialog", (d) => { throw new Error(`unexpected dialog: ${d.message()}`); });
});

test("a greeting gets a friendly reply, no steps, and the lesson is unchanged", async ({ page }) => {
  await openLesson(page, "hello");
  await expect(page.getByRole("note")).toContainText("Offline demo.");
  await send(page, "test");
  await expect(page.locator(".msg.user .bubble")).toHaveText("test");
  await expect(lastReply(page)).toContainText("Hello! I'm here and ready to help with this lesson.");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  await expect(lastReply(page).locator(".tool-calls")).toHaveCount(0);
  await expect(editable(page, "b2")).toBeEmpty();
  await expect(page.locator(".document-pane .exercise")).toHaveCount(0);
});

test("a capability question gets a markdown list and no steps", async ({ page }) => {
  await openLesson(page, "caps");
  await send(page, "What types of exercises can you create?");
  await expect(lastReply(page).locator(".reply li")).toHaveCount(6);
  await expect(lastReply(page).locator(".reply strong").first()).toHaveText("Fill in the blanks");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  await expect(lastReply(page).locator(".tool-calls")).toHaveCount(0);
});

test("adding an exercise shows each step live, updates the lesson, then folds into Done (2 steps)", async ({ page }) => {
  const parts: string[] = [];
  page.on("requestfinished", (r) => parts.push(new URL(r.url()).pathname.split("/").pop() ?? ""));
  await openLesson(page, "fill");
  // The page settled first: the editor's part in place, and the steps' and
  // the exercises' parts (asked for once the page and the editor are live)
  // loaded. While a part's code is still
  // being fetched and compiled the page's one thread is busy, the reply's
  // events wait, and they are drawn together: what this test watches is how
  // a reply is drawn as its events come.
  await expect(editor(page)).toBeVisible();
  await expect.poll(() => parts.some((p) => p.startsWith("split_steps_view") && p.endsWith(".wasm"))).toBe(true);
  await expect.poll(() => parts.some((p) => p.startsWith("split_exercise_view") && p.endsWith(".wasm"))).toBe(true);
  await recordTimeline(page);
  await send(page, "Add a fill-in-the-blank exercise about French verbs");
  const toggle = lastReply(page).getByRole("button", { name: "Done (2 steps)" });
  await expect(toggle).toBeVisible();
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await expect(lastReply(page)).toContainText("I added a fill-in-the-blank exercise");
  // The lesson on screen changed before the reply finished.
  await expect(page.locator(".document-pane .exercise")).toContainText("Fill in the blanks");
  await expect(page.locator(".document-pane .exercise .blank-chip").first()).toHaveText("suis");

  const seen = await timeline(page);
  const at = (s: string) => { const i = seen.indexOf(s); expect(i, `${s} in ${JSON.stringify(seen)}`).toBeGreaterThanOrEqual(0); return i; };
  // Loading a skill is instant; the edit is shown running while the model writes it.
  expect(at("thinking")).toBeLessThan(at("step Checking fill-blanks rules ok"));
  expect(at("step Checking fill-blanks rules ok")).toBeLessThan(at("step Editing document running"));
  expect(at("step Editing document running")).toBeLessThan(at("step Editing document ok"));
  // The lesson changed on screen no later than the steps folded away: in the
  // same task at the latest (one paint shows both), never after.
  const drawn = await drawnIn(page);
  at("lesson updated");
  at("folded");
  expect(drawn["lesson updated"], JSON.stringify({ seen, drawn })).toBeLessThanOrEqual(drawn["folded"]);

  await expect(lastReply(page).locator(".step")).toHaveCount(0);
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await expect(lastReply(page).locator(".step-label")).toHaveText(["Checking fill-blanks rules", "Editing document"]);

  // The history panel has the agent's revision.
  await page.getByRole("tab", { name: "History" }).click();
  await expect(page.getByRole("list", { name: "Versions" }).getByRole("button").first()).toContainText("Assistant");

  // Everything is still there after a reload.
  await page.reload();
  await hydrated(page);
  await expect(lastReply(page).getByRole("button", { name: "Done (2 steps)" })).toBeVisible();
  await expect(lastReply(page)).toContainText("I added a fill-in-the-blank exercise");
});

test("a reply shows each group of steps where it happened, folded on its own, and the same after a reload", async ({ page }) => {
  await openLesson(page, "parts");
  await send(page, "Step by step please");
  await expect(lastReply(page)).toContainText("Done: two statements about the sun and the moon.");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  const order = () => partsInOrder(page);
  const expected = [
    "text: First I will check the rules for true-or-false exercises.",
    "steps: Done (1 step)",
    "text: Now I will add the exercise.",
    "steps: Done (1 step)",
    "text: Done: two statements about the sun and the moon.",
  ];
  await expect.poll(order).toEqual(expected);
  // Each group opens on its own.
  await lastReply(page).locator(".steps-toggle").nth(1).click();
  await expect(lastReply(page).locator(".step-label")).toHaveText(["Editing document"]);

  await page.reload();
  await hydrated(page);
  await expect.poll(order).toEqual(expected);
});

test("a vague request gets a clarifying question and no steps", async ({ page }) => {
  await openLesson(page, "vague");
  await send(page, "Add an exercise");
  await expect(lastReply(page)).toContainText("What kind of exercise would you like");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  await expect(lastReply(page).locator(".tool-calls")).toHaveCount(0);
});

test("Stop ends the reply, keeps what was written and gives the input back", async ({ page }) => {
  await openLesson(page, "stop");
  await send(page, "Hold on a second");
  await expect(lastReply(page)).toContainText("one moment");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeDisabled();
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(lastReply(page).getByText("Stopped.")).toBeVisible();
  await expect(lastReply(page)).toContainText("Thinking about this carefully, one moment");
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
});

test("each step is said to screen readers when it starts and when it ends", async ({ page }) => {
  await openLesson(page, "announce");
  const said = page.locator(".announcements p");
  await send(page, "Write and wait");
  // The skill was announced when its name came, ended, and the edit began
  // (it is still being written, so it has not ended).
  await expect(said).toHaveText(["Checking the rules…", "Checking fill-blanks rules: done", "Editing document…"]);
  await expect(lastReply(page).locator(".step.running .step-label")).toHaveText("Editing document");
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(said).toHaveText(["Checking the rules…", "Checking fill-blanks rules: done", "Editing document…", "Stopped."]);
});

test("a reload in the middle of a reply shows it finishing, with no text repeated", async ({ page }) => {
  await openLesson(page, "reload");
  await send(page, "Answer slowly please");
  await expect(lastReply(page)).toContainText("Here is a careful answer.");
  await page.reload();
  await hydrated(page);
  const full = "Here is a careful answer. ".repeat(12).trim();
  await expect(lastReply(page).locator(".reply")).toHaveText(full);
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  await expect(page.locator(".msg.user .bubble")).toHaveText(["Answer slowly please"]);
});

test("a provider error is shown with Retry, and Retry works", async ({ page }) => {
  await openLesson(page, "retry");
  await send(page, "Cause a provider error");
  const failed = lastReply(page).getByRole("alert");
  await expect(failed).toContainText("The AI provider is having trouble (503)");
  await expect(page.locator(".msg.user .bubble")).toHaveText(["Cause a provider error"]);
  await failed.getByRole("button", { name: "Retry" }).click();
  await expect(lastReply(page)).toContainText("The provider is back.");
  // Retry ran the same turn again: the question once, the failed reply replaced.
  await expect(page.locator(".msg.user .bubble")).toHaveText(["Cause a provider error"]);
  await expect(page.getByRole("alert")).toHaveCount(0);
  await page.reload();
  await hydrated(page);
  await expect(lastReply(page)).toContainText("The provider is back.");
  await expect(page.locator(".msg.user .bubble")).toHaveText(["Cause a provider error"]);
  await expect(page.getByRole("alert")).toHaveCount(0);
});

test("markup in a reply is shown inert", async ({ page }) => {
  await openLesson(page, "xss");
  await send(page, "Show me some unsafe markup");
  const reply = lastReply(page).locator(".reply");
  await expect(reply).toContainText("<img src=x onerror=alert(1)>");
  await expect(reply).toContainText("<script>alert(1)</script>");
  await expect(reply.locator("img, script")).toHaveCount(0);
  await expect(reply.locator('a[href^="javascript"], a[href^="data"]')).toHaveCount(0);
  const good = reply.getByRole("link", { name: "good link" });
  await expect(good).toHaveAttribute("target", "_blank");
  await expect(good).toHaveAttribute("rel", "noopener noreferrer");
  await expect(reply.getByRole("link", { name: "[image: pixel]" })).toBeVisible();
});

test("a suggestion chip sends its text; Shift+Enter adds a line", async ({ page }) => {
  await openLesson(page, "chips");
  await page.getByRole("button", { name: "Explain this lesson" }).click();
  await expect(lastReply(page)).toContainText("This lesson opens with a title");
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("first line");
  await box.press("Shift+Enter");
  await box.pressSequentially("second line");
  await expect(box).toHaveValue("first line\nsecond line");
  await expect(page.locator(".msg.user")).toHaveCount(1);
});

test("an unsaved XML draft is never saved over the assistant's edit", async ({ page }) => {
  await openLesson(page, "draft");
  await page.getByRole("tab", { name: "XML" }).click();
  const editor = page.getByLabel("Lesson XML");
  await editor.fill("<lesson><p>My own draft</p></lesson>");
  await send(page, "Add a fill-in-the-blank exercise about French verbs");
  await expect(lastReply(page).getByRole("button", { name: "Done (2 steps)" })).toBeVisible();
  await expect(editor).toHaveValue("<lesson><p>My own draft</p></lesson>");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Not saved" })).toContainText("changed since you opened it");
  await expect(editor).toHaveValue("<lesson><p>My own draft</p></lesson>");
  await page.getByRole("tab", { name: "Lesson" }).click();
  await expect(page.locator(".document-pane .exercise")).toContainText("Fill in the blanks");
});

test("a message sent while the chat is still opening is sent once it is open, and nothing is wiped", async ({ page }) => {
  // The lesson's chats answer only when the test says: the page is live and
  // takes typing before its first chat is open.
  let answer: () => void = () => {};
  const held = new Promise<void>((resolve) => { answer = resolve; });
  await page.route(/\/api\/lessons\/[0-9a-f]{32}\/chats$/, async (route) => {
    if (route.request().method() !== "GET") return route.continue();
    await held;
    await route.continue();
  });
  await signUp(page, uniqueEmail("early"));
  await createLesson(page, "Verbs");
  await hydrated(page);
  await send(page, "test");
  answer();
  await expect(lastReply(page)).toContainText("Hello! I'm here and ready to help with this lesson.");
  await expect(page.locator(".msg.user .bubble")).toHaveText(["test"]);
  await expect(page.getByRole("textbox", { name: "Message" })).toBeEnabled();
  // And it stays: the chat's history, read again, is the same conversation.
  await page.reload();
  await hydrated(page);
  await expect(page.locator(".msg.user .bubble")).toHaveText(["test"]);
  await expect(lastReply(page)).toContainText("Hello! I'm here");
});
